// A cell longer than the client's tool timeout, through the real CLIs (stand-in model): the model asks execute to
// detach before the client would give up, then waits on the job tool in calls that each end before the timeout, and
// reads the cell's final line.
//
// Unscaled, both CLIs at once: a 150 s cell printing a loss every 10 s, against the clients' own default tool
// timeouts (Codex's tool_timeout_sec, 60 s, and Claude Code's MCP tool timeout are left unset), with a stand-in
// model that reads each answer and follows the handle it is given.
//
// Scaled down: a 16 s cell printing a loss every 2 s against a client tool timeout lowered to 10 s (Codex's
// tool_timeout_sec, Claude Code's MCP_TOOL_TIMEOUT), which pins the same mechanism (detach below the timeout, waits
// below it) where the timeout would otherwise bite: Claude Code's default is far longer than any cell here.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, testPython } from './harness.js';
import { RUN_TIMEOUT_MS, agentSuite, expectRun, runClaudeCode, runCodexExec } from './fixtures/agent-runs.js';
import type { RunResult } from './fixtures/processes.js';
import { startStandInModel, type Chooser, type ModelTurn, type StandInModel, type Step } from './fixtures/stand-in-model.js';

const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
/** Records every MCP frame between the client and the server, with its time. */
const TAP = fileURLToPath(new URL('./fixtures/stdio-tap.mjs', import.meta.url));
const CLIENT_TIMEOUT_S = 10;
const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-detached-agents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const server = { command: process.execPath, args: [CLI], env: { IPYTHON_MCP_PYTHON: testPython() } };

/** 8 lines, one every 2 s, then the final line. */
const CELL = 'import time\nfor epoch in range(8):\n    print(f"epoch {epoch} loss {1 / (epoch + 1):.3f}", flush=True)\n    time.sleep(2)\nprint("final loss 0.125")';

/** As a model would: detach at 5 s, then wait 8 s at a time (each call ends before the 10 s timeout). */
const SCRIPT: Step[] = [
  { tool: 'execute', input: { code: CELL, timeout_seconds: 120, detach_after_seconds: 5 } },
  { tool: 'job', input: { job: 'default-1-1', wait_seconds: 8 } },
  { tool: 'job', input: { job: 'default-1-1', wait_seconds: 8 } },
  { tool: 'job', input: { job: 'default-1-1', wait_seconds: 8 } },
  { text: 'Done.' },
];

/** Every tool result the client handed back, as text. */
const handedBack = (model: StandInModel) => model.turns.map((turn) => JSON.stringify(turn.toolResult ?? null));

/** Every string inside what the client handed back, joined: the text the model reads. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value !== null && typeof value === 'object') return Object.values(value).map(textOf).join('\n');
  return '';
}

/**
 * The call a running answer's sentence tells the model to make next (`call the job tool with {...}`), read from the
 * text block or from the structured content's `next` (where its quotes come escaped).
 */
