import { ProgressNotificationSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

// The execute output contract over a real stdio client: exact truncation counts, display caps, JSON limits,
// bounded tracebacks, images as MCP image content, and progress notifications only for clients that ask.

const TEN_MILLION = 10 ** 7;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function images(result: CallToolResult): { data: string; mimeType: string }[] {
  return result.content.filter((item) => item.type === 'image') as { data: string; mimeType: string }[];
}

function expectPng(image: { data: string; mimeType: string }): Buffer {
  expect(image.mimeType).toBe('image/png');
  const bytes = Buffer.from(image.data, 'base64');
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  return bytes;
}

describe('default limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('counts every omitted character of a 10^7-character print exactly (stdout and stderr)', async () => {
    const out = await server.structured('execute', { code: `print("x" * ${TEN_MILLION})` });
    // Head (2,048) and tail (6,144): the line's end survives.
    expect(out.stdout).toBe(`${'x'.repeat(8191)}\n`);
    expect(out.stdout_omitted_chars).toBe(TEN_MILLION + 1 - 8192);
    expect(out.stdout_omitted_at).toBe(2048);
    // Only the flags that are set, and no count for the stream that was not cut.
    expect(out.truncated).toEqual({ stdout: true });
    expect(out).not.toHaveProperty('stderr_omitted_chars');
    expect(out).not.toHaveProperty('stderr');

    const err = await server.structured('execute', { code: `import sys\nprint("é" * ${TEN_MILLION}, file=sys.stderr)` });
    expect(err.stderr).toBe(`${'é'.repeat(8191)}\n`);
    expect(err.stderr_omitted_chars).toBe(TEN_MILLION + 1 - 8192);
    expect(err.truncated).toEqual({ stderr: true });
  });

  it('counts file-descriptor-level output exactly too', async () => {
    const result = await server.structured('execute', { code: `import os\nos.write(1, b"z" * ${TEN_MILLION})\nos.write(2, "ü".encode() * 10000)` });
    expect(result.stdout).toBe('z'.repeat(8192));
    expect(result.stdout_omitted_chars).toBe(TEN_MILLION - 8192);
    expect(result.stderr).toBe('ü'.repeat(8192));
    expect(result.stderr_omitted_chars).toBe(10000 - 8192);
    expect(await server.structured('execute', { code: 'print("small")' })).toEqual({ execution_count: expect.any(Number), stdout: 'small\n' });
  });

  it('returns a matplotlib figure shown with plt.show() as MCP image content', async () => {
    const result = await server.call('execute', {
      code: 'import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()',
    });
    expect(result.isError).toBeFalsy();
    const found = images(result);
    expect(found).toHaveLength(1);
    const bytes = expectPng(found[0]!);
    expect(bytes.length).toBeLessThanOrEqual(1.5 * 1024 * 1024);
    const structured = result.structuredContent as any;
    expect(structured.displays).toHaveLength(1);
    // The structured and text copies refer to the image instead of repeating its base64.
    expect(structured.displays[0].data['image/png']).toBe(`[image 1: image/png, ${found[0]!.data.length} base64 characters, returned as MCP image content]`);
    // One representation for the model: the image; the figure's text/plain is said to be left out, and kept in _meta.
    expect(structured.displays[0]).toEqual({ data: { 'image/png': expect.any(String) }, omitted: ['text/plain'] });
    const bundle = (result._meta as any)['ipython-mcp/displays'][0];
    expect(bundle.data['text/plain']).toMatch(/^<Figure size/);
    expect(bundle.data['image/png']).toBe(structured.displays[0].data['image/png']);
    // The text block names the display and the image instead of repeating its base64.
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('[display 1; left out: text/plain]\nimage/png: [image 1');
    expect(text).toContain(`image/png: [image 1: image/png, ${found[0]!.data.length} base64 characters, returned as MCP image content]`);
    expect(text.length).toBeLessThan(4096);
    // The figure was closed after it was shown: nothing is shown again.
    expect(images(await server.call('execute', { code: 'plt.get_fignums()' }))).toEqual([]);
  });

  it('returns a figure left open at the end of a cell, as the inline backend does', async () => {
    const result = await server.call('execute', {
      code: 'fig, ax = plt.subplots()\nax.bar(["a", "b"], [3, 4])\nax.set_title("left open")\nlabel = "done"',
    });
    const found = images(result);
    expect(found).toHaveLength(1);
    expectPng(found[0]!);
    const next = await server.call('execute', { code: 'len(plt.get_fignums())' });
    expect((next.structuredContent as any).result.value).toBe(0);
    expect(images(next)).toEqual([]);
  });

  it('gives the model one representation per display and programs the whole bundle in _meta', async () => {
    const setup = [
      'import pandas as pd',
      'from IPython.display import HTML, Markdown, display',
      "frame = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'] * 20, 'temp': [float(i) for i in range(60)]})",
    ].join('\n');
    expect((await server.call('execute', { code: setup })).isError).toBeFalsy();
    const described = await server.call('execute', { code: 'display(frame.describe())' });
    const shown = (described.structuredContent as any).displays[0];
    expect(shown.data['text/plain']).toMatch(/^\s+temp\ncount\s+60\.0+\n/);
    expect(shown.omitted).toEqual(['text/html']);
    expect(JSON.stringify(described.structuredContent).length).toBeLessThanOrEqual(700);
    expect((described.content[0] as { text: string }).text.length).toBeLessThanOrEqual(700);
    expect((described._meta as any)['ipython-mcp/displays'][0].data['text/html']).toContain('<table');

    // text/plain that names only a type gives way to Markdown, then to the HTML as text (tables stay tables).
    const html = await server.call('execute', {
      code: "display(HTML('<style>p {color: red}</style><table><tr><th>name</th><th>n</th></tr><tr><td>a</td><td>1</td></tr><tr><td>bb</td><td>22</td></tr></table>'))\ndisplay(Markdown('**bold** text'))",
    });
    const [table, markdown] = (html.structuredContent as any).displays;
    expect(table).toEqual({ data: { 'text/plain': expect.stringMatching(/^name +n\na +1\nbb +22$/) }, text_from: 'text/html', omitted: ['text/plain'] });
    expect(markdown).toEqual({ data: { 'text/markdown': '**bold** text' }, omitted: ['text/plain'] });
    const text = (html.content[0] as { text: string }).text;
    expect(text).toContain('[display 1, text/html as text; left out: text/plain]\nname');
    expect(text).toContain('[display 2; left out: text/plain]\ntext/markdown: **bold** text');
    expect(text).not.toContain('<table');
  });

  it("reads a pandas KeyError in a few lines: the user's line, library frames one line each, the exception; the whole in _meta", async () => {
    await server.call('execute', { code: "import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})" });
    const result = await server.call('execute', { code: "frame['nope']" });
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text.length, text).toBeLessThanOrEqual(600);
    expect(text).toMatch(/^----> 1 frame\['nope'\]$/m);
    expect(text).toMatch(/^KeyError: 'nope'$/m);
    expect(text).toContain('The above exception was the direct cause of the following exception:');
    expect(text).toMatch(/^pandas\/core\/frame\.py:\d+ in __getitem__$/m);
    expect(text).not.toContain('Could not get source');
    expect(text).not.toContain('site-packages');
    const traceback = (result.structuredContent as any).error.traceback as string;
    expect(text).toContain(traceback);
    const whole = (result._meta as any)['ipython-mcp/traceback'] as string;
    expect(whole).toMatch(/^File .*site-packages\/pandas\/core\/frame\.py:\d+, in DataFrame\.__getitem__/m);
    expect(whole.length).toBeGreaterThan(traceback.length);
    // A cell's own error has nothing to fold: no second copy.
    expect((await server.call('execute', { code: '1/0' }))._meta).not.toHaveProperty(['ipython-mcp/traceback']);
  });

  it('gives shell escapes as text: \\n line ends, no escape sequences, a rewritten line as last drawn; still a terminal', async () => {
    expect(await server.structured('execute', { code: '!echo hello' })).toEqual({ execution_count: expect.any(Number), stdout: 'hello\n' });
    const colours = await server.structured('execute', { code: "!printf '\\033[31mred\\033[0m\\n 10%%\\r100%%\\n'" });
    expect(colours.stdout).toBe('red\n100%\n');
    // The program still runs in a pseudo-terminal, as under IPython.
    const tty = await server.structured('execute', { code: '!python -c "import sys; print(sys.stdin.isatty(), sys.stdout.isatty())"' });
    expect(tty.stdout).toBe('True True\n');
    // And the filter is gone once the escape ends: a print afterwards keeps its own characters.
    expect((await server.structured('execute', { code: "print('a\\r\\nb')" })).stdout).toBe('a\r\nb\n');
  });

  it('returns IPython.display.Image(data=png_bytes) as image content, displayed or as the cell value', async () => {
    const setup = 'import io\nfrom PIL import Image as PILImage\nfrom IPython.display import Image, display\n' +
      'buffer = io.BytesIO()\nPILImage.new("RGB", (8, 6), "red").save(buffer, "PNG")\npng_bytes = buffer.getvalue()';
    await server.call('execute', { code: setup });
    const displayed = await server.call('execute', { code: 'display(Image(data=png_bytes))' });
    const shown = images(displayed);
    expect(shown).toHaveLength(1);
    expect(expectPng(shown[0]!).equals(Buffer.from(await pngBytes(server)))).toBe(true);
    const asValue = await server.call('execute', { code: 'Image(data=png_bytes)' });
    expect(images(asValue)).toHaveLength(1);
    expectPng(images(asValue)[0]!);
    expect((asValue.structuredContent as any).result).toMatchObject({ kind: 'repr', images: { 'image/png': expect.stringMatching(/^\[image 1: image\/png/) } });
    const both = await server.call('execute', { code: 'display(Image(data=png_bytes))\ndisplay(Image(data=png_bytes))\nImage(data=png_bytes)' });
    expect(images(both)).toHaveLength(3);
    expect((both.structuredContent as any).result.images['image/png']).toMatch(/^\[image 3: /);
  });

  it('re-encodes an image above the size bound with Pillow instead of dropping it, and says from what', async () => {
    const code =
      'import os\nbig = io.BytesIO()\nPILImage.frombytes("RGB", (1200, 1200), os.urandom(1200 * 1200 * 3)).save(big, "PNG")\n' +
      'print(len(big.getvalue()))\ndisplay(Image(data=big.getvalue()))';
    const result = await server.call('execute', { code });
    const structured = result.structuredContent as any;
    expect(Number(structured.stdout)).toBeGreaterThan(2 * 1024 * 1024);
    const [image] = images(result);
    expect(image!.mimeType).toBe('image/jpeg');
    expect(image!.data.length).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(structured.displays[0].metadata['ipython-mcp/resized']).toMatch(/^image\/png 1200×1200 \([\d,]+ base64 characters\) re-encoded as image\/jpeg 1200×1200$/);
    expect(structured).not.toHaveProperty('truncated');
    expect((result.content[0] as { text: string }).text).toContain('re-encoded as image/jpeg 1200×1200');
  });

  it('downscales a 2000×2000 noise plot to 1,568 px so the model sees it', async () => {
    const code = 'import numpy as np, matplotlib.pyplot as plt\nplt.figure(figsize=(20, 20), dpi=100)\nplt.imshow(np.random.rand(2000, 2000))\nplt.show()';
    const result = await server.call('execute', { code });
    const [image] = images(result);
    expect(image, JSON.stringify(result.structuredContent)).toBeDefined();
    const note = (result.structuredContent as any).displays[0].metadata['ipython-mcp/resized'] as string;
    // The inline backend crops the figure to its drawn area (about 1,600 px of the 2,000).
    expect(note).toMatch(/^image\/png \d{4}×\d{4} \(.*\) re-encoded as image\/(png|jpeg) \d+×\d+$/);
    const [width, height] = note.split(' ').pop()!.split('×').map(Number);
    expect(Math.max(width!, height!)).toBeLessThanOrEqual(1568);
    expect((result.content[0] as { text: string }).text).toContain(note);
  });
});

