#!/usr/bin/env node
// `pnpm bench`: measures the performance targets of DESIGN.md side by side with the alternatives, in one run on
// this machine, prints one table (medians, p90, goal, ratios) and writes bench/results/latest.json.
// Not part of the test run; timings are never asserted anywhere else.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ROOT, RESULTS_DIR, buildTree, chooseWorkerPython, ensureBenchVenv, loadModules, machineFacts, pythonFacts } from './lib/env.mjs';
import { installExitHandlers, killAll, leftovers, sleep } from './lib/procs.mjs';
import { calibrate, describeMachine, watchMachine } from './lib/noise.mjs';
import { buildRows, printCpu, printMachine, printProfile, printTable } from './lib/report.mjs';
import { summarize } from './lib/stats.mjs';
import { measureBurst } from './sections/burst.mjs';
import { measureCodeMode } from './sections/code-mode.mjs';
import { measureCodeModeServers } from './sections/code-mode-servers.mjs';
import { measureCodeModeJupyter } from './sections/code-mode-jupyter.mjs';
import { measureColdStart } from './sections/cold-start.mjs';
import { measureComposedFloor, measureFloor, measureKernel, measureMcpExecute, measureMcpFloor, measureMcpHttpExecute, measureMcpShapedFloor, measurePeer, measurePipeFloor, measureRuntimeExecute } from './sections/execute.mjs';
import { measureFlood } from './sections/flood.mjs';
import { measureMemory } from './sections/memory.mjs';
import { measureDetach } from './sections/detach.mjs';
import { measureJournal } from './sections/journal.mjs';
import { measureJupyter } from './sections/jupyter.mjs';
import { measureJupyterTurns } from './sections/jupyter-turns.mjs';
import { measureLayers } from './sections/layers.mjs';
import { measureNotebook } from './sections/notebook.mjs';
import { measureNotebookTools } from './sections/notebook-tools.mjs';
import { measureProfile } from './sections/profile.mjs';
import { measureProtocolEras } from './sections/protocol-eras.mjs';
import { measureMcpRecovery, measureRuntimeRecovery } from './sections/recovery.mjs';
import { measureRounds } from './sections/rounds.mjs';
import { measureScale } from './sections/scale.mjs';
import { measureSandbox } from './sections/sandbox.mjs';
import { measureState } from './sections/state.mjs';

const SECTIONS = ['execute', 'jupyter', 'jupyter-turns', 'notebook', 'notebook-tools', 'layers', 'code-mode', 'code-mode-servers', 'code-mode-jupyter', 'protocol-eras', 'recovery', 'cold-start', 'flood', 'memory', 'burst', 'scale', 'journal', 'detach', 'state', 'sandbox', 'profile'];

const SIZES = {
  full: {
    execute: 1000, warmup: 50, rounds: 15, kernel: 1000, jupyter: 300, stdinCalls: 1000, toolCalls: 5000, recovery: 5, coldStarts: 10, floodMiB: 1024, memory: 5,
    burst: 1000, burstSlowSeconds: 5, scaleSizes: [1_000, 10_000, 100_000], scaleReps: 10, scaleRepsLarge: 5, profileCalls: 2000,
    layerRounds: 15, layerCalls: 2000, workerLayerCalls: 300, stdioLayerCalls: 300,
    stateGiB: 1, stateSmall: 100_000, stateReps: 3, sandboxStarts: 6, eraCalls: 400, eraWarmup: 2000,
  },
  quick: {
    execute: 200, warmup: 20, rounds: 7, kernel: 200, jupyter: 100, stdinCalls: 200, toolCalls: 1000, recovery: 2, coldStarts: 3, floodMiB: 256, memory: 2,
    burst: 1000, burstSlowSeconds: 3, scaleSizes: [1_000, 10_000], scaleReps: 5, scaleRepsLarge: 3, profileCalls: 500,
    layerRounds: 7, layerCalls: 1000, workerLayerCalls: 200, stdioLayerCalls: 150,
    stateGiB: 0.25, stateSmall: 20_000, stateReps: 2, sandboxStarts: 3, eraCalls: 150, eraWarmup: 500,
  },
};

