// What Code Mode costs the model's context, pinned for the tool set of the issue (47 tools then, 48 since
// ipython-mcp has `job`): server-filesystem, -memory and
// -everything from npm (pinned release, installed into the client cache) plus ipython-mcp, listed directly by real
// clients and through `ipython-mcp code-mode --servers` (the same measurement as
// `node tooling/bench/model-reads.mjs --code-mode`). Then a scripted model that knows only a tool's name looks its
// stub up with one call and calls it correctly, through the real servers.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toPythonIdentifier } from '@ipython-mcp/code-mode';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fortySevenToolServers, measureToolLists, type ToolListSizes } from '../../../tooling/bench/lib/npm-servers.mjs';
import { startServer, testPython, type TestServer } from './harness.js';

/** The issue's target: run_code at most 30% of the direct tool list, and at most 6,700 characters. */
const MAX_SHARE = 0.3;
const MAX_CODE_MODE_CHARS = 6700;
/** The npm servers' own tool lists at the pinned release (ipython-mcp's changes with its descriptions). */
const NPM_CHARS = { filesystem: 7370, memory: 3763, everything: 4368 };

const env = { IPYTHON_MCP_PYTHON: testPython() };
let budgeted: ToolListSizes;
let everyStub: ToolListSizes;

beforeAll(async () => {
  budgeted = await measureToolLists({ env });
  everyStub = await measureToolLists({ env, codeMode: { descriptionBudget: null } });
}, 600_000);

describe('the 48-tool set, direct and through code-mode', () => {
  it('fits the target by default and names every tool', () => {
    console.log(
      `[measure] 48-tool list: direct ${budgeted.directChars} characters; code-mode ${budgeted.codeModeChars} ` +
        `(${((100 * budgeted.codeModeChars) / budgeted.directChars).toFixed(1)}%), with every stub ${everyStub.codeModeChars}`,
    );
    expect(budgeted.directTools).toBe(48);
    expect(Object.fromEntries(budgeted.servers.filter((server) => server.name !== 'ipython').map((server) => [server.name, server.chars]))).toEqual(NPM_CHARS);
    expect(budgeted.codeModeTools).toBe(1);
    expect(budgeted.codeModeChars).toBeLessThanOrEqual(MAX_SHARE * budgeted.directChars);
    expect(budgeted.codeModeChars).toBeLessThanOrEqual(MAX_CODE_MODE_CHARS);
    const names = budgeted.servers.flatMap((server) => server.tools.map((tool) => toPythonIdentifier(tool)));
    expect(names).toHaveLength(48);
    for (const name of names) expect(budgeted.description).toMatch(new RegExp(`(^|[ ,])${name}(,|$)`, 'm'));
    expect(budgeted.description).toContain('find_tools(query=');
    for (const server of budgeted.servers) expect(budgeted.description).toContain(`- ${server.name}: ready, ${server.tools.length} tools`);
  });

  it('with every stub, shows each function once with its signature and one summary line, about half the direct list', () => {
    expect(everyStub.codeModeChars).toBeLessThanOrEqual(0.55 * everyStub.directChars);
    const stubs = everyStub.description.split('\n').filter((line) => line.startsWith('def '));
    expect(stubs).toHaveLength(48);
    expect(everyStub.description).toContain('def read_text_file(*, path: str, tail: float | None = None, head: float | None = None) -> dict[str, Any]:');
    expect(everyStub.description).not.toContain('find_tools');
  });
});

describe('found on demand', () => {
  let server: TestServer;
  let directory: string;

  beforeAll(async () => {
    const set = fortySevenToolServers({ env });
    directory = set.directory;
    const file = join(directory, 'servers.json');
    // A trusted test run: every upstream tool runs without asking (code-mode-consent.e2e.test.ts tests the asking).
    writeFileSync(file, JSON.stringify({ mcpServers: set.mcpServers, codeMode: { consent: 'run' } }));
    server = await startServer({}, ['code-mode', '--servers', file]);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  const text = (result: CallToolResult): string => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

  it('a scripted model that knows only "write_file" looks it up once and calls it with the right arguments', async () => {
    const { tools } = await server.client.listTools();
    expect(tools[0]?.description).toMatch(/write_file/);
    expect(tools[0]?.description).not.toContain('def write_file');
    const lookup = await server.call('run_code', { code: 'print(find_tools(query="write_file"))' });
    expect(lookup.isError).toBeFalsy();
    const stub = (JSON.parse(text(lookup)) as { output: string }).output;
    const signature = /^def write_file\(\*, (.*)\) -> .*:$/m.exec(stub);
    expect(signature).not.toBeNull();
    // The model fills the required parameters the stub names, from what it wants done.
    const wanted: Record<string, string> = { path: join(directory, 'note.txt'), content: 'found on demand\n' };
    const required = (signature?.[1] ?? '').split(', ').map((parameter) => parameter.split(':')[0] ?? '');
    expect(required).toEqual(['path', 'content']);
    const call = `write_file(${required.map((name) => `${name}=${JSON.stringify(wanted[name])}`).join(', ')})`;
    const written = await server.call('run_code', { code: call });
    expect(written.isError).toBeFalsy();
    expect(existsSync(wanted.path!) && readFileSync(wanted.path!, 'utf8')).toBe('found on demand\n');
  });

  it('a bad lookup raises ToolCallError in the code, and the server and kernel carry on', async () => {
    const bad = await server.call('run_code', { code: 'kept = 7\nfind_tools(query=5)' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('ToolCallError');
    const after = await server.call('run_code', { code: '[kept, "read_text_file" in find_tools(query="read text file")]' });
    expect(JSON.parse(text(after))).toEqual([7, true]);
  });
});
