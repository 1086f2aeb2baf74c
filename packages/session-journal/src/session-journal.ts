import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { markdownCell, notebookMetadata, type CellRecord } from './notebook-format.js';

/** Where the journal reports that it stopped: metadata only (an error code, never cell contents). */
export interface JournalLogger {
  warn(event: string, fields?: Record<string, unknown>): void;
}

/** Options of a {@link SessionJournal}. */
export interface SessionJournalOptions {
  /** The notebook file. Later files of the same session get a number before the extension: `x.2.ipynb`. */
  path: string;
  /** Size at which a file is closed and the journal goes on in the next numbered file (default 16 MiB). */
  maxBytes?: number | undefined;
  /**
   * Least time between two writes while cells keep coming (default 50 ms). A cell that follows a quiet spell is
   * written at once; a fast run of cells is written together, so a burst costs a few writes, not one per cell.
   */
  minWriteIntervalMs?: number | undefined;
  logger?: JournalLogger | undefined;
  /** What the first markdown cell of a new session says about its origin, e.g. the server and its version. */
  title?: string | undefined;
}

/** What runtime_status reports about the journal. */
export interface JournalStatus {
  /** The file being written now. */
  path: string;
  state: 'writing' | 'failed' | 'closed';
  /** Cells on disk, in every file of this session. */
  cells: number;
  /** How many files this session has written to (1 until the first rollover). */
  files: number;
  /** Whole-file writes so far: fewer than cells when appends arrive faster than the disk takes them. */
  writes: number;
  /** Why the journal stopped, once it has. */
  error: string | null;
}

/** Default size cap of one journal file. */
export const DEFAULT_JOURNAL_MAX_BYTES = 16 * 1024 * 1024;
const MIN_JOURNAL_MAX_BYTES = 4096;
const HEAD = Buffer.from('{\n "cells": [\n');
const SEPARATOR = Buffer.from(',\n');
const ROLLOVER_NOTE_BYTES = 512;
const CHUNK_BYTES = 64 * 1024;
const DEFAULT_MIN_WRITE_INTERVAL_MS = 50;

/** A journal file that holds something other than an ipython-mcp journal: it is never overwritten. */
class ForeignFileError extends Error {
  readonly code = 'EEXIST';
}

/**
 * Appends cells to a Jupyter notebook (nbformat 4.5) on disk.
 *
 * - Off the hot path: {@link SessionJournal.append} only queues the cell; serializing and writing run on a later
 *   turn of the event loop, and everything queued while a write is in flight goes out in the next single write.
 * - Crash-safe: each write goes to a temporary file in the same directory, is fsynced, and is renamed over the
 *   journal, so the file on disk is always a complete notebook, whatever moment the process is killed at.
 * - Cheap per cell: cells are serialized once and kept as buffers; a write hands them to one writev call, so the
 *   event loop never builds the file. Files are capped at `maxBytes` (then the next numbered file starts), which
 *   bounds the cost of each rewrite.
 * - Never fails the caller: the first error (disk full, permission, a path that cannot be a file) stops the
 *   journal, is logged once and shows in {@link SessionJournal.status}.
 *
 * Files are created with mode 0600: unlike the logs, a journal holds code and values.
 */
export class SessionJournal {
  private readonly basePath: string;
  private readonly maxBytes: number;
  private readonly logger: JournalLogger | undefined;
  private readonly sessionId = randomBytes(4).toString('hex');
  private readonly ready: Promise<void>;
  private metadataTail = Buffer.alloc(0);
  /**
   * The current file's cells, serialized: full chunks of about CHUNK_BYTES joined once (so a write hands writev a
   * few buffers, not one per cell, and no byte is copied twice), then the cells since the last full chunk.
   */
  private chunks: Buffer[] = [];
  private open: Buffer[] = [];
  private openBytes = 0;
  private bytes = 0;
  private fileIndex = 1;
  private filesUsed = 1;
  private cellsInEarlierFiles = 0;
  private writtenInFile = 0;
  private writes = 0;
  private cellsInFile = 0;
  private counter = 0;
  private pending: CellRecord[] = [];
  private scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private lastWriteAt = -Infinity;
  private readonly minWriteIntervalMs: number;
  private writing: Promise<void> | undefined;
  private state: JournalStatus['state'] = 'writing';
  private error: string | null = null;

