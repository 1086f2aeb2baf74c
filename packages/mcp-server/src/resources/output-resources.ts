import { constants as fsConstants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CLIENT_TOKEN_CAP } from '../settings/index.js';
import { McpError, type ReadResourceResult, type Resource, type ResourceLink, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';

/**
 * A cell's output as MCP resources, so a client that cannot read the server's disk (`--http` from another machine)
 * can fetch it: the spill files (the whole text of a truncated stdout/stderr, on disk, see output-spill.ts), every
 * image a result returned, and the whole result when it was too large for a client's tool-result cap (both kept in
 * memory). A result names each with a `resource_link`; `resources/read` serves them.
 *
 * URIs name the namespace: `ipython-mcp://NAMESPACE/spill/FILE`, `ipython-mcp://NAMESPACE/image/ID.png`,
 * `ipython-mcp://NAMESPACE/result/ID.json`. A read answers one page, at most {@link TEXT_PAGE_BYTES} of text or
 * {@link BLOB_PAGE_BYTES} of an image; `?offset=N` (bytes) asks for a later one, and each page's `_meta` names the
 * next page's URI. Paging sits in the URI because `resources/read` has no cursor: every client that can read a
 * resource can read a page, and the resource template (`{?offset}`) says so.
 */

/** The scheme of every resource this server publishes. */
const RESOURCE_SCHEME = 'ipython-mcp:';

/** Bytes of text one read returns at most (about 11,000 tokens at 3 characters a token, under any client's cap). */
export const TEXT_PAGE_BYTES = 32 * 1024;

/** Bytes of an image (before base64) one read returns at most. */
const BLOB_PAGE_BYTES = 1024 * 1024;

/** The `_meta` key of a page: its offset, size, the whole size, and the next page's URI when there is one. */
export const PAGE_META_KEY = 'ipython-mcp/page';

/** MCP's "resource not found" error code. */
export const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

/** The in-memory outputs (images, whole results) one namespace keeps: the oldest go first past either bound. */
export interface KeptOutputLimits {
  maxItems: number;
  maxBytes: number;
}

const DEFAULT_KEPT_OUTPUT_LIMITS: KeptOutputLimits = Object.freeze({ maxItems: 64, maxBytes: 32 * 1024 * 1024 });

type Kind = 'spill' | 'image' | 'result';

interface Kept {
  readonly mimeType: string;
  /** An image's raw bytes, or a result's UTF-8 JSON. */
  readonly data: Buffer;
}

/** A spill file's name as the worker makes it (capture/spill.py): a clock, a label, `.txt`. */
const SPILL_NAME = /^[0-9]{1,24}-[A-Za-z0-9_-]{1,64}\.txt$/;
/** A kept output's name: this namespace instance's tag, a sequence number, an extension. */
const KEPT_NAME = /^([a-z0-9]{8})-([0-9]{1,9})\.(png|jpg|json)$/;
const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'application/json': 'json' };

function notFound(message: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, message);
}

function invalid(message: string): McpError {
  return new McpError(INVALID_PARAMS, message);
}

/** The outputs of one namespace, published as resources. Every session of the namespace reads through one. */
export class OutputResources {
  /** Tells this namespace's kept outputs from an earlier namespace's of the same name (their numbers restart). */
  private readonly tag = randomBytes(4).toString('hex');
  private readonly kept = new Map<string, Kept>();
  private keptBytes = 0;
  private sequence = 0;

  constructor(
    readonly namespace: string,
    /** The runtime's spill directory now (undefined: spilling is off). */
    private readonly spillDirectory: () => string | undefined,
    private readonly limits: KeptOutputLimits = DEFAULT_KEPT_OUTPUT_LIMITS,
    /** The client's cap on one tool result that results are held within (result-budget.ts), or null for none. */
    readonly maxResultTokens: number | null = CLIENT_TOKEN_CAP,
  ) {}

  private uri(kind: Kind, name: string): string {
    return `ipython-mcp://${this.namespace}/${kind}/${name}`;
  }

  /** A link to the spill file at `path` (a stream's whole text), or undefined when it is not in the spill directory. */
  spillLink(path: string, stream: string): ResourceLink | undefined {
    const directory = this.spillDirectory();
    const name = basename(path);
    if (directory === undefined || dirname(path) !== directory || !SPILL_NAME.test(name)) return undefined;
    return {
      type: 'resource_link',
      uri: this.uri('spill', name),
      name: `${stream}-spill`,
      title: `Whole ${stream} of the cell`,
      description: `The whole ${stream} (text/plain, paged: ?offset=BYTES), readable while the spill file exists.`,
      mimeType: 'text/plain',
    };
  }

