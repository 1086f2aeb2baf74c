// The transport floor's process: python/pipe_echo.py echoing 64-byte length-prefixed frames over plain pipes.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PY_DIR } from './env.mjs';
import { track, untrack } from './procs.mjs';

/** Starts pipe_echo.py; `once()` is one Node → Python → Node round trip of a 68-byte frame. */
export function startPipeEcho(python, label) {
  const child = spawn(python, [join(PY_DIR, 'pipe_echo.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  track(child.pid, label);
  const frame = Buffer.alloc(68, 120);
  frame.writeUInt32BE(64, 0);
  let pending = null;
  let received = 0;
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
    close() {
      child.stdin.end();
      child.kill('SIGKILL');
      untrack(child.pid);
    },
  };
}
