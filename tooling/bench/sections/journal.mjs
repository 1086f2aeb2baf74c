// Session journal: execute("1+1") round trips with the journal off, on (a fresh file), and on while continuing
// a large journal (every rewrite copies the whole file), measured in interleaved blocks on servers that run side
// by side, so a change of machine load hits every variant alike.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settle, startServer } from '../lib/mcp.mjs';
import { cpuPerCall, cpuSnapshot, sleep } from '../lib/procs.mjs';
import { quantile, spread, summarize } from '../lib/stats.mjs';

const median = (values) => quantile(values, 0.5);
import { CELL } from './execute.mjs';

const BLOCKS = 20;
const LARGE_JOURNAL_BYTES = 8 * 1024 * 1024;

/** An ipython-mcp journal of about `bytes` bytes, which the server continues (as a later session would). */
function writeLargeJournal(path, bytes) {
  const cell = (index) => JSON.stringify({ id: `bench-${index}`, cell_type: 'code', execution_count: index, metadata: {}, source: `x_${index} = ${index}`, outputs: [{ output_type: 'stream', name: 'stdout', text: `${'o'.repeat(4000)}\n` }] });
  const cells = [];
  let size = 0;
  for (let index = 1; size < bytes; index += 1) {
    const text = cell(index);
    cells.push(text);
    size += text.length + 2;
  }
  const metadata = { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }, ipython_mcp: { journal: 1, created: new Date().toISOString() } };
  writeFileSync(path, `{\n "cells": [\n${cells.join(',\n')}\n ],\n "metadata": ${JSON.stringify(metadata)},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n`, { mode: 0o600 });
}

function check(result) {
  if (result.isError || result.structuredContent?.result?.value !== 2) throw new Error(`execute("1+1") failed: ${JSON.stringify(result).slice(0, 300)}`);
}

export async function measureJournal(ctx) {
  const directory = mkdtempSync(join(tmpdir(), 'ipython-mcp-bench-journal-'));
  const large = join(directory, 'large.ipynb');
  writeLargeJournal(large, LARGE_JOURNAL_BYTES);
  const variants = [
    { key: 'off', env: {} },
    { key: 'on', env: { IPYTHON_MCP_JOURNAL: join(directory, 'fresh.ipynb') } },
    { key: 'onLarge', env: { IPYTHON_MCP_JOURNAL: large, IPYTHON_MCP_JOURNAL_MAX_BYTES: String(64 * 1024 * 1024) } },
  ];
  const servers = [];
  try {
    for (const variant of variants) {
      const server = await startServer(ctx.modules, { env: ctx.serverEnv(variant.env), label: `journal bench (${variant.key})` });
      servers.push(server);
      await settle(server);
      for (let index = 0; index < ctx.n.warmup; index += 1) check(await server.call('execute', { code: CELL }));
    }
    const samples = Object.fromEntries(variants.map((variant) => [variant.key, []]));
    // Per block, each journal variant's median over the journal-off median of the same block: the ratio that a
    // drifting machine load disturbs least (the load on these shared 2-core machines changes within seconds).
    const blockRatios = { on: [], onLarge: [] };
    const snapshot = () => Object.fromEntries(variants.map((variant, index) => [variant.key, cpuSnapshot(servers[index].pid)]));
    const cpuBefore = snapshot();
    const perBlock = Math.max(1, Math.round(ctx.n.execute / BLOCKS));
    for (let block = 0; block < BLOCKS; block += 1) {
      // Rotate the order per block so no variant always runs first.
      const blockSamples = {};
      for (let offset = 0; offset < variants.length; offset += 1) {
        const index = (block + offset) % variants.length;
        const server = servers[index];
        const taken = [];
        for (let call = 0; call < perBlock; call += 1) {
          const started = performance.now();
          check(await server.call('execute', { code: CELL }));
          taken.push(performance.now() - started);
        }
        samples[variants[index].key].push(...taken);
        blockSamples[variants[index].key] = median(taken);
      }
      for (const key of Object.keys(blockRatios)) blockRatios[key].push(blockSamples[key] / blockSamples.off);
    }
    await sleep(500); // the last journal writes land inside the CPU accounting
    const cpuPerCallUs = Object.fromEntries(
      Object.entries(cpuPerCall(cpuBefore, snapshot(), perBlock * BLOCKS)).map(([key, value]) => [key, value]),
    );
    const journals = {};
    for (const [index, variant] of variants.entries()) {
      if (variant.key === 'off') continue;
      journals[variant.key] = (await servers[index].call('runtime_status', {})).structuredContent.journal;
    }
    const result = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, { samples: values, summary: summarize(values) }]));
    return {
      ...result,
      pairedRatio: Object.fromEntries(Object.entries(blockRatios).map(([key, values]) => [key, { ...spread(values), blocks: values }])),
      serverCpuPerCallUs: cpuPerCallUs,
      journals,
      largeJournalBytes: statSync(large).size,
    };
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    rmSync(directory, { recursive: true, force: true });
  }
}