  constructor(options: SessionJournalOptions) {
    this.basePath = resolve(options.path);
    this.maxBytes = Math.max(options.maxBytes ?? DEFAULT_JOURNAL_MAX_BYTES, MIN_JOURNAL_MAX_BYTES);
    this.logger = options.logger;
    this.minWriteIntervalMs = Math.max(0, options.minWriteIntervalMs ?? DEFAULT_MIN_WRITE_INTERVAL_MS);
    const started = new Date().toISOString();
    this.ready = this.openSession(started, options.title ?? 'ipython-mcp').catch((error: unknown) => this.fail(error));
  }

  /** Queues one cell. Returns at once; a stopped journal drops it. */
  append(cell: CellRecord): void {
    if (this.state !== 'writing') return;
    this.pending.push(cell);
    this.schedule();
  }

  /** The journal's state, for runtime_status. */
  status(): JournalStatus {
    return { path: this.pathOf(this.fileIndex), state: this.state, cells: this.cellsInEarlierFiles + this.writtenInFile, files: this.filesUsed, writes: this.writes, error: this.error };
  }

  /** Resolves once every cell appended so far is on disk (or the journal has stopped). */
  async flushed(): Promise<void> {
    await this.ready;
    while (this.writing !== undefined || this.scheduled !== undefined || (this.pending.length > 0 && this.state === 'writing')) {
      if (this.writing === undefined) this.startDrain();
      await (this.writing ?? new Promise((resolveLater) => setImmediate(resolveLater)));
    }
  }

  /** Writes what is queued, then stops taking cells. Idempotent; never rejects. */
  async close(): Promise<void> {
    await this.flushed();
    if (this.state === 'writing') this.state = 'closed';
  }

  private pathOf(index: number): string {
    if (index === 1) return this.basePath;
    const extension = extname(this.basePath);
    const stem = extension === '' ? this.basePath : this.basePath.slice(0, -extension.length);
    return `${stem}.${index}${extension}`;
  }

  /** Finds the file to write: a journal left by an earlier session is continued, anything else is left alone. */
  private async openSession(started: string, title: string): Promise<void> {
    await mkdir(dirname(this.basePath), { recursive: true, mode: 0o700 });
    while (await exists(this.pathOf(this.fileIndex + 1))) this.fileIndex += 1;
    let created = started;
    const path = this.pathOf(this.fileIndex);
    if (await exists(path)) {
      let notebook: { cells?: unknown; metadata?: { ipython_mcp?: { created?: unknown } } };
      try {
        notebook = JSON.parse(await readFile(path, 'utf8')) as typeof notebook;
      } catch {
        throw new ForeignFileError(`${path} exists and is not a notebook; it is left as it is`);
      }
      if (!Array.isArray(notebook.cells) || typeof notebook.metadata?.ipython_mcp !== 'object') {
        throw new ForeignFileError(`${path} exists and is not an ipython-mcp journal; it is left as it is`);
      }
      if (typeof notebook.metadata.ipython_mcp.created === 'string') created = notebook.metadata.ipython_mcp.created;
      for (const cell of notebook.cells) this.keep(Buffer.from(JSON.stringify(cell)));
      this.writtenInFile = this.cellsInFile;
    }
    this.metadataTail = Buffer.from(`\n ],\n "metadata": ${JSON.stringify(notebookMetadata(created))},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n`);
    this.pending.unshift(
      markdownCell(
        `## ${title} session, started ${started}\n\nEach code cell below is one operation the agent ran in the namespace, with its ` +
          'outputs as the agent received them. Notes like this one say what happened between cells.',
      ),
    );
    this.schedule();
  }

  /** Starts a write on a later turn (after the caller's result is on its way), or after the write interval. */
  private schedule(): void {
    if (this.scheduled !== undefined || this.writing !== undefined) return;
    const wait = this.lastWriteAt + this.minWriteIntervalMs - performance.now();
    this.scheduled = wait > 0 ? setTimeout(() => this.startDrain(), wait) : setImmediate(() => this.startDrain());
  }

  private startDrain(): void {
    if (this.scheduled !== undefined) {
      clearTimeout(this.scheduled as NodeJS.Timeout);
      clearImmediate(this.scheduled as NodeJS.Immediate);
      this.scheduled = undefined;
    }
    if (this.writing === undefined) this.writing = this.drain();
  }

