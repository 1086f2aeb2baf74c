// A cell longer than the client's tool timeout, through the real CLIs (stand-in model): the model asks execute to
// detach before the client would give up, then waits on the job tool in calls that each end before the timeout, and
// reads the cell's final line. Scaled down: a 16 s cell printing a loss every 2 s against a client tool timeout of
// 10 s (Codex's tool_timeout_sec, Claude Code's MCP_TOOL_TIMEOUT), in place of a 150 s cell against Codex's default
// 60 s; the mechanism (detach below the timeout, waits below it) is the same at any scale.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, testPython } from './harness.js';
import { RUN_TIMEOUT_MS, agentSuite, expectRun, runClaudeCode, runCodexExec } from './fixtures/agent-runs.js';
import { startStandInModel, type StandInModel, type Step } from './fixtures/stand-in-model.js';

const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
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

function expectFinalLineRead(model: StandInModel): void {
  const results = handedBack(model);
  // The first answer was the handle, with the output so far.
  expect(results[1]).toContain('running');
  expect(results[1]).toContain('epoch 0 loss');
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
