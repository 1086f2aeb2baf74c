// Real agent turns: the real `claude -p` and `codex exec` binaries drive the built server while a scripted
// stand-in model on 127.0.0.1 (fixtures/stand-in-model.ts) asks for the tool calls and records what the client
// hands back. Each run has a deadline, a fresh HOME, dummy API keys, and nothing but loopback addresses; the
// commands are the headless ones docs/clients.md gives (blocks claude-print and codex-exec). Assertions are on facts the model must see (the
// value, an image block, the error, the timeout), not on the exact JSON of a result.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, testPython } from './harness.js';
import { agentSuite, expectRun, runClaudeCode, runCodexExec } from './fixtures/agent-runs.js';
import type { RunResult } from './fixtures/processes.js';
import { startStandInModel, type ModelTurn, type StandInModel, type Step } from './fixtures/stand-in-model.js';

/** Records every MCP frame between the client and the server, with its time. */
const TAP = fileURLToPath(new URL('./fixtures/stdio-tap.mjs', import.meta.url));
const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
const tapLog = (home: string) => join(home, 'mcp-frames.jsonl');

/** One MCP frame the tap saw: when, which way (`in` = client to server), and the message. */
interface Frame {
  t: number;
  dir: 'in' | 'out';
  message: Record<string, any>;
}

function framesOf(home: string): Frame[] {
  const file = tapLog(home);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const entry = JSON.parse(line) as { t: number; dir: 'in' | 'out'; frame: string };
      return { t: entry.t, dir: entry.dir, message: JSON.parse(entry.frame) as Record<string, any> };
    });
}
/** A 1x1 PNG, displayed by a cell. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

/** State across calls, an image display, an error and a timeout, in one session. */
const SESSION_SCRIPT: Step[] = [
  { tool: 'execute', input: { code: 'x = 41' } },
  { tool: 'execute', input: { code: 'x + 1' } },
  { tool: 'execute', input: { code: `import base64\nfrom IPython.display import Image, display\ndisplay(Image(data=base64.b64decode("${PNG}")))` } },
  { tool: 'execute', input: { code: '1 / 0' } },
  { tool: 'execute', input: { code: 'import time\ntime.sleep(30)' } },
  { tool: 'execute', input: { code: 'x' } },
  { text: 'All done.' },
];

/** A noise plot: 2000×2000 at 20×20 in, which the worker re-encodes to at most 1,568 px. */
const NOISE_SCRIPT: Step[] = [
  {
    tool: 'execute',
    input: { code: 'import numpy as np, matplotlib.pyplot as plt\nplt.figure(figsize=(20, 20), dpi=100)\nplt.imshow(np.random.rand(2000, 2000))\nplt.show()', timeout_seconds: 60 },
  },
  { text: 'All done.' },
];

/** Width and height of a base64 PNG (IHDR) or JPEG (first SOFn marker), read from its bytes. */
function imageSize(base64: string): [number, number] | undefined {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.subarray(1, 4).toString('latin1') === 'PNG') return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  for (let at = 2; at + 9 < bytes.length; at += 2 + bytes.readUInt16BE(at + 2)) {
    const marker = bytes[at + 1]!;
    if (marker >= 0xc0 && marker <= 0xc3) return [bytes.readUInt16BE(at + 7), bytes.readUInt16BE(at + 5)];
  }
  return undefined;
}

/** A tool registered mid-session, then called on the very next model turn. */
const REGISTER_SCRIPT: Step[] = [
  { tool: 'execute', input: { code: 'def add_one(n: int) -> int:\n    """Adds one."""\n    return n + 1' } },
  { tool: 'register_tool', input: { name: 'add_one' } },
  { tool: 'add_one', input: { n: 41 } },
  { text: 'All done.' },
];

/**
 * A long cell: past the server's deadline (2 s here, SERVER_ENV) with timeout_seconds, and past the client's tool
 * timeout when the test lowers that to LOW_CLIENT_TIMEOUT_S (the clients' defaults, 60 s for Codex and Claude
 * Code's MCP_TOOL_TIMEOUT, would take minutes to outlast; the lowered value stands in for them).
 */
const LONG_CELL_SECONDS = 6;
const LOW_CLIENT_TIMEOUT_S = 3;
const LONG_CELL_SCRIPT: Step[] = [
  { tool: 'execute', input: { code: `import time\ntime.sleep(${LONG_CELL_SECONDS})\n'long cell value ' + str(6 * 7)`, timeout_seconds: LONG_CELL_SECONDS + 10 } },
  { tool: 'execute', input: { code: '"after the long cell"' } },
  { text: 'All done.' },
];