  /** Keeps an image (its decoded bytes) and returns its link. */
  keepImage(mimeType: string, data: Buffer, index: number): ResourceLink {
    const name = this.keep(mimeType, data);
    return {
      type: 'resource_link',
      uri: this.uri('image', name),
      name: `image-${index}`,
      title: `Image ${index} of the result`,
      description: `${mimeType}, ${data.length} bytes`,
      mimeType,
      size: data.length,
    };
  }

  /** Keeps a whole result (its structured content as JSON) and returns its link. */
  keepResult(json: string): ResourceLink {
    const data = Buffer.from(json, 'utf8');
    const name = this.keep('application/json', data);
    return {
      type: 'resource_link',
      uri: this.uri('result', name),
      name: 'whole-result',
      title: 'The whole result',
      description: `The result before long strings were cut to fit a client's tool-result cap (application/json, ${data.length} bytes, paged: ?offset=BYTES).`,
      mimeType: 'application/json',
      size: data.length,
    };
  }

  private keep(mimeType: string, data: Buffer): string {
    this.sequence += 1;
    const name = `${this.tag}-${this.sequence}.${EXTENSIONS[mimeType] ?? 'bin'}`;
    this.kept.set(name, { mimeType, data });
    this.keptBytes += data.length;
    for (const [oldest, item] of this.kept) {
      if (this.kept.size <= this.limits.maxItems && this.keptBytes <= this.limits.maxBytes) break;
      if (oldest === name) break;
      this.kept.delete(oldest);
      this.keptBytes -= item.data.length;
    }
    return name;
  }

  /** Forgets every kept output (the namespace closed). */
  close(): void {
    this.kept.clear();
    this.keptBytes = 0;
  }

  /** The resource templates: one per kind, with the page offset. */
  templates(): ResourceTemplate[] {
    const base = `ipython-mcp://${this.namespace}`;
    return [
      { uriTemplate: `${base}/spill/{name}{?offset}`, name: 'spill-file', title: 'Whole stdout/stderr of a cell', mimeType: 'text/plain', description: 'A truncated stream in full; paged by byte offset.' },
      { uriTemplate: `${base}/image/{name}{?offset}`, name: 'image', title: 'An image a result returned', description: 'PNG or JPEG; paged by byte offset.' },
      { uriTemplate: `${base}/result/{name}{?offset}`, name: 'whole-result', title: 'A result cut to fit', mimeType: 'application/json', description: 'The whole structured result; paged by byte offset.' },
    ];
  }

  /** The outputs readable now: spill files first (oldest first), then kept outputs (oldest first). */
  async list(): Promise<Resource[]> {
    const resources: Resource[] = [];
    const directory = this.spillDirectory();
    if (directory !== undefined) {
      const names = (await readdir(directory).catch(() => [] as string[])).filter((name) => SPILL_NAME.test(name)).sort();
      for (const name of names) {
        const size = await stat(join(directory, name)).then((info) => info.size, () => undefined);
        if (size === undefined) continue;
        resources.push({ uri: this.uri('spill', name), name, mimeType: 'text/plain', size });
      }
    }
    for (const [name, item] of this.kept) {
      resources.push({ uri: this.uri(name.endsWith('.json') ? 'result' : 'image', name), name, mimeType: item.mimeType, size: item.data.length });
    }
    return resources;
  }

  /** One page of the resource at `uri`; throws an McpError that says what is wrong. */
  async read(uri: string): Promise<ReadResourceResult> {
    const shown = JSON.stringify(uri.slice(0, 200));
    let parsed: URL;
    try {
      parsed = new URL(uri);
    } catch {
      throw invalid(`Unknown resource: ${shown} is not a URI`);
    }
    const path = /^\/(spill|image|result)\/([^/]+)$/.exec(parsed.pathname);
    if (parsed.protocol !== RESOURCE_SCHEME || path === null || parsed.username !== '' || parsed.port !== '' || parsed.hash !== '') {
      throw invalid(`Unknown resource: ${shown} (this session's outputs look like ipython-mcp://${this.namespace}/spill/NAME?offset=0)`);
    }
    if (parsed.hostname !== this.namespace) {
      throw invalid(`resource ${shown} belongs to namespace ${JSON.stringify(parsed.hostname.slice(0, 40))}, not this session's ${JSON.stringify(this.namespace)}`);
    }
    const offset = pageOffset(parsed.searchParams, shown);
    const kind = path[1] as Kind;
    const name = path[2] as string;
    const plain = `ipython-mcp://${this.namespace}/${kind}/${name}`;
    if (kind === 'spill') return this.readSpill(plain, name, offset, shown);
    return this.readKept(plain, kind, name, offset, shown);
  }

