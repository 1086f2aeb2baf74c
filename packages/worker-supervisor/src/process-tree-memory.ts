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

/** One process below the root: its open resident file, its last read, and whether it is the worker's or below it. */
interface Member {
  fd: number;
  bytes: number;
  /** The worker itself or one of its descendants: read fresh on every sample. */
  worker: boolean;
}

/**
 * Resident memory (VmRSS) of one process and of the processes it started, read from /proc. The root's statm file
 * (status where the page size cannot be told) stays open and is re-read with pread (~3 µs; status costs ~14 µs, as
 * the kernel formats all its fields), and so do the descendants'; an open /proc file belongs to its
 * process, so a reused pid never answers for it. Descendants are found every {@link MIN_DISCOVERY_INTERVAL_MS} or
 * more: through `/proc/<pid>/task/<tid>/children` where the kernel has it, else through a scan of /proc whose
 * interval grows with its cost. A forked child's pages shared with the worker count twice (RSS, not PSS).
 *
 * When a launch wrapper (the sandbox engine) stands between the root and the worker, the tree also holds the
 * wrapper's own processes (bubblewrap, its shell, proxy bridges: eight more on Linux), which started before the worker
 * and whose size no cell changes. A sample without discovery, the one taken at every dispatch, then reads the worker
 * and its descendants fresh and counts the rest at their last read; every sample with discovery (the watch's periodic
 * reads, runtime_status) reads the whole tree. So the dispatch read costs what it costs without a wrapper, and the
 * guard's stops, taken on the periodic reads, see every process.
 */
export class ProcessTreeMemory {
  /** The root process. */
  readonly rootPid: number;
  private rootFd: number | undefined;
  private rootBytes = 0;
  private readonly descendants = new Map<number, Member>();
  private nextDiscoveryAt = 0;
  /**
   * The worker's pid on this host once known: the root itself unless a wrapper stands between them; undefined while
   * the wrapped worker has not been found (or could not be told apart), when every sample reads the whole tree.
   */
  private workerPid: number | undefined;
  private readonly reportedPid: number | undefined;