  /** Writes everything queued in one whole-file write; cells that come in meanwhile get the next one. */
  private async drain(): Promise<void> {
    await this.ready;
    try {
      if (this.pending.length > 0 && this.state === 'writing') {
        const batch = this.pending;
        this.pending = [];
        for (const cell of batch) await this.add(cell);
        await this.writeCurrent();
      }
    } catch (error) {
      this.fail(error);
    }
    // Cleared in the same turn as the look at `pending`, so no append is left without a write scheduled.
    this.writing = undefined;
    this.lastWriteAt = performance.now();
    if (this.pending.length > 0 && this.state === 'writing') this.schedule();
  }

  /** Serializes one cell into the current file, rolling over to the next file first when it would not fit. */
  private async add(cell: CellRecord): Promise<void> {
    const serialized = this.serialize(cell);
    // Room for the notebook's head and tail and the closing note, so a file never passes the cap.
    const reserve = HEAD.length + this.metadataTail.length + ROLLOVER_NOTE_BYTES;
    if (this.cellsInFile > 0 && this.bytes + serialized.length + SEPARATOR.length + reserve > this.maxBytes) {
      const next = this.pathOf(this.fileIndex + 1);
      this.keep(
        this.serialize(markdownCell(`*This file reached the journal's size cap (${this.maxBytes} bytes); the journal continues in \`${basename(next)}\`.*`)),
      );
      await this.writeCurrent();
      const previous = basename(this.pathOf(this.fileIndex));
      this.fileIndex += 1;
      this.filesUsed += 1;
      this.cellsInEarlierFiles += this.writtenInFile;
      this.writtenInFile = 0;
      this.chunks = [];
      this.open = [];
      this.openBytes = 0;
      this.bytes = 0;
      this.cellsInFile = 0;
      this.keep(this.serialize(markdownCell(`*Continued from \`${previous}\`.*`)));
    }
    this.keep(serialized);
  }

  private keep(serialized: Buffer): void {
    this.open.push(serialized);
    this.openBytes += serialized.length + SEPARATOR.length;
    if (this.openBytes >= CHUNK_BYTES) {
      this.chunks.push(Buffer.concat(joined(this.open)));
      this.open = [];
      this.openBytes = 0;
    }
    this.bytes += serialized.length + SEPARATOR.length;
    this.cellsInFile += 1;
  }

  /** One cell as JSON; a cell too large for a quarter of the file cap keeps its source and a note instead of outputs. */
  private serialize(cell: CellRecord): Buffer {
    this.counter += 1;
    const id = `${this.sessionId}-${this.counter}`;
    const serialized = Buffer.from(JSON.stringify({ id, ...cell }));
    const bound = Math.floor(this.maxBytes / 4);
    if (serialized.length <= bound) return serialized;
    const source = cell.source.length > bound / 8 ? `${cell.source.slice(0, Math.floor(bound / 8))}\n# [… source cut: the cell is too large for the journal]` : cell.source;
    const note = `[this cell's outputs (${serialized.length} bytes) exceed the journal's per-cell bound (${bound} bytes) and were not kept]\n`;
    const reduced: CellRecord =
      cell.cell_type === 'code'
        ? { ...cell, source, outputs: [{ output_type: 'stream', name: 'stderr', text: note }] }
        : { ...cell, source: `${source}\n\n${note}` };
    return Buffer.from(JSON.stringify({ id, ...reduced }));
  }

  /** Replaces the current file with its full content: temporary file, fsync, rename. */
  private async writeCurrent(): Promise<void> {
    const target = this.pathOf(this.fileIndex);
    // One fixed name per journal file: a temporary file left by a killed process is simply overwritten next time.
    const temporary = join(dirname(target), `.${basename(target)}.tmp`);
    const buffers = [HEAD, ...joined([...this.chunks, ...this.open]), this.metadataTail];
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.chmod(0o600);
      await handle.writev(buffers);
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    await handle.close();
    await rename(temporary, target);
    this.writes += 1;
    this.writtenInFile = this.cellsInFile;
  }

  private fail(error: unknown): void {
    if (this.state === 'failed') return;
    this.state = 'failed';
    const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'error';
    const message = error instanceof Error ? error.message : String(error);
    this.error = `${code}: ${message}`.slice(0, 500);
    this.pending = [];
    this.chunks = [];
    this.open = [];
    this.logger?.warn('journal.failed', { code, syscall: (error as { syscall?: unknown }).syscall ?? null });
  }
}

/** The buffers with a separator between each two. */
function joined(buffers: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  buffers.forEach((buffer, index) => {
    if (index > 0) out.push(SEPARATOR);
    out.push(buffer);
  });
  return out;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return false;
    throw error;
  }
}
