// A cell's output as MCP resources (packages/mcp-server/src/resources/output-resources.ts): spill files and images read back
// with resources/read, whole and by pages, by a client process that runs elsewhere (another working directory, no
// use of the server's paths); another namespace's resources refused; junk and stale URIs refused with clear errors;
// the same links over stdio, on a detached cell's result and on a task's; and the largest result the default bounds
// allow stays within Claude Code's 25,000-token cap on a tool result.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_MODES, startServer, taggedProcesses, type TestServer } from './harness.js';
import { connectHttp, retry, startHttpServer, type HttpTestClient, type HttpTestServer } from './http-harness.js';

const READER = fileURLToPath(new URL('./fixtures/resource-reader.mjs', import.meta.url));
const TAG = randomUUID();
const TEXT_PAGE = 32 * 1024;
const BLOB_PAGE = 1024 * 1024;

/** Python that defines `png(width, height, rows)`: a PNG from raw RGB rows, no Pillow needed. */
const PNG_HELPER = `
import os, struct, zlib
from IPython.display import Image, display
def png(w, h, rows):
    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
    header = struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)
    return b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(rows, 1)) + chunk(b'IEND', b'')
`;

/** A 1000×400 PNG of noise (about 1.2 MB: two pages) and a stdout of 100,001 bytes whose pages cut through characters. */
const CELL = `${PNG_HELPER}
noisy = png(1000, 400, b''.join(b'\\x00' + os.urandom(3000) for _ in range(400)))
print('ab€' * 20000)
display(Image(data=noisy, format='png'))
`;
const STDOUT = `${'ab€'.repeat(20000)}\n`;

interface ReaderReport {
  cwd: string;
  structured: Record<string, any>;
  images: string[];
  read: Array<{ link: Record<string, any>; pages: Array<{ uri: string; meta: Record<string, any> }>; bytes: number; sha256: string; text?: string }>;
  extra: Array<{ uri: string; ok: boolean; code?: number; message?: string }>;
  listed: string[];
  templates: string[];
}

