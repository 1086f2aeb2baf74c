// Test helpers shared by the workspace's suites. Plain ESM with a hand-written index.d.ts: no build step, so any
// package's tests can import it before anything is built.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export function testPython() {
  const fromEnv = process.env.IPYTHON_MCP_TEST_PYTHON;
  if (fromEnv) return fromEnv;
  const local = `${repoRoot}.venv/bin/python`;
  if (existsSync(local)) return local;
  throw new Error('no test Python: run `bash tooling/test.sh` (it creates .venv) or set IPYTHON_MCP_TEST_PYTHON');
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export async function waitForExit(pid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isAlive(pid);
}

export async function survivors(pids, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    alive = alive.filter(isAlive);
  }
  return alive;
}

export function childPids(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function processGroupMembers(pgid) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name: state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

export function taggedProcesses(tag) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes('ipython_mcp_worker') && !cmdline.includes('cli.js')) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`IPYTHON_MCP_TEST_RUN_TAG=${tag}`) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

export async function eventually(probe, accept, ms = 10_000) {
  const deadline = Date.now() + ms;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await probe();
  }
  return value;
}