  private async readSpill(plain: string, name: string, offset: number, shown: string): Promise<ReadResourceResult> {
    const directory = this.spillDirectory();
    if (!SPILL_NAME.test(name)) throw invalid(`Unknown resource: ${shown} names no spill file (a spill file's name looks like 00000000000000000001-cell1-stdout.txt)`);
    if (directory === undefined) throw notFound(`resource ${shown} is gone: this server keeps no spill files (spilling is off)`);
    let handle;
    try {
      handle = await open(join(directory, name), fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
    } catch {
      throw notFound(
        `resource ${shown} is gone: a spill file lasts while its namespace runs and the spill budget keeps it (the oldest go first); read the cell's output with execute instead`,
      );
    }
    try {
      const total = (await handle.stat()).size;
      if (offset > total) throw invalid(`offset ${offset} is past the end of ${shown} (${total} bytes)`);
      const buffer = Buffer.alloc(Math.min(TEXT_PAGE_BYTES + 6, total - offset));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return textPage(plain, 'text/plain', buffer.subarray(0, bytesRead), offset, total);
    } finally {
      await handle.close();
    }
  }

  private readKept(plain: string, kind: Kind, name: string, offset: number, shown: string): ReadResourceResult {
    const match = KEPT_NAME.exec(name);
    if (match === null || (kind === 'result') !== (match[3] === 'json')) throw invalid(`Unknown resource: ${shown} names no ${kind} of this server`);
    const item = this.kept.get(name);
    if (item === undefined) {
      const earlier = match[1] === this.tag && Number(match[2]) <= this.sequence;
      throw notFound(
        earlier
          ? `resource ${shown} is no longer kept: a namespace keeps its latest ${this.limits.maxItems} images and results (${this.limits.maxBytes} bytes), the oldest go first`
          : `resource ${shown} is not known here: kept images and results last while their namespace runs (the server or namespace was restarted since)`,
      );
    }
    const total = item.data.length;
    if (offset > total) throw invalid(`offset ${offset} is past the end of ${shown} (${total} bytes)`);
    if (kind === 'result') return textPage(plain, item.mimeType, item.data.subarray(offset, offset + TEXT_PAGE_BYTES + 6), offset, total);
    const end = Math.min(total, offset + BLOB_PAGE_BYTES);
    const page: Record<string, unknown> = { offset, bytes: end - offset, total_bytes: total };
    if (end < total) page.next = `${plain}?offset=${end}`;
    return { contents: [{ uri: offset === 0 ? plain : `${plain}?offset=${offset}`, mimeType: item.mimeType, blob: item.data.subarray(offset, end).toString('base64'), _meta: { [PAGE_META_KEY]: page } }] };
  }
}

/** `?offset=N`: a whole number of bytes (default 0); anything else in the query is refused. */
function pageOffset(query: URLSearchParams, shown: string): number {
  const keys = [...query.keys()];
  if (keys.some((key) => key !== 'offset') || query.getAll('offset').length > 1) throw invalid(`${shown}: the only query a resource takes is ?offset=BYTES`);
  const raw = query.get('offset');
  if (raw === null) return 0;
  if (!/^[0-9]{1,15}$/.test(raw)) throw invalid(`${shown}: offset must be a whole number of bytes`);
  return Number(raw);
}

/**
 * A page of UTF-8 text from `chunk` (read at byte `offset`, up to 6 bytes longer than a page): a start inside a
 * character moves to the next character, and the page ends on a whole character within {@link TEXT_PAGE_BYTES}.
 */
function textPage(plain: string, mimeType: string, chunk: Buffer, offset: number, total: number): ReadResourceResult {
  let start = 0;
  while (start < chunk.length && start < 3 && isContinuation(chunk[start] as number)) start += 1;
  let end = Math.min(chunk.length, start + TEXT_PAGE_BYTES);
  // The next page starts on a character: a sequence that does not fit whole stays for it.
  while (end > start && end < chunk.length && isContinuation(chunk[end] as number)) end -= 1;
  const first = offset + start;
  const next = offset + end;
  const page: Record<string, unknown> = { offset: first, bytes: end - start, total_bytes: total };
  if (next < total) page.next = `${plain}?offset=${next}`;
  return {
    contents: [{ uri: first === 0 ? plain : `${plain}?offset=${first}`, mimeType, text: chunk.subarray(start, end).toString('utf8'), _meta: { [PAGE_META_KEY]: page } }],
  };
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}
