import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OutputResources, PAGE_META_KEY, RESOURCE_NOT_FOUND, TEXT_PAGE_BYTES } from './output-resources.js';

const directory = mkdtempSync(join(tmpdir(), 'output-resources-test-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

type Item = { uri: string; text?: string; blob?: string; _meta?: Record<string, { offset: number; bytes: number; total_bytes: number; next?: string }> };

async function pages(outputs: OutputResources, uri: string): Promise<Item[]> {
  const all: Item[] = [];
  let next: string | undefined = uri;
  while (next !== undefined) {
    const item = (await outputs.read(next)).contents[0] as Item;
    all.push(item);
    next = item._meta?.[PAGE_META_KEY]?.next;
  }
  return all;
}

describe('spill files', () => {
  const outputs = new OutputResources('ns', () => directory);
  const name = '00000000000000000042-cell1-stdout.txt';
  // Three-byte characters after one ASCII byte: page ends fall inside characters.
  const text = `a${'€'.repeat(30_000)}z`;
  writeFileSync(join(directory, name), text);

  it('links only files of the spill directory, by name, under the namespace', () => {
    expect(outputs.spillLink(join(directory, name), 'stdout')).toMatchObject({ type: 'resource_link', uri: `ipython-mcp://ns/spill/${name}`, mimeType: 'text/plain' });
    expect(outputs.spillLink(join(tmpdir(), name), 'stdout')).toBeUndefined();
    expect(outputs.spillLink(join(directory, 'notes.txt'), 'stdout')).toBeUndefined();
    expect(new OutputResources('ns', () => undefined).spillLink(join(directory, name), 'stdout')).toBeUndefined();
  });

  it('reads back whole by pages that end on characters and stay within the page size', async () => {
    const read = await pages(outputs, `ipython-mcp://ns/spill/${name}`);
    expect(read.map((item) => item.text).join('')).toBe(text);
    expect(read.length).toBe(Math.ceil(Buffer.byteLength(text) / TEXT_PAGE_BYTES));
    for (const item of read) {
      expect(Buffer.byteLength(item.text as string)).toBeLessThanOrEqual(TEXT_PAGE_BYTES);
      expect(item.text).not.toContain('\ufffd');
    }
    expect(read[0]?.uri).toBe(`ipython-mcp://ns/spill/${name}`);
    expect(read[1]?.uri).toBe(read[0]?._meta?.[PAGE_META_KEY]?.next);
    expect(read.at(-1)?._meta?.[PAGE_META_KEY]).toMatchObject({ total_bytes: Buffer.byteLength(text) });
  });

  it('moves an offset inside a character on to the next one; an offset at the end reads nothing', async () => {
    const item = (await outputs.read(`ipython-mcp://ns/spill/${name}?offset=2`)).contents[0] as Item;
    expect(item.text?.startsWith('€')).toBe(true);
    expect(item._meta?.[PAGE_META_KEY]?.offset).toBe(4);
    const end = Buffer.byteLength(text);
    expect(((await outputs.read(`ipython-mcp://ns/spill/${name}?offset=${end}`)).contents[0] as Item).text).toBe('');
    await expect(outputs.read(`ipython-mcp://ns/spill/${name}?offset=${end + 1}`)).rejects.toThrow(/past the end/);
  });

  it('refuses another namespace, junk and files that are gone', async () => {
    await expect(outputs.read(`ipython-mcp://other/spill/${name}`)).rejects.toThrow(/belongs to namespace "other", not this session's "ns"/);
    for (const junk of ['', 'x', 'ipython-mcp://ns', 'ipython-mcp://ns/spill/', 'ipython-mcp://ns/spill/a/b.txt', 'ipython-mcp://ns/other/x', 'file:///etc/passwd', `ipython-mcp://ns/spill/${name}#x`]) {
      await expect(outputs.read(junk), junk).rejects.toThrow(/Unknown resource/);
    }
    for (const query of ['?offset=', '?offset=1e3', '?offset=1&offset=2', '?length=5']) {
      await expect(outputs.read(`ipython-mcp://ns/spill/${name}${query}`), query).rejects.toThrow(/offset/);
    }
    const gone = '00000000000000000043-cell2-stderr.txt';
    writeFileSync(join(directory, gone), 'x');
    unlinkSync(join(directory, gone));
    await expect(outputs.read(`ipython-mcp://ns/spill/${gone}`)).rejects.toMatchObject({ code: RESOURCE_NOT_FOUND, message: expect.stringMatching(/is gone/) });
  });
});

describe('kept images and results', () => {
  it('serves an image as base64 pages, and forgets the oldest past its bounds', async () => {
    const outputs = new OutputResources('ns', () => undefined, { maxItems: 2, maxBytes: 1 << 30 });
    const raw = Buffer.from(Array.from({ length: 300 }, (_, index) => index % 256));
    const first = outputs.keepImage('image/png', raw, 1);
    expect(first).toMatchObject({ type: 'resource_link', mimeType: 'image/png', size: 300 });
    expect(first.uri).toMatch(/^ipython-mcp:\/\/ns\/image\/[a-z0-9]{8}-1\.png$/);
    const [page] = await pages(outputs, first.uri);
    expect(Buffer.from(page?.blob as string, 'base64').equals(raw)).toBe(true);
    const result = outputs.keepResult('{"a": 1}');
    expect(((await outputs.read(result.uri)).contents[0] as Item).text).toBe('{"a": 1}');
    outputs.keepImage('image/jpeg', raw, 2);
    await expect(outputs.read(first.uri)).rejects.toThrow(/no longer kept: a namespace keeps its latest 2 images and results/);
    expect((await outputs.list()).map((resource) => resource.mimeType)).toEqual(['application/json', 'image/jpeg']);
    // A name of another namespace instance (numbers restart when a namespace is made again): not known here.
    await expect(outputs.read('ipython-mcp://ns/image/zzzzzzzz-1.png')).rejects.toThrow(/not known here/);
    await expect(outputs.read(first.uri.replace('.png', '.json'))).rejects.toThrow(/Unknown resource/);
    outputs.close();
    await expect(outputs.read(result.uri)).rejects.toMatchObject({ code: RESOURCE_NOT_FOUND });
  });
});
