// Table rows of the layers section (sections/layers.mjs): CPU per execute call of each layer alone, in process.
import { formatMs } from './stats.mjs';

const us = (value) => (value === null || value === undefined ? '—' : formatMs(value / 1000));

function layerRow(label, figure, comparison) {
  return {
    label,
    median: us(figure?.median),
    p90: '—',
    goal: '(attribution)',
    verdict: '',
    comparison: `${comparison}; rounds p25–p75 ${us(figure?.p25)}–${us(figure?.p75)}`,
    raw: { medianUs: figure?.median ?? null, p25Us: figure?.p25 ?? null, p75Us: figure?.p75 ?? null },
  };
}

/** The layers rows, or none when the section did not run. */
export function layerRows(results) {
  const layers = results.layers;
  if (!layers) return [];
  const { js, worker } = layers;
  const rows = [
    {
      label: 'layers of one execute, each alone (CPU per call, in process, no I/O)',
      median: '',
      p90: '',
      goal: '',
      verdict: '',
      comparison: `medians of ${layers.rounds} interleaved rounds; what is ours vs the SDK's and IPython's own`,
      raw: {},
    },
    layerRow('  SDK client + server, no-op tool', js.perRound.sdkNoop, 'the bare SDK over InMemoryTransport'),
    layerRow('  SDK client + server, our execute result', js.perRound.sdkOurResult, 'same, answering our recorded result with our tool definition'),
    layerRow('  ours via MCP over a fake worker', js.perRound.oursMcp, 'our server (SDK included) and runtime; the worker answers at once over an InMemoryChannel'),
    layerRow('  ours: the MCP layer', js.derived.mcpLayer, 'ours via MCP − Runtime.run − SDK with our result: arguments, admission, compact result, text'),
    layerRow('  ours: Runtime.run, JavaScript', js.derived.runtimeGlue, 'Runtime.run over the fake worker less the in-memory channel\'s two structured clones'),
    layerRow('  ours: codec, parent side', js.perRound.codec, 'msgpack: encode the request, decode the response'),
    layerRow('  ours: worker around run_cell', worker.derived.workerOwn, 'ShellOwner begin + execute + end − bare run_cell, same shell: capture, value contract'),
    layerRow('  ours: worker, with the response frame', worker.derived.workerOwnWithFrame, 'the same plus msgpack-encoding the response'),
    layerRow('  IPython: run_cell in that process', worker.perRound.runCell, 'for scale: IPython\'s own work per execute'),
    layerRow('  SDK: its cost of our result shape', js.derived.resultShape, 'SDK with our result − SDK no-op (output schema, structured content)'),
  ];
  const stdio = layers.stdio;
  if (stdio) {
    rows.push(
      layerRow('  stdio: bare SDK server, our result (wall)', stdio.perRound.bare.wallUs, `real processes that sleep between calls; its server CPU ${us(stdio.perRound.bare.serverCpuUs.median)} per call`),
      layerRow('  stdio: our server over a fake worker (wall)', stdio.perRound.ours.wallUs, `same client; no Python behind it; its server CPU ${us(stdio.perRound.ours.serverCpuUs.median)} per call`),
      layerRow('  ours in a real server process (wall)', stdio.derived.oursWallUs, `the two rows above subtracted per round; server CPU ${us(stdio.derived.oursServerCpuUs.median)} per call: our MCP layer, runtime and codec on cold caches (in process: the warm figures above)`),
    );
  }
  return rows;
}
