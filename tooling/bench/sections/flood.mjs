// Output flood: print ~1 GiB in a loop through the MCP server; wall time, peak RSS growth of the server (parent)
// and the worker, an exact check of the omitted-character count (head + tail + omitted = everything printed), and the
// size of the spill file (at most IPYTHON_MCP_OUTPUT_SPILL_MB, default 256 MiB).
import { statSync } from 'node:fs';
import { evaluate, settle, startServer } from '../lib/mcp.mjs';
import { memoryOf, sampleMemory, track } from '../lib/procs.mjs';

const LINE = 1 << 20; // each print writes LINE - 1 'x' characters plus '\n'

export async function measureFlood(ctx) {
  const lines = ctx.n.floodMiB;
  const expectedChars = lines * LINE;
  const server = await startServer(ctx.modules, {
    env: ctx.serverEnv({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '600', IPYTHON_MCP_QUEUE_WAIT_TIMEOUT_SECONDS: '600' }),
  });
  try {
    const workerPid = await evaluate(server, 'import os as _bench_os\n_bench_os.getpid()');
    track(workerPid, 'flood worker');
    // Let start-up (and the standby) settle, so the baseline is the idle working set.
    await settle(server);
    await evaluate(server, '0');
    const before = { server: memoryOf(server.pid), worker: memoryOf(workerPid) };
    const sampler = sampleMemory([server.pid, workerPid], 20);
    const started = performance.now();
    const result = await server.call('execute', { code: `for _ in range(${lines}):\n    print('x' * (${LINE} - 1))` });
    const wallMs = performance.now() - started;
    const peaks = sampler.stop();
    const after = { server: memoryOf(server.pid), worker: memoryOf(workerPid) };
    const structured = result.structuredContent ?? {};
    if ((structured.status ?? 'ok') !== 'ok') throw new Error(`flood cell failed: ${JSON.stringify(structured.error ?? result).slice(0, 300)}`);
    // Diagnostic: text IPython itself keeps per cell (IPython 9's InteractiveShell._tee copies every stdout/stderr
    // write into history_manager.outputs, whatever HistoryManager.enabled says).
    const retained = await evaluate(
      server,
      'try:\n    _bench_r = sum(len(s) for outs in get_ipython().history_manager.outputs.values() for o in outs for s in o.bundle.get("stream", []) if isinstance(s, str))\nexcept Exception:\n    _bench_r = None\n_bench_r',
    ).catch(() => null);
    const kept = structured.stdout.length;
    const omitted = structured.stdout_omitted_chars;
    // The spill file (the whole stream up to IPYTHON_MCP_OUTPUT_SPILL_MB): its size, and what passed the cap.
    const spill = typeof structured.stdout_spill === 'string' ? { bytes: statSync(structured.stdout_spill).size, omittedChars: structured.stdout_spill_omitted_chars ?? 0 } : null;
    const growth = (name, pid) => {
      // VmHWM counts only when it rose during the cell (it also holds start-up peaks from before the baseline).
      const hwmAfter = Math.max(peaks.get(pid).hwm, after[name]?.hwm ?? 0);
      const hwmRose = hwmAfter > (before[name].hwm ?? 0) ? hwmAfter : 0;
      const peak = Math.max(peaks.get(pid).rss, hwmRose);
      return { baselineRss: before[name].rss, baselineHwm: before[name].hwm, peakRss: peaks.get(pid).rss, hwmAfter, growth: Math.max(0, peak - before[name].rss) };
    };
    return {
      lines,
      expectedChars,
      keptChars: kept,
      omittedChars: omitted,
      exact: kept + omitted === expectedChars && structured.truncated?.stdout === true,
      spill,
      retainedByIpythonHistoryOutputs: retained,
      wallMs,
      throughputMiBps: expectedChars / (1024 * 1024) / (wallMs / 1000),
      server: growth('server', server.pid),
      worker: growth('worker', workerPid),
      note: 'growth = max(sampled VmRSS every 20 ms, VmHWM if it rose) − VmRSS just before the cell',
    };
  } finally {
    await server.close();
  }
}
