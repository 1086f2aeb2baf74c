// A real MCP stdio client (the SDK's Client + StdioClientTransport) around a spawned server process.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CLI } from './env.mjs';
import { descendants, isAlive, remember, track, untrack, waitForExit } from './procs.mjs';

/** Splits a command line like a POSIX shell would for simple cases (quotes and backslashes; no expansion). */
export function splitCommand(text) {
  const words = [];
  let current = '';
  let quote = null;
  let started = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = null;
      else if (char === '\\' && quote === '"' && index + 1 < text.length) current += text[++index];
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (char === '\\' && index + 1 < text.length) {
      current += text[++index];
      started = true;
    } else if (/\s/.test(char)) {
      if (started) words.push(current);
      current = '';
      started = false;
    } else {
      current += char;
      started = true;
    }
  }
  if (quote) throw new Error(`unbalanced quote in command: ${text}`);
  if (started) words.push(current);
  return words;
}

/**
 * Spawns a stdio MCP server and connects the SDK client. `timing.spawnedAt` / `initializedAt` are
 * performance.now() stamps around the spawn and the answered `initialize`.
 */
export async function startServer(modules, { command = process.execPath, args = [CLI], env = {}, label = 'ipython-mcp server', requestTimeoutMs = 600_000 } = {}) {
  const { Client, StdioClientTransport } = modules;
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  let stderrText = '';
  transport.stderr?.on('data', (chunk) => {
    stderrText += chunk.toString('utf8');
    if (stderrText.length > 200_000) stderrText = stderrText.slice(-100_000);
  });
  const client = new Client({ name: 'ipython-mcp-bench', version: '1.0.0' }, { capabilities: {} });
  const spawnedAt = performance.now();
  try {
    await client.connect(transport, { timeout: 60_000 });
  } catch (error) {
    if (transport.pid) track(transport.pid, label);
    throw new Error(`${label}: connect failed: ${error.message}; stderr: ${stderrText.slice(-500)}`);
  }
  const initializedAt = performance.now();
  // A burst of concurrent requests waits for 'drain' on the server's stdin once per request: not a leak.
  transport._process?.stdin?.setMaxListeners?.(0);
  const pid = transport.pid;
  track(pid, label);
  const call = (name, toolArgs = {}, options = {}) =>
    client.callTool({ name, arguments: toolArgs }, undefined, { timeout: requestTimeoutMs, ...options });
  const server = {
    client,
    transport,
    pid,
    label,
    timing: { spawnedAt, initializedAt },
    stderr: () => stderrText,
    call,
    async structured(name, toolArgs, options) {
      const result = await call(name, toolArgs, options);
      return result.structuredContent ?? { content: result.content, isError: result.isError };
    },
    /** Pids under the server (its worker and standby). */
    children() {
      return descendants(pid);
    },
    async close() {
      const family = [pid, ...descendants(pid)];
      for (const member of family) remember(member, `${label} (descendant)`);
      await client.close().catch(() => undefined);
      const exited = await waitForExit(pid, 10_000);
      if (!exited) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      // The workers die with the server (pipe EOF / PDEATHSIG); make sure, and say so if they did not.
      const stragglers = [];
      for (const member of family) {
        if (member !== pid && !(await waitForExit(member, 5_000))) {
          stragglers.push(member);
          try {
            process.kill(member, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
      untrack(pid);
      return { exited, stragglers };
    },
  };
  return server;
}

/**
 * Spawns `ipython-mcp --http 127.0.0.1:0` (or another server that prints `ready on URL`, with `args`) and connects
 * the SDK's Streamable HTTP client with a bearer token; the same shape as {@link startServer}, so a loop can run
 * over either transport.
 */
export async function startHttpServer(modules, { args = [CLI, '--http', '127.0.0.1:0'], env = {}, label = 'ipython-mcp http server', requestTimeoutMs = 600_000 } = {}) {
  const { Client, StreamableHTTPClientTransport } = modules;
  const token = randomBytes(32).toString('hex');
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env, IPYTHON_MCP_HTTP_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] });
  track(child.pid, label);
  let stderrText = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no ready banner; stderr: ${stderrText.slice(-500)}`)), 60_000);
    child.stderr.on('data', (chunk) => {
      stderrText += chunk.toString('utf8');
      const match = /ready on (http:\/\/\S+\/mcp)/.exec(stderrText);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', () => reject(new Error(`${label}: exited; stderr: ${stderrText.slice(-500)}`)));
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'ipython-mcp-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 60_000 });
  const pid = child.pid;
  const call = (name, toolArgs = {}, options = {}) => client.callTool({ name, arguments: toolArgs }, undefined, { timeout: requestTimeoutMs, ...options });
  return {
    client,
    transport,
    pid,
    label,
    stderr: () => stderrText,
    call,
    async structured(name, toolArgs, options) {
      const result = await call(name, toolArgs, options);
      return result.structuredContent ?? { content: result.content, isError: result.isError };
    },
    children() {
      return descendants(pid);
    },
    async close() {
      const family = [pid, ...descendants(pid)];
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
      child.kill('SIGTERM');
      const exited = await waitForExit(pid, 10_000);
      if (!exited) child.kill('SIGKILL');
      const stragglers = [];
      for (const member of family) if (member !== pid && !(await waitForExit(member, 5_000))) stragglers.push(member);
      untrack(pid);
      return { exited, stragglers };
    },
  };
}

/**
 * Waits until our server is idle with its warm standby started (runtime_status), so a measurement does not share
 * the CPU with the standby's start-up. A server without runtime_status (a peer) returns at once.
 */
export async function settle(server, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let status;
    try {
      status = (await server.call('runtime_status', {})).structuredContent;
    } catch {
      return; // not our server
    }
    if (!status || typeof status.state !== 'string') return;
    if (status.state === 'ready' && status.standby !== 'starting') break;
    if (performance.now() > deadline) throw new Error(`server did not settle: ${JSON.stringify(status).slice(0, 200)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

/** The `execute` tool's structured result, or a thrown error naming what went wrong. */
export async function execute(server, code, options) {
  const result = await server.call('execute', { code }, options);
  const structured = result.structuredContent;
  if (!structured) throw new Error(`execute returned no structured content: ${JSON.stringify(result).slice(0, 300)}`);
  return structured;
}

/** Runs code and returns its JSON value (throws if the cell failed). */
export async function evaluate(server, code) {
  const structured = await execute(server, code);
  if ((structured.status ?? 'ok') !== 'ok') throw new Error(`cell failed: ${JSON.stringify(structured.error ?? structured).slice(0, 400)}`);
  return structured.result?.value;
}

export { isAlive };