function suggestedCall(text: string): { job: string; wait_seconds?: number } | undefined {
  const match = /call the job tool with (\{[^}]*\})/.exec(text.replace(/\\"/g, '"'));
  return match ? (JSON.parse(match[1] as string) as { job: string; wait_seconds?: number }) : undefined;
}

function expectFinalLineRead(model: StandInModel): void {
  const results = handedBack(model);
  // The first answer was the handle, with the output so far and the call to make next.
  expect(results[1]).toContain('running');
  expect(results[1]).toContain('epoch 0 loss');
  expect(suggestedCall(textOf(model.turns[1]?.toolResult))).toEqual({ job: 'default-1-1', wait_seconds: 5 });
  // A later wait returned the whole result, final line included, and nothing timed out.
  expect(results.some((text) => text.includes('final loss 0.125'))).toBe(true);
  expect(results.join('\n')).not.toMatch(/timed out/);
}

describe('Codex (tool_timeout_sec = 10)', () => {
  const suite = agentSuite('codex');

  it('reads the final line of a 16 s cell through a job handle', async () => {
    const model = await startStandInModel('responses', SCRIPT);
    try {
      const home = mkdtempSync(join(scratch, 'codex-'));
      expectRun(await runCodexExec({ bin: suite.bin(), model, prompt: 'Train.', home, servers: { ipython: server }, marker: suite.marker, catalog: CODEX_CATALOG, toolTimeoutSec: CLIENT_TIMEOUT_S }));
    } finally {
      await model.close();
    }
    expectFinalLineRead(model);
  }, RUN_TIMEOUT_MS + 30_000);
});

describe('Claude Code (MCP_TOOL_TIMEOUT = 10000)', () => {
  const suite = agentSuite('claude');

  it('reads the final line of a 16 s cell through a job handle', async () => {
    const model = await startStandInModel('anthropic', SCRIPT);
    try {
      const home = mkdtempSync(join(scratch, 'claude-'));
      expectRun(
        await runClaudeCode({ bin: suite.bin(), model, prompt: 'Train.', home, servers: { ipython: server }, marker: suite.marker, clientEnv: { MCP_TOOL_TIMEOUT: String(CLIENT_TIMEOUT_S * 1000) } }),
      );
    } finally {
      await model.close();
    }
    expectFinalLineRead(model);
  }, RUN_TIMEOUT_MS + 30_000);
});

/** The unscaled cell: 15 losses, one every 10 s (150 s). */
const TRAINING_CELL = 'import time\nfor i in range(15): time.sleep(10); print(f"step {i} loss {1/(i+1):.4f}", flush=True)';
const LOSS_LINES = Array.from({ length: 15 }, (_, i) => `step ${i} loss ${(1 / (i + 1)).toFixed(4)}`);
const FINAL_LINE = LOSS_LINES.at(-1) as string;
/** Codex's default tool_timeout_sec; Claude Code's default MCP tool timeout is far longer. */
const DEFAULT_CLIENT_TIMEOUT_S = 60;
/** What the stand-in asks for: detach, and each wait, well below the shortest default client timeout. */
const DETACH_S = 45;
const WAIT_S = 45;
/** Bound on one unscaled CLI run, and on the test that runs both at once. */
const TRAINING_RUN_MS = 360_000;
const TRAINING_TEST_MS = 420_000;

/**
 * A model training with the handle, from what it reads: execute with a detach, one look at the handle it is
 * given, then waits of WAIT_S until the result comes; then it answers with the last loss line it read.
 */
function trainingModel(): Chooser {
  let looked = false;
  return (turn: ModelTurn, index: number): Step => {
    if (index === 0) return { tool: 'execute', input: { code: TRAINING_CELL, timeout_seconds: 300, detach_after_seconds: DETACH_S } };
    const text = textOf(turn.toolResult);
    const next = suggestedCall(text);
    if (next !== undefined && index < 12) {
      if (!looked) {
        looked = true;
        return { tool: 'job', input: { job: next.job } };
      }
      return { tool: 'job', input: { job: next.job, wait_seconds: WAIT_S } };
    }
    const lines = text.match(/step \d+ loss \d\.\d{4}/g) ?? [];
    return { text: lines.length > 0 ? `Training finished. Final line: ${lines.at(-1)}` : `No loss line in the result: ${text.slice(0, 300)}` };
  };
}

/** One MCP frame the tap saw: when, which way (`in` = client to server), and the message. */
interface Frame {
  t: number;
  dir: 'in' | 'out';
  message: Record<string, any>;
}

function framesOf(file: string): Frame[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const entry = JSON.parse(line) as { t: number; dir: 'in' | 'out'; frame: string };
      return { t: entry.t, dir: entry.dir, message: JSON.parse(entry.frame) as Record<string, any> };
    });
}

/** One tools/call as the server saw it: the request, its answer, and how long the client waited for it. */
interface Call {
  name: string;
  args: Record<string, unknown>;
  /** When the client sent it and when the answer went out (epoch ms; `end` is Infinity when none did). */
  start: number;
  end: number;
  seconds: number;
  result: Record<string, any> | undefined;
}

function toolCalls(frames: Frame[]): Call[] {
  return frames
    .filter((frame) => frame.dir === 'in' && frame.message.method === 'tools/call')
    .map((request) => {
      const answer = frames.find((frame) => frame.dir === 'out' && frame.message.id === request.message.id && frame.t >= request.t);
      const end = answer?.t ?? Number.POSITIVE_INFINITY;
      return {
        name: String(request.message.params?.name),
        args: (request.message.params?.arguments ?? {}) as Record<string, unknown>,
        start: request.t,
        end,
        seconds: (end - request.t) / 1000,
        result: answer?.message.result as Record<string, any> | undefined,
      };
    });
}