/** Settings for every run: a short operation deadline, so the sleeping cell times out quickly. */
const SERVER_ENV = { IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '2', IPYTHON_MCP_INTERRUPTION_GRACE_SECONDS: '2' };

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-agents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Everything the client handed back for one tool call, as text, to look for facts in. */
const seen = (turn: ModelTurn | undefined) => JSON.stringify(turn?.toolResult ?? null);

/** The facts of the session script, whatever shape each client gives a tool result. */
function expectSessionFacts(
  model: StandInModel,
  isImage: ((block: Record<string, any>) => boolean) | undefined,
  isError: (result: any) => boolean,
): void {
  expect(model.turns.length, `no request offered the server's tools; other requests: ${model.sideRequests.join(', ')}`).toBeGreaterThanOrEqual(7);
  const results = model.turns.slice(1).map((turn) => turn.toolResult as Record<string, any> | undefined);
  expect(results.slice(0, 6).every((result) => result !== undefined), JSON.stringify(model.turns.map((turn) => turn.toolResult))).toBe(true);
  expect(seen(model.turns[2])).toContain('42');
  if (isImage) expect(imageBlocks(results[2]).some(isImage), seen(model.turns[3]).slice(0, 2000)).toBe(true);
  expect(isError(results[3])).toBe(true);
  expect(seen(model.turns[4])).toContain('ZeroDivisionError');
  expect(seen(model.turns[5])).toMatch(/timeout|timed out/i);
  // The namespace survived the interrupted cell.
  expect(seen(model.turns[6])).toContain('41');
}

/** Every object nested in a tool result (content blocks of any shape). */
function imageBlocks(value: unknown): Array<Record<string, any>> {
  const found: Array<Record<string, any>> = [];
  const walk = (item: unknown) => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (item !== null && typeof item === 'object') {
      found.push(item as Record<string, any>);
      Object.values(item).forEach(walk);
    }
  };
  walk(value);
  return found;
}

