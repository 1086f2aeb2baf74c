#!/usr/bin/env node
// `node tooling/bench/model-reads.mjs [--data] [--cli PATH] [--show] [--json PATH]`: runs the fourteen everyday calls
// of "what the model reads" (with --data: the pandas/matplotlib data session instead, which needs pandas and
// matplotlib in the worker's Python) through a real MCP stdio client against the built server (--cli: another
// build's dist/cli.js, e.g. main's, to compare) and reports the characters each client forwards
// to its model (Claude Code: JSON of structuredContent on success, the text block on error; Codex: the text block),
// plus the size of the tool list (names, descriptions, input schemas) that every model request carries.
// `--code-mode`: instead, the tool list of the 47-tool set (server-filesystem, -memory, -everything from npm, and
// ipython-mcp) served directly against the same tools behind `ipython-mcp code-mode --servers` (lib/npm-servers.mjs).
import { writeFileSync } from 'node:fs';
import { chooseWorkerPython, loadModules } from './lib/env.mjs';
import { startServer } from './lib/mcp.mjs';
import { runDataSession, runFourteen, toolListChars } from './lib/model-reads.mjs';
import { NPM_SERVERS_VERSION, measureToolLists } from './lib/npm-servers.mjs';
import { installExitHandlers } from './lib/procs.mjs';

const args = process.argv.slice(2);
const show = args.includes('--show');
const jsonIndex = args.indexOf('--json');
const jsonPath = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined;
const data = args.includes('--data');
const cliIndex = args.indexOf('--cli');
const cli = cliIndex >= 0 ? args[cliIndex + 1] : undefined;

installExitHandlers();
const modules = await loadModules();
const { python } = chooseWorkerPython(undefined);
if (args.includes('--code-mode')) {
  await codeModeSection();
  process.exit(0);
}
const server = await startServer(modules, { env: { IPYTHON_MCP_PYTHON: python }, ...(cli ? { args: [cli] } : {}) });
try {
  const { tools } = await server.client.listTools();
  const run = data ? runDataSession : runFourteen;
  const rows = await run((name, toolArgs) => server.call(name, toolArgs));
  const out = (line) => process.stdout.write(`${line}\n`);
  out(`${'call'.padEnd(32)} ${'Claude Code'.padStart(11)} ${'Codex'.padStart(7)}`);
  for (const row of rows) {
    out(`${row.label.padEnd(32)} ${String(row.claudeCode.length).padStart(11)} ${String(row.codex.length).padStart(7)}${row.isError ? '  (error)' : ''}`);
  }
  const claudeCode = rows.reduce((sum, row) => sum + row.claudeCode.length, 0);
  const codex = rows.reduce((sum, row) => sum + row.codex.length, 0);
  const toolList = toolListChars(tools);
  const fullToolList = JSON.stringify(tools).length;
  out(`${`total (${rows.length} calls)`.padEnd(32)} ${String(claudeCode).padStart(11)} ${String(codex).padStart(7)}`);
  out(`tool list: ${tools.length} tools, ${toolList} characters of names + descriptions + input schemas (${fullToolList} as the whole tools/list JSON)`);
  if (show) {
    for (const row of rows) out(`\n--- ${row.label} (Claude Code)\n${row.claudeCode}\n--- ${row.label} (Codex)\n${row.codex}`);
  }
  if (jsonPath) {
    writeFileSync(jsonPath, `${JSON.stringify({ claudeCode, codex, toolList, fullToolList, rows: rows.map(({ result, ...row }) => row) }, null, 2)}\n`);
  }
} finally {
  await server.close();
}

/** The `--code-mode` report: the 47-tool set's tool list, direct against through Code Mode (with and without a budget). */
async function codeModeSection() {
  const out = (line) => process.stdout.write(`${line}\n`);
  const env = { IPYTHON_MCP_PYTHON: python };
  const budgeted = await measureToolLists({ modules, env });
  const stubs = await measureToolLists({ modules, env, codeMode: { descriptionBudget: null } });
  out(`tool list a model request carries (names + descriptions + input schemas), npm servers ${NPM_SERVERS_VERSION}`);
  for (const server of budgeted.servers) out(`  ${server.name.padEnd(12)} ${String(server.tools.length).padStart(3)} tools ${String(server.chars).padStart(7)} characters`);
  const share = (chars) => `${((100 * chars) / budgeted.directChars).toFixed(1)}% of direct`;
  out(`direct: ${budgeted.directTools} tools, ${budgeted.directChars} characters`);
  out(`code-mode, every stub (descriptionBudget null): 1 tool, ${stubs.codeModeChars} characters (${share(stubs.codeModeChars)})`);
  out(`code-mode, default budget (names + find_tools): 1 tool, ${budgeted.codeModeChars} characters (${share(budgeted.codeModeChars)})`);
  if (show) out(`\n--- run_code description (default budget)\n${budgeted.description}\n\n--- run_code description (every stub)\n${stubs.description}`);
  if (jsonPath) {
    const { description: _budgetedText, ...budgetedFigures } = budgeted;
    writeFileSync(jsonPath, `${JSON.stringify({ budgeted: budgetedFigures, everyStubChars: stubs.codeModeChars }, null, 2)}\n`);
  }
}