const HELP = `usage: pnpm bench [-- options]

Measures the DESIGN.md performance targets and the alternatives in one run; prints one table and writes
bench/results/latest.json. Needs the README setup (built dist/, a worker Python with IPython). The first run
creates the bench-only venv (.venv-bench: ipykernel, jupyter_client, py-spy from PyPI).

The issue-18 goal ratios are medians of per-round ratios: every process their loops need is started once and kept
warm, then R rounds each run a short block of every loop (order rotated per round), and each ratio is taken per
round from that round's medians, so load drift between loops hits both sides of a ratio; the notes give the
rounds' range and the ratio of the separate loops' medians. The spawn → initialize ratio is the median over
interleaved spawn pairs.

  --quick                     smaller N everywhere (a couple of minutes)
  --compare "CMD ..."         another stdio MCP server to measure with the same client (repeatable)
  --tool NAME                 its tool to call (applies to the last --compare)
  --arg-template JSON         the tool's arguments; "{code}" in a string value becomes the cell (1+1)
  --python PATH               worker Python (default: IPYTHON_MCP_PYTHON, .venv, the managed venv, python3)
  --bench-venv DIR            bench-only venv (default: .venv-bench)
  --only a,b                  run only these sections (${SECTIONS.join(', ')})
  --skip a,b                  skip these sections
  --n N                       execute round trips per loop (overrides the mode's default)
  --rounds R                  interleaved rounds for the goal ratios (default 15, --quick 7); each loop's
                              n calls are split over them
  --warmup N                  untimed calls before each loop and before the rounds (default 50, --quick 20).
                              A few thousand measures steady state: a Node server's JIT keeps optimizing
                              over its first few thousand calls, on background threads, and ours has more
                              code to optimize than the floors (bench/RESULTS.md, "Issue 18, fourth pass")
  --no-py-spy                 profile the worker with cProfile instead of py-spy
  --output PATH               JSON output (default: bench/results/latest.json)
  --no-build                  measure dist/ as it is (default: build first with turbo, cached when up to date)
`;

function parseArgs(argv) {
  const options = { mode: 'full', compare: [], only: null, skip: new Set(), python: undefined, benchVenv: join(ROOT, '.venv-bench'), output: join(RESULTS_DIR, 'latest.json'), n: null, noPySpy: false, rounds: null, warmup: null, build: true };
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index];
    const value = () => {
      if (index + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++index];
    };
    switch (arg) {
      case '--':
        break;
      case '--help':
      case '-h':
        process.stdout.write(HELP);
        process.exit(0);
        break;
      case '--quick':
        options.mode = 'quick';
        break;
      case '--full':
        options.mode = 'full';
        break;
      case '--compare':
        options.compare.push({ command: value(), tool: 'execute', argTemplate: { code: '{code}' } });
        break;
      case '--tool':
        if (options.compare.length === 0) throw new Error('--tool must follow a --compare');
        options.compare.at(-1).tool = value();
        break;
      case '--arg-template': {
        if (options.compare.length === 0) throw new Error('--arg-template must follow a --compare');
        const text = value();
        try {
          options.compare.at(-1).argTemplate = JSON.parse(text);
        } catch (error) {
          throw new Error(`--arg-template is not JSON: ${error.message}`);
        }
        break;
      }
      case '--python':
        options.python = value();
        break;
      case '--bench-venv':
        options.benchVenv = resolve(value());
        break;
      case '--only':
        options.only = new Set(value().split(','));
        break;
      case '--skip':
        for (const name of value().split(',')) options.skip.add(name);
        break;
      case '--n':
        options.n = Number(value());
        if (!Number.isInteger(options.n) || options.n <= 0) throw new Error('--n needs a positive integer');
        break;
      case '--rounds':
        options.rounds = Number(value());
        if (!Number.isInteger(options.rounds) || options.rounds <= 0) throw new Error('--rounds needs a positive integer');
        break;
      case '--warmup':
        options.warmup = Number(value());
        if (!Number.isInteger(options.warmup) || options.warmup < 0) throw new Error('--warmup needs a non-negative integer');
        break;
      case '--no-build':
        options.build = false;
        break;
      case '--no-py-spy':
        options.noPySpy = true;
        break;
      case '--output':
        options.output = resolve(value());
        break;
      default:
        throw new Error(`unknown option ${arg} (see --help)`);
    }
  }
  for (const name of [...(options.only ?? []), ...options.skip]) {
    if (!SECTIONS.includes(name)) throw new Error(`unknown section ${name}; sections: ${SECTIONS.join(', ')}`);
  }
  return options;
}

