// A real agent turn in a human's Jupyter kernel: a `jupyter server` on loopback with a token, a kernel a human
// started and set a name in through jupyter_client, and the real `claude -p` driving `ipython-mcp --jupyter URL
// --kernel ID` for a scripted stand-in model (fixtures/stand-in-model.ts). The model's last answer is written from
// what the client handed back, so the value in the CLI's final output can only have come from the kernel.
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, testPython } from './harness.js';
import { agentSuite, expectRun, runClaudeCode } from './fixtures/agent-runs.js';
import { startStandInModel, type ModelTurn } from './fixtures/stand-in-model.js';
import { humanExecute, kernelIds, startHumanKernel, startJupyter, type RunningJupyter } from './jupyter-harness.js';

const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-jupyter-agent-'));
let jupyter: RunningJupyter;

beforeAll(async () => {
  jupyter = await startJupyter('server');
}, 120_000);

afterAll(async () => {
  await jupyter?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * The value the kernel answered, as the client handed it back: Claude Code passes the structured result on as JSON
 * text (`{"execution_count":2,"result":{"value":N}}`); the text block would read `Out[2]: N`.
 */
function answered(turn: ModelTurn | undefined): string {
  const seen = JSON.stringify(turn?.toolResult ?? null);
  const match = /\\"result\\":\{\\"value\\":(\d+)\}/.exec(seen) ?? /Out\[\d+\]: (\d+)/.exec(seen);
  return match?.[1] ?? 'nothing';
}

describe('Claude Code in a Jupyter kernel a human made (claude -p)', () => {
  const { bin, marker } = agentSuite('claude');

  it('reads the name the human set, and says its value', async () => {
    const kernelId = await startHumanKernel(jupyter);
    const secret = randomInt(1_000_000, 10_000_000);
    try {
      expect(humanExecute(jupyter, kernelId, `quarter_total = ${secret}`).split('\n')[0]).toBe('ok');
      const model = await startStandInModel('anthropic', [
        { tool: 'execute', input: { code: 'quarter_total' } },
        { text: (turn) => `The human's quarter_total is ${answered(turn)}.` },
      ]);
      try {
        const home = mkdtempSync(join(scratch, 'claude-home-'));
        const server = {
          command: process.execPath,
          args: [CLI, '--jupyter', jupyter.url, '--kernel', kernelId],
          env: { IPYTHON_MCP_PYTHON: testPython(), JUPYTER_TOKEN: jupyter.token },
        };
        const result = await runClaudeCode({ bin: bin(), model, prompt: "What is the human's quarter_total?", home, servers: { ipython: server }, marker });
        expectRun(result);
        expect(model.turns.length, `other requests: ${model.sideRequests.join(', ')}`).toBeGreaterThanOrEqual(2);
        // The model got the human's value from the kernel, and the CLI's final output says it.
        expect(answered(model.turns[1]), JSON.stringify(model.turns[1]?.toolResult ?? null).slice(0, 1500)).toBe(String(secret));
        expect((model.turns[1]?.toolResult as Record<string, any>).is_error).not.toBe(true);
        expect(result.stdout).toContain(`quarter_total is ${secret}`);
        // The agent's cell is the kernel's own: the human sees it in In.
        expect(humanExecute(jupyter, kernelId, 'print(In[-2])')).toContain('quarter_total');
      } finally {
        await model.close();
      }
    } finally {
      await jupyter.rest('DELETE', `api/kernels/${kernelId}`);
    }
    expect(await kernelIds(jupyter)).toEqual([]);
  });
});