describe('Claude Code agent turns (claude -p)', () => {
  const { bin, marker } = agentSuite('claude');

  function runClaude(
    model: StandInModel,
    prompt: string,
    home = mkdtempSync(join(scratch, 'claude-home-')),
    clientEnv: Record<string, string> = {},
  ): Promise<RunResult> {
    const server = { command: process.execPath, args: [TAP, tapLog(home), process.execPath, CLI], env: { IPYTHON_MCP_PYTHON: testPython(), ...SERVER_ENV } };
    return runClaudeCode({ bin: bin(), model, prompt, home, servers: { ipython: server }, marker, clientEnv });
  }

  it('keeps state across calls, hands back an image block, an error and a timeout, on protocol 2026-07-28', async () => {
    const model = await startStandInModel('anthropic', SESSION_SCRIPT);
    try {
      const home = mkdtempSync(join(scratch, 'claude-home-'));
      expectRun(await runClaude(model, 'Run the scripted session.', home));
      expectSessionFacts(
        model,
        (block) => block.type === 'image' && block.source?.media_type === 'image/png' && block.source?.data === PNG,
        (result) => result?.is_error === true,
      );
      // What the server saw: Claude Code's discovery was answered with 2026-07-28, no initialize followed, and every
      // tool call carried that revision in its envelope.
      const frames = framesOf(home);
      const discover = frames.find((frame) => frame.dir === 'in' && frame.message.method === 'server/discover');
      const answer = frames.find((frame) => frame.dir === 'out' && frame.message.id === discover?.message.id);
      expect(answer?.message.result?.supportedVersions).toContain('2026-07-28');
      expect(frames.some((frame) => frame.dir === 'in' && frame.message.method === 'initialize')).toBe(false);
      const calls = frames.filter((frame) => frame.dir === 'in' && frame.message.method === 'tools/call');
      expect(calls.length).toBeGreaterThanOrEqual(6);
      expect(calls.every((frame) => frame.message.params._meta?.['io.modelcontextprotocol/protocolVersion'] === '2026-07-28')).toBe(true);
    } finally {
      await model.close();
    }
  });

  it('offers a tool registered mid-session on the next model turn, and calls it', async () => {
    const model = await startStandInModel('anthropic', REGISTER_SCRIPT);
    try {
      const home = mkdtempSync(join(scratch, 'claude-home-'));
      expectRun(await runClaude(model, 'Register and call a tool.', home));
      const frames = framesOf(home);
      const afterRegister = model.turns[2];
      expect(model.clientName(model.turns[0]!, 'add_one')).toBeUndefined();
      // The server holds the register_tool answer until Claude Code has re-listed (RelistGate): without that,
      // this request still lacked the tool and the model could only call it one turn later.
      expect(afterRegister && model.clientName(afterRegister, 'add_one'), timeline(frames, model.turns)).toBe('mcp__ipython__add_one');
      expectNotifiedBeforeAnswer(frames);
      const relisted = frames.filter((frame) => frame.dir === 'in' && frame.message.method === 'tools/list');
      expect(relisted.length).toBeGreaterThanOrEqual(2);
      expect(seen(model.turns[3])).toContain('42');
      expect((model.turns[3]?.toolResult as Record<string, any>).is_error).not.toBe(true);
    } finally {
      await model.close();
    }
  });

  it('completes a cell longer than the server deadline and the client timeout, with timeout_seconds and MCP_TOOL_TIMEOUT', async () => {
    const model = await startStandInModel('anthropic', LONG_CELL_SCRIPT);
    try {
      const started = performance.now();
      const result = await runClaude(model, 'Run a long cell.', undefined, { MCP_TOOL_TIMEOUT: String((LONG_CELL_SECONDS + 20) * 1000) });
      console.log(describeLongCell('Claude Code', `MCP_TOOL_TIMEOUT=${(LONG_CELL_SECONDS + 20) * 1000}`, model, result, started));
      expectRun(result);
      expect(seen(model.turns[1])).toContain('long cell value 42');
      expect((model.turns[1]?.toolResult as Record<string, any>).is_error).not.toBe(true);
      expect(seen(model.turns[2])).toContain('after the long cell');
    } finally {
      await model.close();
    }
  });

  it('measures what Claude Code does with a call that outlasts MCP_TOOL_TIMEOUT', async () => {
    const model = await startStandInModel('anthropic', LONG_CELL_SCRIPT);
    try {
      const started = performance.now();
      const home = mkdtempSync(join(scratch, 'claude-home-'));
      const result = await runClaude(model, 'Run a long cell.', home, { MCP_TOOL_TIMEOUT: String(LOW_CLIENT_TIMEOUT_S * 1000) });
      console.log(describeLongCell('Claude Code', `MCP_TOOL_TIMEOUT=${LOW_CLIENT_TIMEOUT_S * 1000}`, model, result, started));
      console.log(`[measure] Claude Code after its timeout sends: ${cancellations(framesOf(home))}`);
      expectRun(result);
      // It gives up at its own timeout and tells the model so, as an error; the value never reaches the model.
      expect((model.turns[1]?.toolResult as Record<string, any>).is_error).toBe(true);
      // The value is distinctive: message ids (time-ordered UUIDs) may contain any short number.
      expect(seen(model.turns[1])).not.toContain('long cell value 42');
      expect(seen(model.turns[1])).toMatch(/timed out|timeout/i);
      // It cancels the call (notifications/cancelled), so the server interrupts the cell and keeps the namespace:
      // the next call runs at once.
      const frames = framesOf(home);
      expect(frames.filter((frame) => frame.dir === 'in' && frame.message.method === 'notifications/cancelled')).toHaveLength(1);
      expect(seen(model.turns[2])).toContain('after the long cell');
    } finally {
      await model.close();
    }
  });

  it('hands the 2000×2000 noise plot to the model as an image block of at most 1,568 px', async () => {
    const model = await startStandInModel('anthropic', NOISE_SCRIPT);
    try {
      expectRun(await runClaude(model, 'Plot the noise.'));
      const blocks = imageBlocks(model.turns[1]?.toolResult).filter((block) => block.type === 'image' && typeof block.source?.data === 'string');
      expect(blocks, seen(model.turns[1]).slice(0, 2000)).toHaveLength(1);
      const size = imageSize(blocks[0]!.source.data as string);
      console.log(`[measure] Claude Code, 2000×2000 noise plot: one ${String(blocks[0]!.source.media_type)} block, ${size?.join('×')} px, ${String(blocks[0]!.source.data.length)} base64 characters; request ${model.turns[1]!.chars} characters`);
      expect(size).toBeDefined();
      expect(Math.max(...size!)).toBeLessThanOrEqual(1568);
    } finally {
      await model.close();
    }
  });
});

