import { defineConfig } from 'vitest/config';
import { realProcessesConfig } from '@ipython-mcp/test-support/vitest';

// End-to-end suites spawn the built binary and real Python workers.
//
// Four groups (docs/decisions/0018-bench-ci.md). Most files run three at a time, since they spend most of their time
// waiting on start-ups, sleeps in cells, sockets and the real client CLIs. The files whose bounds are about the
// product's timing, and the browser and JupyterHub files, heavy on both cores, then run in two lines, one file of each
// at a time (tooling/test.sh runs the two groups as two runs side by side; run together here, one after the other).
// Last, the memory files run with nothing at all beside them: their limits are the machine's memory, shared by
// whatever runs beside them. Every file starts its own servers on free ports, in its own scratch directories, and its
// orphan checks look only at processes it tagged or started, so side by side they share nothing.
// A Jupyter server a test stops and starts again keeps a port below the range handed out for port 0 (stablePort in
// packages/jupyter-kernel/test/jupyter-servers.ts), so no kernel of another file can take it while it is down.
const TIMING = [
  // Fault, deadline and grace-period checks, whose bounds (a worker gone within grace + 1 s, an interrupt heard
  // within its deadline) are about the product's timing, not the machine's.
  'test/faults.e2e.test.ts',
  'test/jupyter-faults.e2e.test.ts',
  'test/deadline-meets-cancel.e2e.test.ts',
  'test/http-faults.e2e.test.ts',
  'test/first-interrupt.e2e.test.ts',
  'test/jupyter-interrupt-heard.e2e.test.ts',
  'test/jupyter-clean-exits.e2e.test.ts',
  // Timings recorded against bounds (model reads, spilled outputs), and the human-client checks of a shared kernel.
  'test/model-reads.e2e.test.ts',
  'test/spill.e2e.test.ts',
  'test/jupyter-who.e2e.test.ts',
];
const PAGES = [
  // The browser: Chromium with a JupyterLab page.
  'test/notebook-browser.e2e.test.ts',
  'test/notebook-cells.e2e.test.ts',
  'test/notebook-page-identity.e2e.test.ts',
  'test/notebook-page-offscreen.e2e.test.ts',
  'test/notebook-page-outputs.e2e.test.ts',
  'test/notebook-page-running.e2e.test.ts',
  'test/notebook-tools-browser.e2e.test.ts',
  'test/notebook-tools.e2e.test.ts',
  // JupyterHub: its proxy, hub and single-user servers.
  'test/jupyterhub.e2e.test.ts',
];
const MEMORY = [
  // The memory guard and big outputs.
  'test/memory.e2e.test.ts',
  'test/detached-memory.e2e.test.ts',
  'test/memory-meets-stops.e2e.test.ts',
  'test/jupyter-machine-guard.e2e.test.ts',
  'test/jupyter-big-output.e2e.test.ts',
];

const { include, ...shared } = realProcessesConfig().test ?? {};

/** A group of files run one at a time. */
function oneAtATime(name: string, files: string[], groupOrder: number) {
  return { extends: true as const, test: { name, include: files, fileParallelism: false, maxWorkers: 1, sequence: { groupOrder } } };
}

const GROUPS = [
  {
    extends: true as const,
    test: { name: 'side by side', include: include ?? [], exclude: [...TIMING, ...PAGES, ...MEMORY], fileParallelism: true, maxWorkers: 3, sequence: { groupOrder: 0 } },
  },
  oneAtATime('timing', TIMING, 1),
  oneAtATime('pages', PAGES, 2),
  oneAtATime('memory', MEMORY, 3),
];

// IPYTHON_MCP_E2E_GROUP names the groups to run, comma-separated (tooling/test.sh runs `side by side` beside the other
// packages' suites, then `timing` beside `pages`, then `memory` with nothing beside it); unset, all run, one after
// the other.
const names = process.env.IPYTHON_MCP_E2E_GROUP?.split(',').map((name) => name.trim());
const unknown = names?.filter((name) => !GROUPS.some((group) => group.test.name === name)) ?? [];
if (unknown.length > 0) {
  throw new Error(`IPYTHON_MCP_E2E_GROUP names no group: ${unknown.map((name) => JSON.stringify(name)).join(', ')}; use one or more of: ${GROUPS.map((group) => JSON.stringify(group.test.name)).join(', ')}`);
}

export default defineConfig({
  test: {
    ...shared,
    projects: names === undefined ? GROUPS : GROUPS.filter((group) => names.includes(group.test.name)),
  },
});
