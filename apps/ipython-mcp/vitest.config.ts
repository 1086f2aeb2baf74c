import { defineConfig } from 'vitest/config';
import { realProcessesConfig } from '@ipython-mcp/test-support/vitest';

// End-to-end suites spawn the built binary and real Python workers.
//
// Two groups (docs/decisions/0018-bench-ci.md): most files run three at a time, since they spend most of their time
// waiting on start-ups, sleeps in cells, sockets and the real client CLIs; then the files below run one at a time,
// with nothing of this suite beside them. Every file starts its own servers on free ports, in its own scratch
// directories, and its orphan checks look only at processes it tagged or started, so side by side they share nothing.
// A Jupyter server a test stops and starts again keeps a port below the range handed out for port 0 (stablePort in
// packages/jupyter-kernel/test/jupyter-servers.ts), so no kernel of another file can take it while it is down.
const ALONE = [
  // Fault, deadline and grace-period checks, whose bounds (a worker gone within grace + 1 s, an interrupt heard
  // within its deadline) are about the product's timing, not the machine's.
  'test/faults.e2e.test.ts',
  'test/jupyter-faults.e2e.test.ts',
  'test/deadline-meets-cancel.e2e.test.ts',
  'test/http-faults.e2e.test.ts',
  'test/first-interrupt.e2e.test.ts',
  'test/jupyter-interrupt-heard.e2e.test.ts',
  'test/jupyter-clean-exits.e2e.test.ts',
  // The memory guard and big outputs: their limits are the machine's memory, shared by whatever runs beside them.
  'test/memory.e2e.test.ts',
  'test/detached-memory.e2e.test.ts',
  'test/memory-meets-stops.e2e.test.ts',
  'test/jupyter-machine-guard.e2e.test.ts',
  'test/jupyter-big-output.e2e.test.ts',
  // Timings recorded against bounds (model reads, spilled outputs).
  'test/model-reads.e2e.test.ts',
  'test/spill.e2e.test.ts',
  // The browser: Chromium with a JupyterLab page, heavy on both cores.
  'test/notebook-browser.e2e.test.ts',
  'test/notebook-cells.e2e.test.ts',
  'test/notebook-page-identity.e2e.test.ts',
  'test/notebook-page-offscreen.e2e.test.ts',
  'test/notebook-page-outputs.e2e.test.ts',
  'test/notebook-page-running.e2e.test.ts',
  'test/notebook-tools-browser.e2e.test.ts',
  'test/notebook-tools.e2e.test.ts',
  // JupyterHub (its proxy, hub and single-user servers) and the human-client checks beside it.
  'test/jupyterhub.e2e.test.ts',
  'test/jupyter-who.e2e.test.ts',
];

const { include, ...shared } = realProcessesConfig().test ?? {};

const GROUPS = [
  {
    extends: true as const,
    test: { name: 'side by side', include: include ?? [], exclude: ALONE, fileParallelism: true, maxWorkers: 3, sequence: { groupOrder: 0 } },
  },
  {
    extends: true as const,
    test: { name: 'alone', include: ALONE, fileParallelism: false, maxWorkers: 1, sequence: { groupOrder: 1 } },
  },
];

// IPYTHON_MCP_E2E_GROUP names one group to run (tooling/test.sh runs `side by side` beside the other packages' suites,
// then `alone` with nothing beside it); unset, both run, one after the other.
const only = process.env.IPYTHON_MCP_E2E_GROUP;
if (only !== undefined && !GROUPS.some((group) => group.test.name === only)) {
  throw new Error(`IPYTHON_MCP_E2E_GROUP=${JSON.stringify(only)} names no group; use one of: ${GROUPS.map((group) => JSON.stringify(group.test.name)).join(', ')}`);
}

export default defineConfig({
  test: {
    ...shared,
    projects: only === undefined ? GROUPS : GROUPS.filter((group) => group.test.name === only),
  },
});
