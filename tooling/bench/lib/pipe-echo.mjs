// Python children that speak length-prefixed frames (uint32 BE length, then the body) over plain pipes: the
// transport floor's python/pipe_echo.py and python/pipe_call.py, and the composed floor's run_cell child
// (python/floor.py --frames).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PY_DIR, ROOT } from './env.mjs';
import { track, untrack } from './procs.mjs';

/** One frame: the body's length (uint32 BE), then the body. */
function frameOf(body) {
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

/**
 * Spawns `python script args` with frames on its stdin/stdout (stderr inherited), tracked until closed. With
 * `onFrame`, every whole frame the child writes is handed to it (a Buffer, header included). `ask(frame)` writes a
 * frame and resolves with the next value given to `settle` (one request at a time); the child's exit rejects it.
 */
function spawnFrameChild(python, script, args, label, onFrame = null) {
  const child = spawn(python, [join(PY_DIR, script), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  track(child.pid, label);
  if (onFrame) {
    let buffered = Buffer.alloc(0);
    child.stdout.on('data', (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
        const end = 4 + buffered.readUInt32BE(0);
        const frame = buffered.subarray(0, end);
        buffered = buffered.subarray(end);
        onFrame(frame);
      }
    });
  }
  let pending = null;
  child.on('exit', (code, signal) => {
    pending?.reject(new Error(`${label} exited (${signal ?? `exit ${code}`})`));
    pending = null;
  });
  return {
    child,
    ask: (frame) =>
      new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.stdin.write(frame);
      }),
    settle(value) {
      const waiting = pending;
      pending = null;
      waiting?.resolve(value);
    },
    close() {
      child.stdin.end();
      child.kill('SIGKILL');
      untrack(child.pid);
    },
  };
}

/** Starts pipe_echo.py; `once()` is one Node → Python → Node round trip of a 68-byte frame. */
export function startPipeEcho(python, label) {
  const { child, close } = spawnFrameChild(python, 'pipe_echo.py', [], label);
  const frame = Buffer.alloc(68, 120);
  frame.writeUInt32BE(64, 0);
  let pending = null;
  let received = 0;
  // The floor counts bytes and parses nothing: the echo is known to be the frame sent.
  child.stdout.on('data', (chunk) => {
    received += chunk.length;
    if (received >= frame.length && pending) {
      received -= frame.length;
      const resolve = pending;
      pending = null;
      resolve();
    }
  });
  return {
    once: () =>
      new Promise((resolve) => {
        pending = resolve;
        child.stdin.write(frame);
      }),
    close,
  };
}

/**
 * Starts a Python script that answers every frame with one frame; `request(body)` sends one (a Buffer) and resolves
 * with the reply's body. One request at a time, like the worker's main thread.
 */
export function startFrameChild(python, script, args, label) {
  const framed = spawnFrameChild(python, script, args, label, (frame) => framed.settle(frame.subarray(4)));
  return { pid: framed.child.pid, request: (body) => framed.ask(frameOf(body)), close: framed.close };
}

/**
 * Starts pipe_call.py, the transport floor in a nested call's direction; `run(count, warmup)` has Python make
 * warmup + count round trips of a 68-byte frame that this process writes straight back (in the data handler, parsing
 * only the length), and resolves with Python's per-call samples in ms. With `calls` (pipe_call.py --calls), each round
 * trip is a minimal tool call instead: `calls(body)` answers one msgpack body with a whole reply frame.
 */
export function startPipeCall(python, label, { calls = null } = {}) {
  const framed = spawnFrameChild(python, 'pipe_call.py', calls ? ['--calls'] : [], label, (frame) => {
    if (frame[4] === 0x65) framed.child.stdin.write(frame); // 'e': a call, answered with its own bytes
    else if (frame[4] === 0x6d) calls(frame.subarray(5)).then((reply) => framed.child.stdin.write(reply)); // 'm': a tool call
    else framed.settle(JSON.parse(frame.subarray(5).toString('utf8'))); // 'r': the samples
  });
  return { pid: framed.child.pid, run: (count, warmup) => framed.ask(frameOf(Buffer.from(`c${count} ${warmup}`))), close: framed.close };
}

/**
 * The least a tool call's Node side can be, for startPipeCall's `calls`: unpack the msgpack call, await a trivial
 * async tool, pack the answer with its value as JSON text (the worker protocol's shape), frame it.
 */
export async function minimalToolCalls() {
  const { createRequire } = await import('node:module');
  const { pack, unpack } = createRequire(join(ROOT, 'packages', 'protocol', 'package.json'))('msgpackr');
  const echo = async (input) => input;
  return async (body) => {
    const call = unpack(body);
    const value = await echo(call.arguments);
    return frameOf(Buffer.concat([Buffer.from('m'), pack({ type: 'tool_result', call_id: call.call_id, ok: true, value_json: JSON.stringify(value) })]));
  };
}
