// Summaries of CPU profiles: V8 .cpuprofile (node --cpu-prof, or the inspector) and py-spy raw (collapsed) stacks.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ROOT } from './env.mjs';

// Bundled code (the app's dist/shared-*.js inlines the workspace packages) is attributed through its source map.
const sourceMaps = new Map();
function sourceMapFor(url) {
  // Only the repository's own built code: third-party maps point at sources the categories cannot name.
  if (!url.startsWith('file://') || !url.endsWith('.js') || url.includes('/node_modules/')) return null;
  if (!sourceMaps.has(url)) {
    let map = null;
    try {
      const path = `${fileURLToPath(url)}.map`;
      if (existsSync(path)) map = new SourceMap(JSON.parse(readFileSync(path, 'utf8')));
    } catch {
      map = null;
    }
    sourceMaps.set(url, map);
  }
  return sourceMaps.get(url);
}

/** The frame's original location: { url, line } mapped through a source map when there is one. */
function originalFrame(callFrame) {
  const map = sourceMapFor(callFrame.url || '');
  if (map) {
    try {
      const entry = map.findEntry(callFrame.lineNumber, callFrame.columnNumber);
      if (entry && entry.originalSource) {
        return { url: entry.originalSource.replace(/^(\.\.\/)+/, '/'), line: entry.originalLine + 1 };
      }
    } catch {
      // fall through
    }
  }
  return { url: callFrame.url || '', line: callFrame.lineNumber + 1 };
}

function shortUrl(url) {
  if (!url) return '';
  let text = url.replace(/^file:\/\//, '');
  const pnpm = text.indexOf('/node_modules/.pnpm/');
  if (pnpm >= 0) {
    text = text.slice(pnpm + '/node_modules/.pnpm/'.length);
    text = text.replace(/^[^/]+\/node_modules\//, '');
  } else if (text.startsWith(ROOT)) {
    text = text.slice(ROOT.length + 1);
  }
  return text;
}

/** Which layer a V8 frame belongs to. */
export function v8Category(callFrame) {
  const url = originalFrame(callFrame).url;
  const name = callFrame.functionName;
  if (name === '(idle)') return 'idle';
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return 'V8/native (program)';
  if (url.includes('@modelcontextprotocol')) return 'MCP SDK';
  if (url.includes('/zod')) return 'zod';
  if (url.includes('/ajv')) return 'ajv';
  if (url.includes('msgpackr')) return 'msgpackr';
  const workspace = /\/packages\/([^/]+)\//.exec(url);
  if (workspace) return `@ipython-mcp/${workspace[1]}`;
  if (url.includes('/apps/ipython-mcp/src/')) return 'ipython-mcp app';
  if (url.includes('/tooling/bench/')) return 'bench harness';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  if (url === '' ) return `native (${name || 'anonymous'})`;
  if (url.includes('node_modules')) return shortUrl(url).split('/')[0];
  return shortUrl(url);
}

/** Self and inclusive time per function, self time per layer, from a V8 CPU profile. */
export function summarizeCpuProfile(profile, { top = 15, windowUs = null } = {}) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const keyOf = (node) => {
    const frame = node.callFrame;
    const original = originalFrame(frame);
    return `${frame.functionName || '(anonymous)'} ${shortUrl(original.url)}${original.url ? `:${original.line}` : ''}`;
  };
  const self = new Map();
  const inclusive = new Map();
  const layers = new Map();
  let total = 0;
  let idle = 0;
  const deltas = profile.timeDeltas ?? [];
  // Sample timestamps are CLOCK_MONOTONIC µs, the clock of process.hrtime in every process: `windowUs` keeps the
  // samples of one measured loop even when the profile covers a whole process lifetime.
  let timestamp = profile.startTime;
  for (let index = 0; index < profile.samples.length; index += 1) {
    timestamp += deltas[index] ?? 0;
    if (windowUs && (timestamp < windowUs[0] || timestamp > windowUs[1])) continue;
    const delta = (deltas[index + 1] ?? deltas[index] ?? 0) / 1000; // ms; the delta after a sample is its duration
    const leaf = nodes.get(profile.samples[index]);
    if (!leaf) continue;
    total += delta;
    const category = v8Category(leaf.callFrame);
    if (category === 'idle') {
      idle += delta;
      continue;
    }
    const key = keyOf(leaf);
    self.set(key, (self.get(key) ?? 0) + delta);
    layers.set(category, (layers.get(category) ?? 0) + delta);
    const seen = new Set();
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const node = nodes.get(id);
      if (node.callFrame.functionName === '(root)') break;
      const nodeKey = keyOf(node);
      if (seen.has(nodeKey)) continue;
      seen.add(nodeKey);
      inclusive.set(nodeKey, (inclusive.get(nodeKey) ?? 0) + delta);
    }
  }
  const busy = total - idle;
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Number(ms.toFixed(1)), shareOfBusy: Number((ms / busy).toFixed(3)) }));
  return { totalMs: Number(total.toFixed(1)), idleMs: Number(idle.toFixed(1)), busyMs: Number(busy.toFixed(1)), layers: rank(layers), self: rank(self), inclusive: rank(inclusive) };
}

/** Self (leaf) and inclusive sample counts from py-spy's raw output ("frame;frame;... count" per line). */
export function summarizePySpyRaw(text, { top = 15, rate, durationS } = {}) {
  const self = new Map();
  const inclusive = new Map();
  const threads = new Map();
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^(.*) (\d+)$/.exec(line.trim());
    if (!match) continue;
    const count = Number(match[2]);
    const frames = match[1].split(';');
    total += count;
    let start = 0;
    if (/^(thread|process) /.test(frames[0])) {
      // --threads puts "thread (0x…)" (and maybe "process …") first.
      while (start < frames.length && /^(thread|process) /.test(frames[start])) start += 1;
      const thread = frames.slice(0, start).join(' / ');
      threads.set(thread, (threads.get(thread) ?? 0) + count);
    }
    const stack = frames.slice(start).map((frame) => frame.replace(/ \(\/[^)]*\/(site-packages|python3\.\d+|ipython_mcp_worker)\//, ' ($1/'));
    if (stack.length === 0) continue;
    const leaf = stack[stack.length - 1];
    self.set(leaf, (self.get(leaf) ?? 0) + count);
    for (const frame of new Set(stack)) inclusive.set(frame, (inclusive.get(frame) ?? 0) + count);
  }
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, samples]) => ({ name, samples, share: Number((samples / total).toFixed(3)) }));
  const expected = rate && durationS ? rate * durationS : null;
  const threadList = [...threads].map(([name, samples]) => ({
    name: name.replace(/^thread \(\d+\): /, ''),
    samples,
    onCpuFraction: expected ? Number((samples / expected).toFixed(3)) : null,
  }));
  return {
    samples: total,
    mainThreadOnCpu: threadList.find((thread) => thread.name.includes('MainThread'))?.onCpuFraction ?? null,
    threads: threadList,
    self: rank(self),
    inclusive: rank(inclusive),
  };
}
