// Real agent turns through `ipython-mcp code-mode --servers`: the real `claude -p` and `codex exec` (the headless
// commands of docs/clients.md) with a scripted stand-in model on 127.0.0.1, and server-filesystem / server-memory
// from npm as upstream servers. One turn calls an upstream tool from Python and hands its result to the model; a
// many-call task runs both ways, directly and through run_code, and what the client sent the model is counted.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NPM_SERVERS_VERSION, npmServerBin } from '../../../tooling/bench/lib/npm-servers.mjs';
import { CLI, testPython } from './harness.js';
import { startJupyter, type RunningJupyter } from './jupyter-harness.js';
import { agentSuite, expectRun, runClaudeCode, runCodexExec, type McpServerEntry } from './fixtures/agent-runs.js';
import { INSTALL_TIMEOUT_MS } from './fixtures/client-clis.js';
import { startStandInModel, type StandInModel, type Step } from './fixtures/stand-in-model.js';

const CODEX_CATALOG = fileURLToPath(new URL('./fixtures/codex-model-catalog.json', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-code-mode-agents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const npmBin = (name: string) => join(npmServerBin(`@modelcontextprotocol/${name}@${NPM_SERVERS_VERSION}`), `mcp-${name}`);
// Installed (once, into the client cache) before any test's clock starts.
beforeAll(() => {
  for (const name of ['server-filesystem', 'server-memory']) npmBin(name);
}, INSTALL_TIMEOUT_MS * 2);
const seen = (model: StandInModel, index: number) => JSON.stringify(model.turns[index]?.toolResult ?? null);

/** The upstream servers of a task over `directory`, as a servers file entry each. */
function upstreams(directory: string): { filesystem: McpServerEntry; memory: McpServerEntry } {
  return {
    filesystem: { command: npmBin('server-filesystem'), args: [directory], env: {} },
    memory: { command: npmBin('server-memory'), args: [], env: { MEMORY_FILE_PATH: join(directory, 'memory.jsonl') } },
  };
}

/**
 * `code-mode --servers` over `servers`, as the client's one MCP server `code`; with `jupyter`, run_code runs in a
 * kernel it starts there (`--jupyter URL --kernel-name python3`).
 */
function codeModeServer(directory: string, servers: Record<string, McpServerEntry>, jupyter?: RunningJupyter): McpServerEntry {
  const file = join(directory, 'servers.json');
  // A trusted headless run: headless clients decline every consent question (code-mode-consent-clients.e2e.test.ts),
  // so the writes of the many-call task are allowed in the file, as docs/clients.md says to.
  writeFileSync(file, JSON.stringify({ mcpServers: servers, codeMode: { consent: 'run' } }));
  const args = [CLI, 'code-mode', '--servers', file];
  if (jupyter === undefined) return { command: process.execPath, args, env: { IPYTHON_MCP_PYTHON: testPython() } };
  return { command: process.execPath, args: [...args, '--jupyter', jupyter.url, '--kernel-name', 'python3'], env: { JUPYTER_TOKEN: jupyter.token } };
}

/**
 * A fresh HOME and the project directory in it (the CLI's working directory), with notes.txt: Claude Code offers
 * its working directory as the MCP root, which server-filesystem then allows instead of its arguments.
 */
function taskDirectory(): { home: string; directory: string } {
  const home = mkdtempSync(join(scratch, 'home-'));
  const directory = join(home, 'project');
  mkdirSync(directory);
  writeFileSync(join(directory, 'notes.txt'), 'hello from filesystem\nsecond line\n');
  return { home, directory };
}

const READ_NOTES = (directory: string): Step[] => [
  { tool: 'run_code', input: { code: `notes = read_text_file(path=${JSON.stringify(join(directory, 'notes.txt'))})\nnotes["content"].upper()` } },
  { text: 'All done.' },
];

describe('Claude Code through code-mode --servers', () => {
  const { bin, marker } = agentSuite('claude');

  it('calls a server-filesystem tool from Python and hands its result to the model', async () => {
    const { home, directory } = taskDirectory();
    const model = await startStandInModel('anthropic', READ_NOTES(directory), 'code');
    try {
      const servers = { code: codeModeServer(directory, { filesystem: upstreams(directory).filesystem }) };
      expectRun(await runClaudeCode({ bin: bin(), model, prompt: 'Read the notes.', home, servers, marker, docsBlock: 'code-mode-claude-print' }));
      expect(model.clientName(model.turns[0]!, 'run_code')).toBe('mcp__code__run_code');
      expect(seen(model, 1)).toContain('HELLO FROM FILESYSTEM');
    } finally {
      await model.close();
    }
  });

  it('a many-call task takes fewer model turns and under a fifth of the characters through run_code', async () => {
    const figures: Record<string, { turns: number; chars: number }> = {};
    for (const way of ['direct', 'code-mode'] as const) {
      const { home, directory } = taskDirectory();
      const { steps, expected } = manyCallTask(directory, way);
      const model = await startStandInModel('anthropic', steps, way === 'direct' ? 'filesystem' : 'code');
      try {
        const servers = way === 'direct' ? upstreams(directory) : { code: codeModeServer(directory, upstreams(directory)) };
        const allowed = way === 'direct' ? ['--allowedTools', 'mcp__filesystem,mcp__memory'] : [];
        const docsBlock = way === 'direct' ? 'claude-print' : 'code-mode-claude-print';
        expectRun(await runClaudeCode({ bin: bin(), model, prompt: 'Count the matching lines.', home, servers, marker, docsBlock, extraArguments: allowed }));
        expect(readFileSync(join(directory, 'summary.txt'), 'utf8')).toBe(expected);
        expect(readFileSync(join(directory, 'memory.jsonl'), 'utf8')).toContain(expected.trim());
        figures[way] = { turns: model.turns.length, chars: model.turns.reduce((sum, turn) => sum + turn.chars, 0) };
      } finally {
        await model.close();
      }
    }
    const direct = figures.direct!;
    const codeMode = figures['code-mode']!;
    console.log(
      `[measure] many-call task in Claude Code: direct ${direct.turns} model turns, ${direct.chars} characters sent; ` +
        `code-mode ${codeMode.turns} turns, ${codeMode.chars} characters (${((100 * codeMode.chars) / direct.chars).toFixed(1)}%)`,
    );
    expect(direct.turns).toBe(FILES + 3);
    expect(codeMode.turns).toBe(2);
    expect(codeMode.chars).toBeLessThanOrEqual(direct.chars / 5);
  });
});

describe('Codex through code-mode --servers', () => {
  const { bin, marker } = agentSuite('codex');

  it('calls a server-filesystem tool from Python and hands its result to the model', async () => {
    const { home, directory } = taskDirectory();
    const model = await startStandInModel('responses', READ_NOTES(directory), 'code');
    try {
      const servers = { code: codeModeServer(directory, { filesystem: upstreams(directory).filesystem }) };
      expectRun(await runCodexExec({ bin: bin(), model, prompt: 'Read the notes.', home, servers, marker, catalog: CODEX_CATALOG, docsBlock: 'code-mode-codex-exec' }));
      expect(seen(model, 1)).toContain('HELLO FROM FILESYSTEM');
    } finally {
      await model.close();
    }
  });
});

describe('Codex through code-mode --servers --jupyter: run_code in a Jupyter kernel', () => {
  const { bin, marker } = agentSuite('codex');
  let jupyter: RunningJupyter;
  beforeAll(async () => {
    jupyter = await startJupyter('server');
  });
  afterAll(async () => {
    await jupyter?.stop();
  });

  it('calls a server-filesystem tool from Python in the kernel and hands its result to the model', async () => {
    const { home, directory } = taskDirectory();
    const path = JSON.stringify(join(directory, 'notes.txt'));
    const steps: Step[] = [
      { tool: 'run_code', input: { code: `notes = read_text_file(path=${path})\n[notes["content"].upper(), type(get_ipython()).__name__]` } },
      { text: 'All done.' },
    ];
    const model = await startStandInModel('responses', steps, 'code');
    try {
      const servers = { code: codeModeServer(directory, { filesystem: upstreams(directory).filesystem }, jupyter) };
      expectRun(await runCodexExec({ bin: bin(), model, prompt: 'Read the notes.', home, servers, marker, catalog: CODEX_CATALOG, docsBlock: 'code-mode-codex-exec' }));
      expect(seen(model, 1)).toContain('HELLO FROM FILESYSTEM');
      // The kernel's own shell ran it: the nested call came back over the kernel's stdin channel.
      expect(seen(model, 1)).toContain('ZMQInteractiveShell');
    } finally {
      await model.close();
    }
  });
});

/** Files the many-call task reads. */
const FILES = 20;

/**
 * The many-call task over `directory`: read 20 files, count the lines with "apple", write summary.txt, store one
 * memory entity. Directly that is one model turn per tool call; through Code Mode, one run_code.
 */
function manyCallTask(directory: string, way: 'direct' | 'code-mode'): { steps: Step[]; expected: string } {
  let matching = 0;
  const paths: string[] = [];
  for (let index = 0; index < FILES; index += 1) {
    const lines = Array.from({ length: 12 }, (_, line) => ((index + line) % 4 === 0 ? `line ${line}: an apple a day` : `line ${line}: nothing here`));
    matching += lines.filter((line) => line.includes('apple')).length;
    const path = join(directory, `file_${String(index).padStart(2, '0')}.txt`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    paths.push(path);
  }
  const expected = `${matching} lines match apple\n`;
  const summary = join(directory, 'summary.txt');
  const entity = { name: 'apple-count', entityType: 'report', observations: [expected.trim()] };
  if (way === 'direct') {
    return {
      expected,
      steps: [
        ...paths.map((path): Step => ({ tool: 'mcp__filesystem__read_text_file', input: { path } })),
        { tool: 'mcp__filesystem__write_file', input: { path: summary, content: expected } },
        { tool: 'mcp__memory__create_entities', input: { entities: [entity] } },
        { text: 'All done.' },
      ],
    };
  }
  const code = [
    `paths = ${JSON.stringify(paths)}`,
    'total = sum(sum("apple" in line for line in read_text_file(path=path)["content"].splitlines()) for path in paths)',
    'text = f"{total} lines match apple\\n"',
    `write_file(path=${JSON.stringify(summary)}, content=text)`,
    'create_entities(entities=[{"name": "apple-count", "entityType": "report", "observations": [text.strip()]}])',
    'total',
  ].join('\n');
  return { expected, steps: [{ tool: 'run_code', input: { code } }, { text: 'All done.' }] };
}