function log(message) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n`);
    process.exit(2);
  }
  installExitHandlers();
  const benchStarted = performance.now();
  const startedAt = new Date().toISOString();
  const n = { ...SIZES[options.mode] };
  if (options.n) n.execute = n.kernel = options.n;
  if (options.rounds) n.rounds = options.rounds;
  if (options.warmup !== null) n.warmup = options.warmup;
  const wanted = (name) => (options.only ? options.only.has(name) : true) && !options.skip.has(name);

  if (options.build) buildTree(log);
  const modules = await loadModules();
  const worker = chooseWorkerPython(options.python);
  const workerFacts = pythonFacts(worker.python);
  if (!workerFacts.ipython) throw new Error(`the worker Python ${worker.python} has no IPython; run the README setup or pass --python`);
  log(`worker Python: ${worker.python} (${worker.source}; Python ${workerFacts.python}, IPython ${workerFacts.ipython}, msgpack ${workerFacts.msgpack ?? 'absent'})`);
  const machine = machineFacts();
  log(`machine: ${machine.nproc} cores, ${machine.memoryGiB} GiB, ${machine.cpuModel}; load ${machine.loadAverageAtStart.join(' ')}`);

  let venv = null;
  const needsVenv = wanted('execute') || wanted('code-mode') || wanted('profile');
  const setupStarted = performance.now();
  let venvError = null;
  if (needsVenv) {
    try {
      venv = await ensureBenchVenv(options.benchVenv, workerFacts, log);
    } catch (error) {
      // The alternatives (ipykernel, the stdin channel) and py-spy need it; everything else runs without it.
      venvError = String(error?.message ?? error).slice(0, 1000);
      log(`bench venv unavailable, the Jupyter alternatives will be missing: ${venvError.split('\n')[0]}`);
    }
  }
  const setupS = (performance.now() - setupStarted) / 1000;

  const ctx = {
    modules,
    python: worker.python,
    benchPython: venv?.python ?? null,
    venvError,
    n,
    noPySpy: options.noPySpy,
    /** The server's environment: the chosen worker Python plus per-section settings. */
    serverEnv: (extra = {}) => ({ IPYTHON_MCP_PYTHON: worker.python, ...extra }),
    /** Calibration times (ms) of the current section: sections with rounds call ctx.calibrate() once per round. */
    calibrations: [],
    calibrate: () => ctx.calibrations.push(calibrate()),
  };
  const results = {};
  const errors = {};
  const timings = {};
  const loads = {};
  const machineBySection = {};
  const step = async (section, key, what, fn) => {
    if (!wanted(section)) return;
    log(`${key}: ${what}`);
    loads[key] = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    const started = performance.now();
    ctx.calibrations = [];
    const watch = watchMachine();
    try {
      results[key] = await fn();
      machineBySection[key] = watch.end(ctx.calibrations);
      log(`${key}: ${describeMachine(machineBySection[key])}`);
    } catch (error) {
      errors[key] = String(error?.stack ?? error).slice(0, 2000);
      log(`${key} FAILED: ${String(error?.message ?? error).split('\n')[0]}`);
      killAll();
    }
    timings[key] = Number(((performance.now() - started) / 1000).toFixed(1));
    await sleep(300);
  };

  // The floor runs in two halves around our loops, so a change of machine load hits both sides of the ratio.
  const half = Math.max(1, Math.round(n.execute / 2));
  await step('execute', 'floorA', `InteractiveShell.run_cell in process ×${half} (first half)`, () => measureFloor(ctx, half));
  await step('execute', 'executeMcp', `execute("1+1") via MCP stdio ×${n.execute}`, () => measureMcpExecute(ctx));
  await step('execute', 'executeMcpHttp', `execute("1+1") via MCP Streamable HTTP ×${n.execute}`, () => measureMcpHttpExecute(ctx));
  await step('execute', 'executeRuntime', `execute("1+1") via Runtime.run (no MCP) ×${n.execute}`, () => measureRuntimeExecute(ctx));
  await step('execute', 'floorB', `InteractiveShell.run_cell in process ×${half} (second half)`, () => measureFloor(ctx, half));
  if (results.floorA && results.floorB) {
    const samples = [...results.floorA.samples, ...results.floorB.samples];
    results.floor = { ...results.floorA, samples, summary: summarize(samples), halves: [results.floorA.summary, results.floorB.summary] };
    delete results.floorA;
    delete results.floorB;
  }
  await step('execute', 'mcpFloor', `no-op tool on a bare SDK stdio server ×${n.execute}`, () => measureMcpFloor(ctx));
  await step('execute', 'mcpShapedFloor', `our recorded execute result from a bare SDK stdio server ×${n.execute}`, () =>
    measureMcpShapedFloor(ctx, results.executeMcp?.shape));
  await step('execute', 'composedFloor', `composed floor: execute("1+1") via a bare SDK server → pipe → run_cell child ×${n.execute}`, () =>
    measureComposedFloor(ctx, results.executeMcp?.shape));
  // The pipe round trip is the limit of both Runtime.run and the nested call: it runs with either section.
  await step(wanted('execute') ? 'execute' : 'code-mode', 'pipeFloor', `Node ↔ Python pipe ping-pong ×${n.execute}`, () => measurePipeFloor(ctx));
  // The goal ratios: every loop above (and the nested call) again, all processes warm at once, in R interleaved
  // rounds; the ratios are taken per round. The single loops above stay for their own rows and the CPU accounting.
  await step(wanted('execute') ? 'execute' : 'code-mode', 'rounds', `goal ratios in ${n.rounds} interleaved rounds (every loop, a block each per round)`, () =>
    measureRounds(ctx, { withExecute: wanted('execute'), withCodeMode: wanted('code-mode') }));
  await step('execute', 'kernel', `ipykernel via jupyter_client ×${n.kernel}`, () => measureKernel({ ...ctx, n: { ...n, stdinCalls: 0 } }));
  for (const [index, peer] of options.compare.entries()) {
    await step('execute', `peer${index + 1}`, `peer server "${peer.command}" tool ${peer.tool} ×${n.execute}`, () => measurePeer(ctx, peer));
  }
  await step('jupyter', 'jupyter', `execute("1+1") in a Jupyter server's kernel: MCP (--jupyter --kernel) vs bare execute_request over the same WebSocket, Node client, ZeroMQ; stock server and TCP_NODELAY; ${n.rounds} interleaved rounds, ×${n.jupyter} each`, () =>
    measureJupyter(ctx));
  await step('jupyter-turns', 'jupyterTurns', `three ipython-mcp on one kernel taking turns with execute("1+1") vs one alone on it; stock server and TCP_NODELAY; ${n.rounds} interleaved rounds, ×${n.jupyter} each`, () =>
    measureJupyterTurns(ctx));
  await step('notebook', 'notebook', `the agent's cells in a notebook's shared document (jupyter-collaboration): execute("1+1") with --notebook-cells on vs off, ${n.rounds} interleaved rounds, ×${n.jupyter} each; the cell visible to a second document client, ×15`, () =>
    measureNotebook(ctx));
  await step('notebook-tools', 'notebookTools', `the notebook tool on a 200-cell notebook (jupyter-collaboration): read at the server (round trip less a refused call, interleaved), and an inserted cell visible to a second document client; ${n.rounds} rounds`, () =>
    measureNotebookTools(ctx));
  await step('layers', 'layers', `each layer of an execute call alone, in process, no I/O ×${n.layerRounds} rounds`, () => measureLayers(ctx));
  await step('code-mode', 'codeMode', `Code Mode nested tool calls ×${n.toolCalls} (bridge, engine, stdin channel ×${n.stdinCalls}, engine, bridge)`, () => measureCodeMode(ctx));
  await step('code-mode-jupyter', 'codeModeJupyter', `Code Mode nested calls on a Jupyter server's kernel (stdin channel) vs the bare input_request → input_reply round trip on the same kernel, ZeroMQ, and our local nested call; stock server and TCP_NODELAY; ${n.rounds} interleaved rounds`, () =>
    measureCodeModeJupyter(ctx));
  await step('code-mode-servers', 'codeModeServers', 'upstream MCP calls from run_code (code-mode --servers) vs direct client calls', () => measureCodeModeServers(ctx));
  await step('protocol-eras', 'protocolEras', `execute("1+1") on protocol 2026-07-28 vs 2025-11-25, ours and the bare SDK floor of each era, stdio; ${n.rounds} interleaved rounds ×${n.eraCalls} each`, () =>
    measureProtocolEras(ctx));
  await step('recovery', 'recoveryStandby', `hard recovery via Runtime, warm standby ×${n.recovery}`, () => measureRuntimeRecovery(ctx, true));
  await step('recovery', 'recoveryNoStandby', `hard recovery via Runtime, no standby ×${n.recovery}`, () => measureRuntimeRecovery(ctx, false));
  await step('recovery', 'recoveryMcp', `hard recovery via MCP (standby) ×${n.recovery}`, () => measureMcpRecovery(ctx));
  await step('cold-start', 'coldStart', `cold start ×${n.coldStarts}`, () => measureColdStart(ctx));
  await step('flood', 'flood', `output flood ${n.floodMiB} MiB`, () => measureFlood(ctx));
  await step('memory', 'memory', `memory guard: 4 cells past a 400 MB limit ×${n.memory}`, () => measureMemory(ctx));
  await step('burst', 'burst', `admission burst ×${n.burst}`, () => measureBurst(ctx));
  await step('scale', 'scale', `scale ${n.scaleSizes.join(', ')} names + 100 dynamic tools`, () => measureScale(ctx));
  await step('journal', 'journal', `execute("1+1") with the session journal off / on / continuing 8 MiB, interleaved ×${n.execute} each`, () => measureJournal(ctx));
  await step('detach', 'detach', `detach_after_seconds: execute("1+1") with an unused detach time, and a 50 ms cell detached + job wait, against plain calls, interleaved`, () => measureDetach(ctx));
  await step('state', 'state', `--state snapshot save/restore vs dill.dump/dill.load, ${n.stateGiB} GiB numpy, ${n.stateSmall} small objects ×${n.stateReps}`, () => measureState(ctx));
  await step('sandbox', 'sandbox', `--sandbox vs without: spawn → first execute ×${n.sandboxStarts} each; warm execute("1+1"), guard on and off, interleaved ×${n.execute} each`, () => measureSandbox(ctx));
  await step('sandbox', 'sandboxMemory', `memory guard inside --sandbox: 4 cells past a 400 MB limit ×${n.memory}`, () => measureMemory(ctx, { sandboxed: true }));
  await step('profile', 'profile', `profiled execute loop ×${n.profileCalls} (client inspector, server --cpu-prof, worker ${options.noPySpy ? 'cProfile' : 'py-spy'})`, () => measureProfile(ctx));

  const killed = killAll();
  await sleep(300);
  const left = leftovers();
  const durationS = (performance.now() - benchStarted) / 1000;
  const rows = buildRows(results, errors, machineBySection);
  const report = {
    schema: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    durationS: Number(durationS.toFixed(1)),
    setupS: Number(setupS.toFixed(1)),
    mode: options.mode,
    n,
    machine: { ...machine, loadAverageAtEnd: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number) },
    versions: {
      node: process.version,
      mcpSdk: modules.sdkVersion,
      workerPython: worker.python,
      workerPythonSource: worker.source,
      python: workerFacts.python,
      ipython: workerFacts.ipython,
      msgpack: workerFacts.msgpack,
      kernel: results.kernel?.versions ?? null,
      pydanticAiHarness: venv?.harness ?? null,
      benchVenvError: venvError,
    },
    compare: options.compare,
    rows,
    results,
    errors,
    sectionSeconds: timings,
    loadAverage1mAtSectionStart: loads,
    machineBySection,
    processes: { killedAtEnd: killed, leftovers: left },
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(options.output, `${JSON.stringify(report, null, 1)}\n`);

  printTable(rows, report);
  printMachine(machineBySection);
  printCpu(results);
  if (results.profile) printProfile(results.profile);
  const harness = venv?.harness;
  if (harness && !harness.has_IPythonCodeMode) {
    process.stdout.write(
      `\nNote: ${harness.requirement} → pydantic-ai-harness ${harness.version ?? '(not installed)'} has no IPythonCodeMode ` +
        `(pip: ${/does not provide the extra '[^']+'/.exec(harness.pipStderr)?.[0] ?? `exit ${harness.installExit}`}); the Code Mode ` +
        'alternative is measured as the same mechanism directly: a kernel function that calls input() and a jupyter_client ' +
        'that answers on the stdin channel.\n',
    );
  }
  process.stdout.write(
    `\n${Object.keys(errors).length === 0 ? 'all sections ran' : `FAILED sections: ${Object.keys(errors).join(', ')}`}; ` +
      `total ${durationS.toFixed(0)} s (bench venv setup ${setupS.toFixed(0)} s); ` +
      `processes left behind: ${left.length === 0 ? 'none' : left.map((item) => `${item.label} ${item.pid}`).join(', ')}${killed.length ? ` (killed at the end: ${killed.join(', ')})` : ''}\n` +
      `JSON: ${relative(ROOT, options.output)}\n`,
  );
  process.exitCode = Object.keys(errors).length === 0 ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`bench: fatal: ${error?.stack ?? error}\n`);
  killAll();
  process.exit(1);
});
