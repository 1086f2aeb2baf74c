/**
 * Spill files of a kernel's cells (python/ipython_mcp_worker/kernel/spills.py). A kernel that sees this runtime's
 * spill directory (the probe file's token read back) writes its files straight into it: the result names a local
 * path and nothing travels. Any other kernel writes them on its own machine and names them by file name and size;
 * they are pulled here after the cell's answer, one `spill_read` request per piece, so nothing of them rides the
 * Jupyter server's rate-limited IOPub path in a burst (each piece answers a request, and each request's own `idle`
 * resets the server's rate window) and nothing queues faster than it is written here.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '@ipython-mcp/worker-supervisor';
import type { JupyterComm } from './jupyter-comm.js';

/** The names the kernel side gives spill files: nothing else is written. */
const SPILL_NAME = /^\d{20}-cell\d+-(stdout|stderr)\.txt$/;

/** Re-asks for a piece whose answer did not come (the server dropped it) at most this many times. */
const MAX_RETRIES = 5;

/**
 * The probe a kernel reads to find out whether it sees `directory`: a file of a random name and token, removed once
 * the kernel side answered. `IPYTHON_MCP_KERNEL_SPILL=transfer` makes every kernel pull (as a remote one does).
 */
export function spillProbe(directory: string | undefined): { configure: Record<string, unknown>; remove: () => void } {
  if (directory === undefined) return { configure: {}, remove: () => undefined };
  const probe = `.kernel-probe-${randomBytes(8).toString('hex')}`;
  const token = randomBytes(24).toString('hex');
  const direct = process.env.IPYTHON_MCP_KERNEL_SPILL !== 'transfer';
  const path = join(directory, probe);
  try {
    if (direct) writeFileSync(path, token, { mode: 0o600, flag: 'wx' });
  } catch {
    return { configure: {}, remove: () => undefined };
  }
  return {
    configure: { kernel_spill: { probe, token, direct } },
    remove: () => rmSync(path, { force: true }),
  };
}

/** What a pull of one stream's spill file came to: the bytes here, and why it stopped short if it did. */
interface Pulled {
  readonly bytes: number;
  readonly cut: string | undefined;
}

/** A piece awaited from the kernel side: its request's message id, where it starts, and how often it was asked. */
interface Awaited {
  messageId: string;
  readonly name: string;
  readonly offset: number;
  retries: number;
  answer(chunk: Record<string, unknown>): void;
}

/** The characters (code points) of the UTF-8 file at `path`: its bytes that do not continue a character. */
function codePointsOf(path: string): number {
  const fd = openSync(path, 'r');
  const buffer = Buffer.alloc(1 << 20);
  let count = 0;
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      for (let index = 0; index < read; index += 1) if (((buffer[index] as number) & 0xc0) !== 0x80) count += 1;
    }
  } finally {
    closeSync(fd);
  }
  return count;
}

/**
 * The pulls of one answer's spill files, one file at a time, one piece in flight: `done` resolves with the result
 * naming the local files, a file cut short (the connection ended, the call was stopped, the kernel could not read
 * it) keeps what came, and `<stream>_spill_omitted_chars` counts what did not, `<stream>_spill_cut` saying why.
 */
export class SpillTransfer {
  readonly done: Promise<Record<string, unknown>>;
  #resolve!: (result: Record<string, unknown>) => void;
  #stopped: string | undefined;
  /** The piece awaited now, if any. */
  #awaited: Awaited | undefined;

  constructor(
    private readonly comm: JupyterComm,
    private readonly directory: string,
    result: Record<string, unknown>,
    private readonly logger: Logger,
  ) {
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    void this.#run(result);
  }

  /** Whether an answer has spill files to pull (named by name and size). */
  static needed(result: Record<string, unknown>): boolean {
    return ['stdout', 'stderr'].some((stream) => typeof result[`${stream}_spill_bytes`] === 'number');
  }