async function pngBytes(server: TestServer): Promise<number[]> {
  return (await server.structured('execute', { code: 'list(png_bytes)' })).result.value as number[];
}

describe('configured limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      IPYTHON_MCP_MAX_TEXT_CHARS: '1000',
      IPYTHON_MCP_MAX_TRACEBACK_CHARS: '600',
      IPYTHON_MCP_MAX_DISPLAY_ITEMS: '3',
      IPYTHON_MCP_MAX_JSON_DEPTH: '3',
      IPYTHON_MCP_MAX_RESULTS: '5',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('truncates stdout and stderr at MAX_TEXT_CHARS with exact counts', async () => {
    const result = await server.structured('execute', { code: `import sys\nprint("o" * ${TEN_MILLION})\nsys.stderr.write("e" * 1500)` });
    expect(result.stdout).toHaveLength(1000);
    expect(result.stdout_omitted_chars).toBe(TEN_MILLION + 1 - 1000);
    expect(result.stderr).toHaveLength(1000);
    expect(result.stderr_omitted_chars).toBe(500);
    expect(result.truncated).toEqual({ stdout: true, stderr: true });
    const text = (await server.call('execute', { code: 'print("o" * 1500)' })).content[0] as { text: string };
    const lines = text.text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['o'.repeat(250), '[stdout truncated: 501 characters omitted here]', 'o'.repeat(749)]);
    expect(lines[3]).toMatch(/^\[whole stdout in \/\S+ipython-mcp-output-\S+-cell2-stdout\.txt; read it with execute, e\.g\. open\(path\)\.read\(\)\[-5000:\]\]$/);
    expect(lines[4]).toBe('In [2]: ok');
  });

  it('caps display items as they arrive and normalises each payload', async () => {
    const result = await server.structured('execute', {
      code: 'from IPython.display import display\nfor i in range(10):\n    display(i)',
    });
    expect(result.displays.map((item: any) => item.data['text/plain'])).toEqual(['0', '1', '2']);
    expect(result.displays_omitted).toBe(7);
    expect(result.truncated.displays).toBe(true);

    const call = await server.call('execute', {
      code:
        'display({"text/plain": "p" * 5000, "application/json": {"a": {"b": {"c": {"d": 1}}}, "list": list(range(50))}}, raw=True)\n' +
        'display({"text/plain": "short"}, metadata={"k": "v"}, raw=True)',
    });
    const payloads = call.structuredContent as Record<string, any>;
    const [cut, small] = payloads.displays;
    expect(cut.data).toEqual({ 'text/plain': 'p'.repeat(1000) });
    expect(cut.omitted).toEqual(['application/json']);
    // The whole bundle, for programs.
    expect((call._meta as any)['ipython-mcp/displays'][0].data['application/json']).toEqual({ a: { b: { c: '…' } }, list: [0, 1, 2, 3, 4] });
    expect(cut.truncated).toBe(true);
    expect(small).toEqual({ data: { 'text/plain': 'short' }, metadata: { k: 'v' } });
    expect(payloads.truncated.displays).toBe(true);
    expect(payloads).not.toHaveProperty('displays_omitted');
  });

  it('applies the JSON depth, item and character limits to results, with flags', async () => {
    const deep = await server.structured('execute', { code: '[[[[["deep"]]]]]' });
    expect(deep.result).toEqual({ value: [[['…']]] });
    expect(deep.truncated.result).toBe(true);
    const many = await server.structured('execute', { code: 'list(range(100))' });
    expect(many.result.value).toEqual([0, 1, 2, 3, 4]);
    expect(many.truncated.result).toBe(true);
    const long = await server.structured('execute', { code: '"s" * 5000' });
    expect(long.result.value).toHaveLength(1000);
    expect(long.truncated.result).toBe(true);
    const fits = await server.structured('execute', { code: '{"a": [1, 2], "b": "ok"}' });
    expect(fits.result.value).toEqual({ a: [1, 2], b: 'ok' });
    expect(fits).not.toHaveProperty('truncated');
    const opaque = await server.structured('execute', { code: 'class Wide:\n    def __repr__(self):\n        return "w" * 5000\nWide()' });
    expect(opaque.result.kind).toBe('repr');
    expect(opaque.result.repr).toHaveLength(1000);
    expect(opaque.truncated.result).toBe(true);
  });

  it('bounds and flags tracebacks and messages', async () => {
    const result = await server.call('execute', {
      code: 'def recurse(n):\n    if n == 0:\n        raise ValueError("m" * 5000)\n    return recurse(n - 1)\nrecurse(40)',
    });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as any).error;
    expect(error.type).toBe('ValueError');
    expect(error.message).toBe('m'.repeat(1000));
    expect(error.message_truncated).toBe(true);
    expect(error.traceback.length).toBeLessThanOrEqual(600);
    expect(error.traceback_truncated).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^In \[\d+\] raised ValueError\n\[traceback truncated: its start was cut\]\n/);
    const shortResult = await server.call('execute', { code: '1 / 0' });
    const short = shortResult.structuredContent as any;
    expect(short).toMatchObject({ status: 'error', error: { kind: 'exception', type: 'ZeroDivisionError', message: 'division by zero' } });
    expect(short.error).not.toHaveProperty('traceback_truncated');
    expect(short.error).not.toHaveProperty('message_truncated');
    // No banner, no padded header line: the user's own cell line and the exception.
    expect(short.error.traceback).toBe(`Cell In[${short.execution_count}], line 1\n----> 1 1 / 0\n\nZeroDivisionError: division by zero`);
    expect((shortResult.content[0] as { text: string }).text).toBe(`In [${short.execution_count}] raised ZeroDivisionError\n${short.error.traceback}`);
  });
});