/** What the model was handed for the long cell, and how long the whole CLI run took, for the [measure] lines. */
function describeLongCell(client: string, setting: string, model: StandInModel, result: RunResult, started: number): string {
  return `[measure] ${client}, ${setting}, ${LONG_CELL_SECONDS} s cell: exit ${String(result.code)}, run ${((performance.now() - started) / 1000).toFixed(1)} s; the model got: ${seen(model.turns[1]).slice(0, 400)}; next call: ${seen(model.turns[2]).slice(0, 200)}`;
}

/** The cancellations the client sent and what the server answered the long call, for the [measure] lines. */
function cancellations(frames: Frame[]): string {
  const call = frames.find((frame) => frame.dir === 'in' && frame.message.method === 'tools/call');
  const cancelled = frames.filter((frame) => frame.dir === 'in' && frame.message.method === 'notifications/cancelled');
  const answer = frames.find((frame) => frame.dir === 'out' && call !== undefined && frame.message.id === call.message.id);
  const t0 = call?.t ?? 0;
  return `${cancelled.length} notifications/cancelled (at ${cancelled.map((frame) => `${((frame.t - t0) / 1000).toFixed(1)} s`).join(', ') || '-'}); server answer at ${answer ? `${((answer.t - t0) / 1000).toFixed(1)} s: ${JSON.stringify(answer.message.result?.structuredContent ?? answer.message.result ?? answer.message.error).slice(0, 200)}` : 'none'}`;
}

/** `notifications/tools/list_changed` left before the `register_tool` answer. */
function expectNotifiedBeforeAnswer(frames: Frame[]): void {
  const notified = frames.findIndex((frame) => frame.message.method === 'notifications/tools/list_changed');
  const call = frames.find((frame) => frame.dir === 'in' && frame.message.params?.name === 'register_tool');
  const answer = frames.findIndex((frame) => frame.dir === 'out' && call !== undefined && frame.message.id === call.message.id && 'result' in frame.message);
  expect(notified).toBeGreaterThan(-1);
  expect(answer).toBeGreaterThan(notified);
}

/** The MCP frames and model requests in time order (for diagnosing). */
function timeline(frames: Frame[], turns: ModelTurn[]): string {
  const t0 = frames[0]?.t ?? 0;
  const rows = [
    ...frames.map((frame) => ({ t: frame.t, what: `${frame.dir} ${frame.message.method ?? `response ${String(frame.message.id)}`} ${frame.message.params?.name ?? ''}` })),
    ...turns.map((turn, index) => ({ t: turn.at, what: `MODEL turn ${index} offered ${turn.offered.filter((name) => name.includes('add_one')).join(',')}` })),
  ].sort((a, b) => a.t - b.t);
  return rows.map((row) => `${(row.t - t0).toFixed(1).padStart(8)} ${row.what}`).join('\n');
}