/** The unscaled run's facts, for one client; returns its measured durations, for the log. */
function expectTrainingRead(client: string, run: RunResult, wallSeconds: number, model: StandInModel, frames: Frame[]): string {
  expectRun(run);
  // As the model reads it: a structured content's escaped quotes read as quotes.
  const results = model.turns.slice(1).map((turn) => textOf(turn.toolResult).replace(/\\"/g, '"'));
  const calls = toolCalls(frames);
  const detail = `${client}\nmodel saw:\n${results.map((text) => text.slice(0, 400)).join('\n---\n')}\ncalls: ${JSON.stringify(calls.map((call) => [call.name, call.args.wait_seconds, call.seconds]))}`;
  // The first answer is the handle with the output so far, and a sentence that tells a model which tool to call
  // next, with what: a tool the client offers, and the handle it was given.
  expect(results[0], detail).toContain('step 0 loss 1.0000');
  const suggested = suggestedCall(results[0] as string);
  expect(suggested, detail).toEqual({ job: expect.stringMatching(/^default-1-\d+$/), wait_seconds: DETACH_S });
  expect(results[0], detail).toContain('"stop": true to interrupt it');
  expect(model.clientName(model.turns[1] as ModelTurn, 'job'), detail).toBeDefined();
  // Later answers showed the tail growing, the last one the whole result, and nothing timed out.
  const final = results.find((text) => text.includes(FINAL_LINE) && suggestedCall(text) === undefined);
  expect(final, detail).toBeDefined();
  for (const line of LOSS_LINES) expect(final, detail).toContain(line);
  expect(results.join('\n'), detail).not.toMatch(/timed out|timeout/i);
  // The model's final message quotes the final line, and the CLI printed it.
  expect(run.stdout, detail).toContain(FINAL_LINE);

  // On the server's side: execute detached, then job calls, each answered below the default client timeout; the
  // last one answered the cell's whole result, with status ok and all 15 lines (never interrupted or cancelled).
  expect(calls[0]?.name, detail).toBe('execute');
  expect(calls[0]?.result?.structuredContent?.status, detail).toBe('running');
  expect(calls.slice(1).every((call) => call.name === 'job'), detail).toBe(true);
  expect(calls.every((call) => call.seconds < DEFAULT_CLIENT_TIMEOUT_S - 5), detail).toBe(true);
  const last = calls.at(-1)?.result;
  expect(last?.isError, detail).not.toBe(true);
  expect(last?.structuredContent?.status ?? 'ok', detail).toBe('ok');
  expect(last?.structuredContent?.error ?? null, detail).toBeNull();
  expect(String(last?.structuredContent?.stdout).trim().split('\n'), detail).toEqual(LOSS_LINES);
  expect(frames.some((frame) => frame.message.method === 'notifications/cancelled'), detail).toBe(false);

  const cellSeconds = ((calls.at(-1) as Call).end - (calls[0] as Call).start) / 1000;
  return `${client}: run ${wallSeconds.toFixed(0)} s, execute to result ${cellSeconds.toFixed(1)} s, calls ${calls.map((call) => `${call.name}${call.args.wait_seconds === undefined ? '' : `(wait ${String(call.args.wait_seconds)})`} ${call.seconds.toFixed(1)} s`).join(', ')}`;
}

describe('Codex and Claude Code with their default tool timeouts, at once', () => {
  const codex = agentSuite('codex');
  const claude = agentSuite('claude');

  it('each reads the final loss of a 150 s cell through a job handle', async () => {
    // Claude Code's own default, not a value the test environment passes on.
    expect(process.env.MCP_TOOL_TIMEOUT).toBeUndefined();
    const codexModel = await startStandInModel('responses', trainingModel());
    const claudeModel = await startStandInModel('anthropic', trainingModel());
    const codexHome = mkdtempSync(join(scratch, 'codex-train-'));
    const claudeHome = mkdtempSync(join(scratch, 'claude-train-'));
    const tapped = (home: string) => ({ command: process.execPath, args: [TAP, join(home, 'mcp-frames.jsonl'), process.execPath, CLI], env: { IPYTHON_MCP_PYTHON: testPython() } });
    const timed = async (run: Promise<RunResult>): Promise<[RunResult, number]> => {
      const started = performance.now();
      const result = await run;
      return [result, (performance.now() - started) / 1000];
    };
    try {
      const [[codexRun, codexSeconds], [claudeRun, claudeSeconds]] = await Promise.all([
        // No tool_timeout_sec in the entry: Codex's default.
        timed(
          runCodexExec({
            bin: codex.bin(),
            model: codexModel,
            prompt: 'Train.',
            home: codexHome,
            servers: { ipython: tapped(codexHome) },
            marker: codex.marker,
            catalog: CODEX_CATALOG,
            toolTimeoutSec: null,
            timeoutMs: TRAINING_RUN_MS,
          }),
        ),
        // No MCP_TOOL_TIMEOUT: Claude Code's default.
        timed(
          runClaudeCode({
            bin: claude.bin(),
            model: claudeModel,
            prompt: 'Train.',
            home: claudeHome,
            servers: { ipython: tapped(claudeHome) },
            marker: claude.marker,
            timeoutMs: TRAINING_RUN_MS,
          }),
        ),
      ]);
      // Both clients' facts are checked, and a failure of either names its client.
      const measured: string[] = [];
      const failures: string[] = [];
      for (const [client, run, seconds, model, home] of [
        ['Codex', codexRun, codexSeconds, codexModel, codexHome],
        ['Claude Code', claudeRun, claudeSeconds, claudeModel, claudeHome],
      ] as const) {
        try {
          measured.push(expectTrainingRead(client, run, seconds, model, framesOf(join(home, 'mcp-frames.jsonl'))));
        } catch (error) {
          failures.push(error instanceof Error ? error.message : String(error));
        }
      }
      expect(failures).toEqual([]);
      console.log(`[measure] 150 s cell through a job handle, default client timeouts:\n${measured.join('\n')}`);
    } finally {
      await codexModel.close();
      await claudeModel.close();
    }
  }, TRAINING_TEST_MS);
});