/** Runs the reader in its own process from `cwd`. */
async function readElsewhere(url: string, token: string, code: string, extra: string[], cwd: string): Promise<ReaderReport> {
  const { stdout } = await promisify(execFile)(process.execPath, [READER], {
    cwd,
    env: { ...(process.env as Record<string, string>), READER_URL: url, READER_TOKEN: token, READER_CODE: code, READER_EXTRA: JSON.stringify(extra) },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  return JSON.parse(stdout) as ReaderReport;
}

function links(result: CallToolResult): Array<{ uri: string; name: string; mimeType?: string }> {
  return result.content.filter((block) => block.type === 'resource_link') as Array<{ uri: string; name: string; mimeType?: string }>;
}

/** Reads every page of `uri` through `client`, following each page's `next`. */
async function readAll(client: TestServer['client'], uri: string): Promise<{ data: Buffer; pages: number }> {
  const parts: Buffer[] = [];
  let next: string | undefined = uri;
  while (next !== undefined) {
    const item = (await client.readResource({ uri: next })).contents[0] as { text?: string; blob?: string; _meta?: Record<string, any> };
    parts.push(item.text !== undefined ? Buffer.from(item.text, 'utf8') : Buffer.from(item.blob as string, 'base64'));
    next = item._meta?.['ipython-mcp/page']?.next;
  }
  return { data: Buffer.concat(parts), pages: parts.length };
}

describe('over --http, from a client process elsewhere', () => {
  let server: HttpTestServer | undefined;
  let clients: HttpTestClient[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-reader-'));

  afterEach(async () => {
    await Promise.all(clients.map((client) => client.close()));
    clients = [];
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await retry(async () => expect(await taggedProcesses(TAG)).toEqual([]), 10_000);
  });

  it('reads back a spill file and an image, whole and by pages; refuses other namespaces, junk and stale URIs', async () => {
    server = await startHttpServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG });
    const report = await readElsewhere(
      `${server.url}/a`,
      server.token,
      CELL,
      ['ipython-mcp://b/spill/00000000000000000001-cell1-stdout.txt', 'ipython-mcp://a/spill/../../etc/passwd', 'ipython-mcp://a/image/zzz.png', 'https://example.com/x', 'not a uri', 'ipython-mcp://a/spill/00000000000000000001-cell1-stdout.txt'],
      scratch,
    );
    expect(report.cwd).toBe(scratch);
    const structured = report.structured;
    expect(typeof structured.stdout_spill).toBe('string');

    const spill = report.read.find((each) => each.link.mimeType === 'text/plain');
    expect(spill?.link.uri).toMatch(/^ipython-mcp:\/\/a\/spill\/\d+-[\w-]+\.txt$/);
    expect(spill?.text).toBe(STDOUT);
    expect(spill?.bytes).toBe(Buffer.byteLength(STDOUT));
    expect(spill?.pages.length).toBe(Math.ceil(Buffer.byteLength(STDOUT) / TEXT_PAGE));
    for (const page of spill?.pages ?? []) expect(page.meta.bytes).toBeLessThanOrEqual(TEXT_PAGE);
    expect(spill?.pages[1]?.uri).toMatch(/\?offset=\d+$/);
    expect(spill?.pages.at(-1)?.meta.next).toBeUndefined();

    const image = report.read.find((each) => each.link.mimeType === 'image/png');
    expect(image?.link.uri).toMatch(/^ipython-mcp:\/\/a\/image\/[a-z0-9]{8}-\d+\.png$/);
    expect(report.images).toHaveLength(1);
    expect(image?.sha256).toBe(report.images[0]);
    expect(image?.bytes).toBeGreaterThan(BLOB_PAGE);
    expect(image?.pages).toHaveLength(2);

    const [other, dotdot, unknownImage, https, junk, staleSpill] = report.extra;
    expect(other).toMatchObject({ ok: false, code: -32602 });
    expect(other?.message).toMatch(/belongs to namespace "b", not this session's "a"/);
    for (const refused of [dotdot, unknownImage, https, junk]) expect(refused?.message).toMatch(/Unknown resource/);
    expect(staleSpill).toMatchObject({ ok: false, code: -32002 });
    expect(staleSpill?.message).toMatch(/is gone: a spill file lasts while its namespace runs/);

    expect(report.listed).toEqual(expect.arrayContaining([spill?.link.uri, image?.link.uri]));
    expect(report.templates).toContain('ipython-mcp://a/spill/{name}{?offset}');

    // A session of another namespace is refused a's resources and lists none of them.
    const b = await connectHttp(`${server.url}/b`, server.token);
    clients.push(b);
    for (const uri of [spill?.link.uri, image?.link.uri]) {
      await expect(b.client.readResource({ uri: uri as string })).rejects.toThrow(/belongs to namespace "a", not this session's "b"/);
    }
    expect((await b.client.listResources()).resources).toEqual([]);

    // A later session of a reads them; once the file is gone (the spill budget, the namespace's end), a clear error.
    const again = await connectHttp(`${server.url}/a`, server.token);
    clients.push(again);
    expect((await readAll(again.client, image?.link.uri as string)).data.length).toBe(image?.bytes);
    unlinkSync(structured.stdout_spill as string);
    await expect(again.client.readResource({ uri: spill?.link.uri as string })).rejects.toThrow(/is gone/);
    await expect(again.client.readResource({ uri: `${image?.link.uri}?offset=${(image?.bytes ?? 0) + 1}` })).rejects.toThrow(/past the end/);
    await expect(again.client.readResource({ uri: `${image?.link.uri}?offset=-1` })).rejects.toThrow(/whole number of bytes/);
    await expect(again.client.readResource({ uri: `${image?.link.uri}?page=2` })).rejects.toThrow(/only query a resource takes is \?offset=BYTES/);
  });
});

describe('over stdio', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each(SANDBOX_MODES)('links a spill file and an image; the link reads back; a detached cell carries the same links ($mode)', async ({ env }) => {
    server = await startServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG, ...env });
    const result = await server.call('execute', { code: `${PNG_HELPER}\nprint('x' * 50000)\ndisplay(Image(data=png(8, 8, b''.join(b'\\x00' + bytes(24) for _ in range(8))), format='png'))` });
    const found = links(result);
    expect(found.map((link) => link.uri)).toEqual([expect.stringMatching(/^ipython-mcp:\/\/default\/image\/.+\.png$/), expect.stringMatching(/^ipython-mcp:\/\/default\/spill\//)]);
    // The existing fields stay: the spill's path and the image as MCP image content.
    expect(typeof (result.structuredContent as Record<string, unknown>).stdout_spill).toBe('string');
    const inline = result.content.find((block) => block.type === 'image') as { data: string };
    expect((await readAll(server.client, found[0]!.uri)).data.equals(Buffer.from(inline.data, 'base64'))).toBe(true);
    const spilled = await readAll(server.client, found[1]!.uri);
    expect(spilled.data.toString('utf8')).toBe(`${'x'.repeat(50000)}\n`);
    expect(spilled.pages).toBe(2);

    const detached = await server.structured('execute', { code: "import time\ntime.sleep(1.5)\nprint('y' * 20000)", detach_after_seconds: 0.3 });
    expect(detached.status).toBe('running');
    const finished = await server.call('job', { job: detached.job, wait_seconds: 30 });
    const [link] = links(finished);
    expect(link?.uri).toMatch(/^ipython-mcp:\/\/default\/spill\//);
    expect((await readAll(server.client, link!.uri)).data.toString('utf8')).toBe(`${'y'.repeat(20000)}\n`);
  });

  it("a task's result (tasks/result) carries the same links", async () => {
    server = await startServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG });
    const created = await server.client.request(
      { method: 'tools/call', params: { name: 'execute', arguments: { code: "print('t' * 30000)" } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    const result = (await server.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult;
    const [link] = links(result);
    expect(link?.uri).toMatch(/^ipython-mcp:\/\/default\/spill\//);
    expect((await readAll(server.client, link!.uri)).data.toString('utf8')).toBe(`${'t'.repeat(30000)}\n`);
  });

  /** The estimate: the longer of what Claude Code forwards (the structured JSON) and Codex forwards (the text), links
   * included, at 3 characters a token; each image at most 1,600 tokens (width × height / 750 after scaling to 1,568
   * px: 1568² / 750 = 3,278, which the API scales down to about 1,600). */
  function estimate(result: CallToolResult): number {
    const text = result.content.filter((block) => block.type === 'text').reduce((sum, block) => sum + (block as { text: string }).text.length, 0);
    const linkChars = links(result).reduce((sum, link) => sum + JSON.stringify(link).length, 0);
    const images = result.content.filter((block) => block.type === 'image').length;
    return Math.ceil((Math.max(text, JSON.stringify(result.structuredContent).length) + linkChars) / 3) + images * 1600;
  }

  // Every bound at once: stdout and stderr at their 8,192 characters, of characters JSON escapes to two; a long
  // value; and the 20 display slots either as HTML tables that widen when turned into text or as images at the
  // largest size a model reads (solid, so small on the wire), with one more image as the value's.
  const STREAMS = `${PNG_HELPER}
import sys
from IPython.display import HTML
big = png(1568, 1568, b''.join(b'\\x00' + bytes(1568 * 3) for _ in range(1568)))
print('"\\\\' * 20000)
print('\\t"' * 20000, file=sys.stderr)
`;

  it("keeps the largest text result the default bounds allow within Claude Code's 25,000-token cap; the whole of it is a resource", async () => {
    server = await startServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG });
    const table = `'<table><tr>' + '<td>a</td>' * 30 + '</tr>' + ('<tr>' + '<td>"</td>' * 30 + '</tr>') * 60 + '</table>'`;
    const result = await server.call('execute', { code: `${STREAMS}\nfor i in range(20):\n    display(HTML(${table}))\n'"' * 100000` });
    const structured = result.structuredContent as Record<string, any>;
    expect(structured.displays).toHaveLength(20);
    expect(estimate(result)).toBeLessThanOrEqual(25_000);
    const whole = links(result).find((link) => link.name === 'whole-result');
    expect(whole).toBeDefined();
    expect(structured.stdout).toContain(whole!.uri);
    const kept = JSON.parse((await readAll(server.client, whole!.uri)).data.toString('utf8')) as Record<string, any>;
    expect(kept.stdout.length).toBeGreaterThan(structured.stdout.length);
    expect(kept.displays).toHaveLength(20);
    expect(JSON.stringify(kept).length).toBeGreaterThan(3 * 25_000);

    // A value of many small items (no long string to cut) is cut to a prefix; the whole value is a resource.
    const nested = await server.call('execute', { code: '[[list(range(100)) for _ in range(100)] for _ in range(10)]' });
    expect(estimate(nested)).toBeLessThanOrEqual(25_000);
    const wholeValue = links(nested).find((link) => link.name === 'whole-result');
    const value = JSON.parse((await readAll(server.client, wholeValue!.uri)).data.toString('utf8')).result.value as number[][][];
    expect(value).toHaveLength(10);
    expect(value[9]![99]![99]).toBe(99);
  });

  it("keeps the largest image result the default bounds allow within the cap: images past the inline budget go as links", async () => {
    server = await startServer({ IPYTHON_MCP_TEST_RUN_TAG: TAG });
    const code = `${STREAMS}\nfor i in range(20):\n    display(Image(data=big, format='png'))\nclass Picture:\n    def _repr_png_(self):\n        return big\nPicture()`;
    const result = await server.call('execute', { code });
    const imageLinks = links(result).filter((link) => link.mimeType === 'image/png');
    expect(imageLinks).toHaveLength(21);
    const inline = result.content.filter((block) => block.type === 'image').length;
    expect(inline).toBeGreaterThan(0);
    expect(inline).toBeLessThan(21);
    expect(estimate(result)).toBeLessThanOrEqual(25_000);
    // An image sent as a link only says so where its data would be.
    expect(JSON.stringify(result.structuredContent)).toContain(`returned as resource link ${imageLinks[20]!.uri}`);
    const last = await readAll(server.client, imageLinks[20]!.uri);
    expect(last.data.subarray(1, 4).toString('latin1')).toBe('PNG');
  });
});