// Codex speaks 2026-07-28 behind its `mcp_2026_07_28` feature (off by default): every turn runs both ways.
// (0.171 applies it to Streamable HTTP servers only; over stdio both runs are 2025-era.)
describe.each([{ mcp2026: false }, { mcp2026: true }])('Codex agent turns (codex exec, [features] mcp_2026_07_28 = $mcp2026)', ({ mcp2026 }) => {
  const { bin, marker } = agentSuite('codex');

  function runCodex(model: StandInModel, prompt: string, home = mkdtempSync(join(scratch, 'codex-home-')), toolTimeoutSec = 60): Promise<RunResult> {
    const server = { command: process.execPath, args: [TAP, tapLog(home), process.execPath, CLI], env: { IPYTHON_MCP_PYTHON: testPython(), ...SERVER_ENV } };
    const configToml = mcp2026 ? '[features]\nmcp_2026_07_28 = true' : undefined;
    return runCodexExec({ bin: bin(), model, prompt, home, servers: { ipython: server }, marker, catalog: CODEX_CATALOG, toolTimeoutSec, configToml });
  }

  it('keeps state across calls, hands back the image reference, an error and a timeout', async () => {
    const model = await startStandInModel('responses', SESSION_SCRIPT);
    try {
      const home = mkdtempSync(join(scratch, 'codex-home-'));
      expectRun(await runCodex(model, 'Run the scripted session.', home));
      // What the server saw: Codex 0.171 keeps `initialize` on stdio with the setting on as well (the setting moves
      // its Streamable HTTP connections to 2026-07-28: http-agent-turns.e2e.test.ts).
      const frames = framesOf(home).filter((frame) => frame.dir === 'in');
      expect(frames.some((frame) => frame.message.method === 'initialize')).toBe(true);
      expect(frames.some((frame) => frame.message.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== undefined)).toBe(false);
      // Codex 0.171.0 hands MCP results back as text ("Wall time: … Output: …") and drops image content, even
      // for an image-capable model: the model reads the display's reference, not the picture (docs/clients.md).
      expectSessionFacts(model, undefined, (result) => JSON.stringify(result).includes('ZeroDivisionError'));
      expect(seen(model.turns[3])).toContain('image/png');
    } finally {
      await model.close();
    }
  });

  it('with the 2000×2000 noise plot, gives the model the resized note and the image reference, not the picture', async () => {
    const model = await startStandInModel('responses', NOISE_SCRIPT);
    try {
      expectRun(await runCodex(model, 'Plot the noise.'));
      const text = seen(model.turns[1]);
      const body = JSON.stringify(model.turns[1]?.body ?? {});
      const pictures = imageBlocks(model.turns[1]?.body).filter((item) => item.type === 'input_image' || typeof item.image_url === 'string').length;
      console.log(`[measure] Codex, 2000×2000 noise plot: tool output ${text.length} characters, ${pictures} image items; request ${model.turns[1]!.chars} characters`);
      expect(text).toMatch(/\[image 1: image\/(png|jpeg), \d+ base64 characters, returned as MCP image content\]/);
      expect(text).toMatch(/re-encoded as image\/(png|jpeg) \d+×\d+/);
      expect(pictures).toBe(0);
      expect(body).not.toContain('data:image/');
    } finally {
      await model.close();
    }
  });

  it('registers a tool mid-session; Codex does not re-list, so call_function calls it in the same session', async () => {
    const model = await startStandInModel('responses', [
      REGISTER_SCRIPT[0]!,
      REGISTER_SCRIPT[1]!,
      { tool: 'call_function', input: { name: 'add_one', arguments: { n: 41 } } },
      { text: 'All done.' },
    ]);
    try {
      const home = mkdtempSync(join(scratch, 'codex-home-'));
      expectRun(await runCodex(model, 'Register and call a tool.', home));
      expect(seen(model.turns[2])).toContain('add_one');
      expect(seen(model.turns[3])).toContain('42');
      // Known client limitation (openai/codex#10105): no tools/list after list_changed, so the new tool is
      // offered from the next session on. The server's side is checked: the notification went out first.
      expectNotifiedBeforeAnswer(framesOf(home));
      expect(model.turns.some((turn) => model.clientName(turn, 'add_one') !== undefined)).toBe(false);
    } finally {
      await model.close();
    }
  });

  it('completes a cell longer than the server deadline and the client timeout, with timeout_seconds and tool_timeout_sec', async () => {
    const model = await startStandInModel('responses', LONG_CELL_SCRIPT);
    try {
      const started = performance.now();
      const result = await runCodex(model, 'Run a long cell.', undefined, LONG_CELL_SECONDS + 20);
      console.log(describeLongCell('Codex', `tool_timeout_sec=${LONG_CELL_SECONDS + 20}`, model, result, started));
      expectRun(result);
      expect(seen(model.turns[1])).toContain('long cell value 42');
      expect(seen(model.turns[2])).toContain('after the long cell');
    } finally {
      await model.close();
    }
  });

  it('measures what Codex does with a call that outlasts tool_timeout_sec', async () => {
    const model = await startStandInModel('responses', LONG_CELL_SCRIPT);
    try {
      const started = performance.now();
      const home = mkdtempSync(join(scratch, 'codex-home-'));
      const result = await runCodex(model, 'Run a long cell.', home, LOW_CLIENT_TIMEOUT_S);
      console.log(describeLongCell('Codex', `tool_timeout_sec=${LOW_CLIENT_TIMEOUT_S}`, model, result, started));
      console.log(`[measure] Codex after its timeout sends: ${cancellations(framesOf(home))}`);
      expectRun(result);
      // The value is distinctive: message ids (time-ordered UUIDs) may contain any short number.
      expect(seen(model.turns[1])).not.toContain('long cell value 42');
      expect(seen(model.turns[1])).toMatch(/timed out|timeout/i);
      // It cancels the call (notifications/cancelled), so the server interrupts the cell and keeps the namespace:
      // the next call runs at once.
      const frames = framesOf(home);
      expect(frames.filter((frame) => frame.dir === 'in' && frame.message.method === 'notifications/cancelled')).toHaveLength(1);
      expect(seen(model.turns[2])).toContain('after the long cell');
    } finally {
      await model.close();
    }
  });
});