describe('progress notifications', () => {
  let server: TestServer;
  let unsolicited = 0;
  beforeAll(async () => {
    server = await startServer();
    // Count every progress notification this client receives, then hand it to the SDK's own handler.
    const client = server.client as any;
    server.client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      unsolicited += 1;
      client._onprogress(notification);
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  // Output until 1.5 s, then 0.5 s of silence, so every tick is sent before the cell ends.
  const TICKING = 'import time\nfor i in range(15):\n    print(f"tick {i}", flush=True)\n    time.sleep(0.1)\ntime.sleep(0.5)\n"finished"';

  it('streams output chunks to a client that asked, with an unchanged result', async () => {
    const received: Progress[] = [];
    const before = unsolicited;
    const result = (await server.client.callTool({ name: 'execute', arguments: { code: TICKING } }, undefined, {
      onprogress: (progress) => received.push(progress),
      timeout: 60_000,
    })) as CallToolResult;
    const structured = result.structuredContent as any;
    expect(structured.result.value).toBe('finished');
    expect(structured.stdout).toBe(Array.from({ length: 15 }, (_, i) => `tick ${i}\n`).join(''));
    expect(received.length).toBeGreaterThanOrEqual(3);
    expect(received.length).toBeLessThanOrEqual(20); // coalesced: about one notification per 200 ms
    expect(unsolicited - before).toBe(received.length);
    const progressValues = received.map((item) => item.progress);
    expect(progressValues).toEqual([...progressValues].sort((a, b) => a - b));
    // Whole lines only: every line of every message is one tick, with its stream label on the first.
    const lines = received.flatMap((item) => (item.message ?? '').split('\n'));
    for (const line of lines) expect(line).toMatch(/^(\[stdout\] )?tick \d+$/);
    expect(lines.map((line) => line.replace('[stdout] ', ''))).toEqual(Array.from({ length: 15 }, (_, i) => `tick ${i}`));
    expect(server.transportErrors).toEqual([]);
  });

  it('holds a line that is still being written until its newline', async () => {
    const received: Progress[] = [];
    const code =
      'import sys, time\nfor i in range(4):\n    print(f"step {i}", end="", flush=True)\n    time.sleep(0.3)\n' +
      '    print(" done", flush=True)\n    print("err", i, file=sys.stderr, flush=True)\ntime.sleep(0.5)';
    await server.client.callTool({ name: 'execute', arguments: { code } }, undefined, { onprogress: (progress) => received.push(progress), timeout: 60_000 });
    const messages = received.map((item) => item.message ?? '');
    const stdoutLines: string[] = [];
    for (const message of messages) {
      let stream = '';
      for (const line of message.split('\n')) {
        const labelled = /^\[(stdout|stderr)\] (.*)$/.exec(line);
        if (labelled) stream = labelled[1]!;
        const text = labelled ? labelled[2]! : line;
        expect(stream, message).not.toBe('');
        if (stream === 'stdout') stdoutLines.push(text);
        else expect(text).toMatch(/^err \d$/);
      }
    }
    expect(stdoutLines).toEqual(['step 0 done', 'step 1 done', 'step 2 done', 'step 3 done']);
  });

  it('never sends a notification right behind the result (clients would see an unknown token)', async () => {
    const before = server.transportErrors.length;
    for (let round = 0; round < 6; round += 1) {
      const received: Progress[] = [];
      const result = (await server.client.callTool(
        { name: 'execute', arguments: { code: 'import time\nfor i in range(12):\n    print(i, flush=True)\n    time.sleep(0.04)\nprint("last")' } },
        undefined,
        {
          onprogress: (progress) => {
            received.push(progress);
            // A client that is busy for a moment with each notification: a notification sent right before the
            // response would then be read in the same chunk as the response.
            const until = performance.now() + 50;
            while (performance.now() < until);
          },
          timeout: 60_000,
        },
      )) as CallToolResult;
      expect((result.structuredContent as any).stdout).toContain('last');
      expect(received.length).toBeGreaterThanOrEqual(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.transportErrors.slice(before)).toEqual([]);
  });

  it('sends a heartbeat while a cell runs silently', async () => {
    const received: Progress[] = [];
    const result = (await server.client.callTool({ name: 'execute', arguments: { code: 'import time\ntime.sleep(2.6)\n"quiet"' } }, undefined, {
      onprogress: (progress) => received.push(progress),
      timeout: 60_000,
    })) as CallToolResult;
    expect((result.structuredContent as any).result.value).toBe('quiet');
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received[0]!.message).toMatch(/^running for \d+ s$/);
  });

  it('sends nothing to a client that did not ask', async () => {
    const before = unsolicited;
    // Longer than the heartbeat interval too.
    const result = await server.structured('execute', { code: `${TICKING}\ntime.sleep(0.8)\n"finished"` });
    expect(result.result.value).toBe('finished');
    expect(result.stdout.split('\n')).toHaveLength(16);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(unsolicited - before).toBe(0);
    expect(server.transportErrors).toEqual([]);
  });
});
