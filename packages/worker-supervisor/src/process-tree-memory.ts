import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';

const STATUS_BUFFER = Buffer.alloc(16 * 1024);
/** Descendants are looked for at most this often (a /proc scan costs ~25 µs per process on this kind of VM). */
const MIN_DISCOVERY_INTERVAL_MS = 100;
/** A scan may take at most this share of the time between scans. */
const MAX_DISCOVERY_SHARE = 0.02;

/** Whether this system has /proc with per-process status files (Linux). */
export function procAvailable(): boolean {
  return existsSync(`/proc/${process.pid}/status`);
}

/** Whether the kernel lists each task's children (CONFIG_PROC_CHILDREN), which is far cheaper than a scan. */
const childrenFiles = existsSync(`/proc/${process.pid}/task/${process.pid}/children`);

/**
 * Bytes per memory page, for reading resident memory from `/proc/<pid>/statm` (its second field, the same count as
 * status's VmRSS): told once from this process's own two files, undefined where they do not agree on a page size
 * (then status is read). Read lazily: the server's start-up does not pay for it.
 */
let pageBytes: number | null | undefined = null;

function statmPageBytes(): number | undefined {
  if (pageBytes !== null) return pageBytes;
  pageBytes = undefined;
  try {
    const ratio = statusResidentBytes(readFileSync('/proc/self/status', 'latin1')) / statmResidentPages(readFileSync('/proc/self/statm', 'latin1'));
    const size = 2 ** Math.round(Math.log2(ratio));
    // The two reads are a moment apart: a page size is a power of two, so a small drift still rounds to it.
    if (Number.isFinite(size) && size >= 4096 && size <= 2 ** 21 && Math.abs(ratio / size - 1) < 0.2) pageBytes = size;
  } catch {
    // no /proc/self: status is read instead (and procAvailable() is false anyway)
  }
  return pageBytes;
}

/** Opens the file that says how much of `pid` is resident, or throws. */
function openResident(pid: number): number {
  return openSync(`/proc/${pid}/${statmPageBytes() === undefined ? 'status' : 'statm'}`, 'r');
}

/**
 * Resident memory (VmRSS) of one process and of the processes it started, read from /proc. The root's statm file
 * (status where the page size cannot be told) stays open and is re-read with pread (~3 µs; status costs ~14 µs, as
 * the kernel formats all its fields), and so do the descendants'; an open /proc file belongs to its
 * process, so a reused pid never answers for it. Descendants are found every {@link MIN_DISCOVERY_INTERVAL_MS} or
 * more: through `/proc/<pid>/task/<tid>/children` where the kernel has it, else through a scan of /proc whose
 * interval grows with its cost. A forked child's pages shared with the worker count twice (RSS, not PSS).
 */
export class ProcessTreeMemory {
  /** The root process. */
  readonly rootPid: number;
  private rootFd: number | undefined;
  private readonly descendants = new Map<number, number>();
  private nextDiscoveryAt = 0;

  constructor(rootPid: number) {
    this.rootPid = rootPid;
    try {
      this.rootFd = openResident(rootPid);
    } catch {
      this.rootFd = undefined;
    }
  }

  /** Whether the root is still measured (false once it has exited or could not be opened). */
  get open(): boolean {
    return this.rootFd !== undefined;
  }

  /**
   * Bytes resident in the tree now, or undefined once the root is gone. With `discover`, looks for new
   * descendants first when that is due.
   */
  sample(discover = true): number | undefined {
    if (this.rootFd === undefined) return undefined;
    const root = readResidentBytes(this.rootFd);
    if (root === undefined) {
      this.close();
      return undefined;
    }
    if (discover && performance.now() >= this.nextDiscoveryAt) this.discover();
    let total = root;
    for (const [pid, fd] of this.descendants) {
      const bytes = readResidentBytes(fd);
      if (bytes === undefined) {
        closeQuietly(fd);
        this.descendants.delete(pid);
      } else {
        total += bytes;
      }
    }
    return total;
  }

  /** Closes every open /proc file. */
  close(): void {
    if (this.rootFd !== undefined) closeQuietly(this.rootFd);
    this.rootFd = undefined;
    for (const fd of this.descendants.values()) closeQuietly(fd);
    this.descendants.clear();
  }

  private discover(): void {
    const startedAt = performance.now();
    const found = childrenFiles ? descendantsFromChildrenFiles(this.rootPid) : descendantsFromScan(this.rootPid);
    for (const [pid, fd] of this.descendants) {
      if (!found.has(pid)) {
        closeQuietly(fd);
        this.descendants.delete(pid);
      }
    }
    for (const pid of found) {
      if (this.descendants.has(pid)) continue;
      try {
        this.descendants.set(pid, openResident(pid));
      } catch {
        // exited in between
      }
    }
    const cost = performance.now() - startedAt;
    this.nextDiscoveryAt = performance.now() + Math.max(MIN_DISCOVERY_INTERVAL_MS, cost / MAX_DISCOVERY_SHARE);
  }
}

/**
 * Resident bytes of an open {@link openResident} file; undefined when the process is gone (0 for a zombie, whose
 * statm reads all zeros and whose status has no VmRSS).
 */
function readResidentBytes(fd: number): number | undefined {
  let length: number;
  try {
    length = readSync(fd, STATUS_BUFFER, 0, STATUS_BUFFER.length, 0);
  } catch {
    return undefined;
  }
  const text = STATUS_BUFFER.toString('latin1', 0, length);
  if (pageBytes === null || pageBytes === undefined) return statusResidentBytes(text);
  const pages = statmResidentPages(text);
  return Number.isFinite(pages) ? pages * pageBytes : 0;
}

/** VmRSS of a /proc/<pid>/status text, in bytes; 0 when it has none (a zombie). */
function statusResidentBytes(text: string): number {
  const at = text.indexOf('VmRSS:');
  if (at < 0) return 0;
  const kilobytes = Number.parseInt(text.slice(at + 6, text.indexOf('\n', at)).trim(), 10);
  return Number.isFinite(kilobytes) ? kilobytes * 1024 : 0;
}

/** The resident field of a /proc/<pid>/statm text ("size resident shared text lib data dt", in pages); NaN if unreadable. */
function statmResidentPages(text: string): number {
  const start = text.indexOf(' ') + 1;
  return Number.parseInt(text.slice(start, text.indexOf(' ', start)), 10);
}

function descendantsFromChildrenFiles(rootPid: number): Set<number> {
  const found = new Set<number>();
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let text: string;
      try {
        text = readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const word of text.split(' ')) {
        const child = Number(word);
        if (word.length > 0 && Number.isInteger(child) && !found.has(child)) {
          found.add(child);
          queue.push(child);
        }
      }
    }
  }
  return found;
}

function descendantsFromScan(rootPid: number): Set<number> {
  const children = new Map<number, number[]>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return new Set();
  }
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(fields[1]);
    const list = children.get(parent);
    if (list) list.push(Number(name));
    else children.set(parent, [Number(name)]);
  }
  const found = new Set<number>();
  const queue = [rootPid];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (found.has(child)) continue;
      found.add(child);
      queue.push(child);
    }
  }
  return found;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