  /** Stops pulling: the answer is given with what came, saying why the rest is missing. */
  stop(reason: string): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = reason;
    this.#awaited?.answer({ error: reason });
  }

  /** A `spill_chunk` message from the kernel side. */
  onChunk(message: Record<string, unknown>): void {
    const awaited = this.#awaited;
    if (awaited === undefined || message.offset !== awaited.offset) return;
    awaited.answer(message);
  }

  /** The kernel went idle after request `messageId`: a piece whose answer never came (dropped) is asked again. */
  onIdle(messageId: string): void {
    const awaited = this.#awaited;
    if (awaited === undefined || awaited.messageId !== messageId) return;
    if (awaited.retries >= MAX_RETRIES) {
      awaited.answer({ error: 'the Jupyter server dropped its answers (its IOPub rate limits)' });
      return;
    }
    this.logger.warn('kernel.spill_piece_resent', {});
    awaited.retries += 1;
    this.#ask(awaited);
  }

  async #run(result: Record<string, unknown>): Promise<void> {
    let rewritten = result;
    for (const stream of ['stdout', 'stderr'] as const) {
      const name = result[`${stream}_spill`];
      const size = result[`${stream}_spill_bytes`];
      const { [`${stream}_spill_bytes`]: _size, ...rest } = rewritten;
      rewritten = rest;
      if (typeof name !== 'string' || typeof size !== 'number') continue;
      if (!SPILL_NAME.test(name)) {
        this.logger.warn('kernel.invalid_spill', {});
        const { [`${stream}_spill`]: _name, ...without } = rewritten;
        rewritten = without;
        continue;
      }
      const pulled = await this.#pull(name, size);
      this.#tell('spill_done', name);
      const path = join(this.directory, name);
      rewritten = { ...rewritten, [`${stream}_spill`]: path };
      if (pulled.cut !== undefined) {
        // The file holds the stream's start; the rest, in characters of the stream (code points), did not come.
        const total = [...(result[stream] as string)].length + (result[`${stream}_omitted_chars`] as number);
        const short = (result[`${stream}_spill_omitted_chars`] as number | undefined) ?? 0;
        let held = 0;
        try {
          held = codePointsOf(path);
        } catch {
          // no file here: nothing of it came
        }
        rewritten[`${stream}_spill_omitted_chars`] = Math.max(short, total - held);
        rewritten[`${stream}_spill_cut`] = `${pulled.bytes} of its ${size} bytes came: ${pulled.cut}`;
      }
    }
    this.#resolve(rewritten);
  }

  async #pull(name: string, size: number): Promise<Pulled> {
    let fd: number;
    try {
      fd = openSync(join(this.directory, name), 'wx', 0o600);
    } catch (error) {
      return { bytes: 0, cut: `the spill file could not be written here (${(error as Error).message.slice(0, 200)})` };
    }
    let bytes = 0;
    let cut: string | undefined;
    try {
      while (bytes < size) {
        if (this.#stopped !== undefined) {
          cut = this.#stopped;
          break;
        }
        const chunk = await this.#piece(name, bytes);
        if (typeof chunk.error === 'string') {
          cut = chunk.error.slice(0, 200);
          break;
        }
        const text = typeof chunk.text === 'string' ? chunk.text : '';
        const data = Buffer.from(text, 'utf8');
        if (data.length === 0 || data.length !== chunk.bytes) {
          cut = 'the kernel side sent a piece that does not match the file';
          break;
        }
        writeSync(fd, data);
        bytes += data.length;
      }
    } catch (error) {
      cut = `the spill file could not be written here (${(error as Error).message.slice(0, 200)})`;
    } finally {
      closeSync(fd);
    }
    return { bytes, cut };
  }

  #piece(name: string, offset: number): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      const awaited: Awaited = {
        messageId: '',
        offset,
        retries: 0,
        name,
        answer: (chunk: Record<string, unknown>) => {
          if (this.#awaited === awaited) this.#awaited = undefined;
          resolve(chunk);
        },
      };
      this.#awaited = awaited;
      this.#ask(awaited);
    });
  }

  #ask(awaited: Awaited): void {
    try {
      awaited.messageId = this.comm.send({ type: 'spill_read', name: awaited.name, offset: awaited.offset });
    } catch {
      awaited.answer({ error: 'the connection to the kernel ended' });
    }
  }

  #tell(type: string, name: string): void {
    try {
      this.comm.send({ type, name });
    } catch {
      // The connection ended: the kernel side removes its folder with it.
    }
  }
}

/**
 * An answer of a kernel that writes into `directory` itself names its spill files by their path there: kept only when
 * it is a spill file's name directly in `directory` (nothing the kernel side says may point elsewhere).
 */
export function directSpills(directory: string | undefined, result: Record<string, unknown>, logger: Logger): Record<string, unknown> {
  let checked = result;
  for (const field of ['stdout_spill', 'stderr_spill']) {
    const path = result[field];
    if (typeof path !== 'string' || typeof result[`${field}_bytes`] === 'number') continue;
    if (directory !== undefined && dirname(path) === directory && SPILL_NAME.test(basename(path))) continue;
    logger.warn('kernel.invalid_spill', {});
    const { [field]: _dropped, ...rest } = checked;
    checked = rest;
  }
  return checked;
}
