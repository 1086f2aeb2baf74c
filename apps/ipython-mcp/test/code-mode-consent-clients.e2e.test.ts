// What the real Claude Code and Codex do, headless (`claude -p`, `codex exec`, as docs/clients.md runs them), when
// code in run_code calls an upstream tool whose consent policy is "ask": server-filesystem's write_file (it declares
// itself not read-only). The stand-in model calls run_code once; what the code caught is what the model was shown.
// And what the documented headless setting (`--consent filesystem=run`) changes: the write runs.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NPM_SERVERS_VERSION, npmServerBin } from '../../../tooling/bench/lib/npm-servers.mjs';
import { CLI, testPython } from './harness.js';
import { agentSuite, expectRun, runClaudeCode, runCodexExec, type McpServerEntry } from './fixtures/agent-runs.js';
import { INSTALL_TIMEOUT_MS } from './fixtures/client-clis.js';
import { startStandInModel, type Step } from './fixtures/stand-in-model.js';

const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-consent-clients-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const filesystemBin = (): string => join(npmServerBin(`@modelcontextprotocol/server-filesystem@${NPM_SERVERS_VERSION}`), 'mcp-server-filesystem');
beforeAll(() => {
  filesystemBin();
}, INSTALL_TIMEOUT_MS);

/** A HOME with the project in it, and `code-mode` over server-filesystem there, with `flags` after the file. */
function task(flags: string[]): { home: string; directory: string; servers: Record<string, McpServerEntry> } {
  const home = mkdtempSync(join(scratch, 'home-'));
  const directory = join(home, 'project');
  mkdirSync(directory);
  const file = join(home, 'servers.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { filesystem: { command: filesystemBin(), args: [directory] } } }));
  const code: McpServerEntry = { command: process.execPath, args: [CLI, 'code-mode', '--servers', file, ...flags], env: { IPYTHON_MCP_PYTHON: testPython() } };
  return { home, directory, servers: { code } };
}

function writeStep(directory: string): Step[] {
  const path = JSON.stringify(join(directory, 'out.txt'));
  return [
    { tool: 'run_code', input: { code: `try:\n    said = str(write_file(path=${path}, content="written"))\nexcept ToolCallError as error:\n    said = "ToolCallError: " + str(error)\nsaid` } },
    { text: 'Done.' },
  ];
}

const CLIENTS = [
  { cli: 'claude' as const, provider: 'anthropic' as const },
  { cli: 'codex' as const, provider: 'responses' as const },
];

describe.each(CLIENTS)('$cli headless, asked about a nested call', ({ cli, provider }) => {
  const { bin, marker } = agentSuite(cli);

  async function run(flags: string[]): Promise<{ shown: string; written: boolean }> {
    const { home, directory, servers } = task(flags);
    const model = await startStandInModel(provider, writeStep(directory), 'code');
    try {
      const prompt = 'Write the file.';
      if (cli === 'claude') expectRun(await runClaudeCode({ bin: bin(), model, prompt, home, servers, marker, docsBlock: 'code-mode-claude-print' }));
      else expectRun(await runCodexExec({ bin: bin(), model, prompt, home, servers, marker, catalog: CODEX_CATALOG, docsBlock: 'code-mode-codex-exec' }));
      const shown = JSON.stringify(model.turns[1]?.toolResult ?? null);
      const path = join(directory, 'out.txt');
      return { shown, written: existsSync(path) && readFileSync(path, 'utf8') === 'written' };
    } finally {
      await model.close();
    }
  }

  it('without a consent setting: the write is refused and nothing is written', async () => {
    const { shown, written } = await run([]);
    console.log(`[observed] ${cli} headless, write_file from code: ${shown.slice(0, 600)}`);
    expect(written).toBe(false);
    // Both CLIs declare elicitation and, with no one to ask, answer the question themselves: Claude Code with
    // "cancel", Codex with "decline" (Claude Code 2.1.332, Codex 0.171). The quotes come escaped (JSON in JSON).
    const [client, how] = cli === 'claude' ? ['claude-code', 'it dismissed the question without an answer'] : ['codex-mcp-client', 'it declined the question'];
    expect(shown).toMatch(new RegExp(`refused by the MCP client [^a-z]+${client}[^a-z]+ \\(${how}\\) when asked; nothing ran`));
    expect(shown).toContain('filesystem.write_file: refused by the client');
  });

  it('with --consent filesystem=run (a trusted headless run): the write runs', async () => {
    const { shown, written } = await run(['--consent', 'filesystem=run']);
    expect(written, shown).toBe(true);
  });
});