  /**
   * @param rootPid the process spawned (the worker, or the launch wrapper around it)
   * @param reportedPid the pid the worker reports about itself, which is its number in its own pid namespace; when
   *   it differs from `rootPid`, the worker is the process in the tree that holds this number in its innermost
   *   namespace. Undefined: the root is the worker.
   */
  constructor(rootPid: number, reportedPid?: number) {
    this.rootPid = rootPid;
    this.reportedPid = reportedPid;
    if (reportedPid === undefined || reportedPid === rootPid) this.workerPid = rootPid;
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

  /** The worker's pid on this host, when known (the root itself, or the process found inside the wrapper). */
  get workerHostPid(): number | undefined {
    return this.workerPid;
  }

  /**
   * Bytes resident in the tree now, or undefined once the root is gone. With `discover`, looks for new
   * descendants first when that is due and reads every process; without it, reads the worker's part of the tree and
   * counts a wrapper's processes at their last read (see the class comment).
   */
  sample(discover = true): number | undefined {
    if (this.rootFd === undefined) return undefined;
    const partial = !discover && this.workerPid !== undefined && this.workerPid !== this.rootPid;
    if (!partial) {
      const root = readResidentBytes(this.rootFd);
      if (root === undefined) {
        this.close();
        return undefined;
      }
      this.rootBytes = root;
      // A wrapped worker not looked for yet: look now, whatever was asked, so a first dispatch read counts the worker.
      const unsought = this.workerPid === undefined && this.nextDiscoveryAt === 0;
      if (unsought || (discover && performance.now() >= this.nextDiscoveryAt)) this.discover();
    }
    let total = this.rootBytes;
    let workerGone = false;
    for (const [pid, member] of this.descendants) {
      if (partial && !member.worker) {
        total += member.bytes;
        continue;
      }
      const bytes = readResidentBytes(member.fd);
      if (bytes === undefined) {
        closeQuietly(member.fd);
        this.descendants.delete(pid);
        workerGone ||= pid === this.workerPid;
      } else {
        member.bytes = bytes;
        total += bytes;
      }
    }
    if (workerGone) {
      // The wrapped worker exited: from now on every read is whole, and this one too (it tells whether the root is gone).
      this.workerPid = undefined;
      return partial ? this.sample(true) : total;
    }
    return total;
  }

  /** Closes every open /proc file. */
  close(): void {
    if (this.rootFd !== undefined) closeQuietly(this.rootFd);
    this.rootFd = undefined;
    for (const member of this.descendants.values()) closeQuietly(member.fd);
    this.descendants.clear();
  }

  private discover(): void {
    const startedAt = performance.now();
    const parents = childrenFiles ? descendantsFromChildrenFiles(this.rootPid) : descendantsFromScan(this.rootPid);
    for (const [pid, member] of this.descendants) {
      if (!parents.has(pid)) {
        closeQuietly(member.fd);
        this.descendants.delete(pid);
      }
    }
    if (this.workerPid === undefined && this.reportedPid !== undefined) this.workerPid = findWrappedWorker(parents.keys(), this.reportedPid);
    const inWorker = (pid: number): boolean => {
      for (let current: number | undefined = pid; current !== undefined; current = parents.get(current)) {
        if (current === this.workerPid) return true;
      }
      return false;
    };
    for (const pid of parents.keys()) {
      const known = this.descendants.get(pid);
      if (known !== undefined) {
        known.worker = inWorker(pid);
        continue;
      }
      try {
        // Read at once: a process found now is counted at its real size by a sample that does not re-read it.
        const fd = openResident(pid);
        this.descendants.set(pid, { fd, bytes: readResidentBytes(fd) ?? 0, worker: inWorker(pid) });
      } catch {
        // exited in between
      }
    }
    const cost = performance.now() - startedAt;
    this.nextDiscoveryAt = performance.now() + Math.max(MIN_DISCOVERY_INTERVAL_MS, cost / MAX_DISCOVERY_SHARE);
  }
}

/**
 * The host pid of the process whose innermost pid-namespace number is `reportedPid` (the `NSpid` line of
 * /proc/<pid>/status lists a process's number in each namespace, the host's first; a wrapper without a pid namespace
 * leaves one). A wrapper's own processes can hold the same small number in an outer namespace, so the worker is the
 * match in the deepest namespace; a tie there (or no match, or no NSpid line) answers undefined, and every sample then
 * reads the whole tree. It is first looked for at the tree's first read, before a cell of this worker has run.
 */
function findWrappedWorker(pids: Iterable<number>, reportedPid: number): number | undefined {
  let found: number | undefined;
  let depth = 0;
  let tie = false;
  for (const pid of pids) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'latin1');
    } catch {
      continue;
    }
    const at = status.indexOf('\nNSpid:');
    if (at < 0) continue;
    const numbers = status.slice(at + 7, status.indexOf('\n', at + 1)).trim().split(/\s+/).map(Number);
    if (numbers.at(-1) !== reportedPid) continue;
    if (numbers.length > depth) {
      found = pid;
      depth = numbers.length;
      tie = false;
    } else if (numbers.length === depth) {
      tie = true;
    }
  }
  return tie ? undefined : found;
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

/** Every descendant of `rootPid`, each with its parent. */
function descendantsFromChildrenFiles(rootPid: number): Map<number, number> {
  const found = new Map<number, number>();
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
          found.set(child, pid);
          queue.push(child);
        }
      }
    }
  }
  return found;
}

function descendantsFromScan(rootPid: number): Map<number, number> {
  const children = new Map<number, number[]>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return new Map();
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
  const found = new Map<number, number>();
  const queue = [rootPid];
  while (queue.length > 0) {
    const parent = queue.pop()!;
    for (const child of children.get(parent) ?? []) {
      if (found.has(child)) continue;
      found.set(child, parent);
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
