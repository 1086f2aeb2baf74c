import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { WorkerBackend, WorkerCapability, WorkerStartOptions } from './worker-backend.js';
import type { WorkerHandle, WorkerReply } from './worker-handle.js';

/**
 * The cells the contract runs. A backend with a real interpreter runs them as Python; an in-memory fake may answer
 * exactly these strings and nothing else.
 */
export const CONTRACT_CELLS = Object.freeze({
  /** Binds a name in the namespace. */
  assign: 'contract_value = 41',
  /** Reads it back: the value 42 as JSON. */
  read: 'contract_value + 1',
  /** Runs until interrupted (cooperatively: the interrupt lands between two short sleeps). */
  block: 'import time\nwhile True:\n    time.sleep(0.02)',
  /** Writes to file descriptor 1 directly, past Python's sys.stdout (the `fdCapture` capability). */
  fdWrite: 'import os\nos.write(1, b"contract-fd-line\\n")',
  /** Starts a process that outlives the cell unless the worker's group is killed; its pid is the value. */
  spawnChild: 'import subprocess, sys\ncontract_child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])\ncontract_child.pid',
});

/** A backend under test, and how to start one of its workers. */
export interface WorkerBackendUnderTest {
  backend: WorkerBackend;
  /** The start options of one worker; called once per worker the contract starts. */
  startOptions(): WorkerStartOptions;
}

/** One case of the contract: run it inside the caller's test framework; it throws an AssertionError on failure. */
export interface WorkerBackendContractCase {
  name: string;
  /** Set when the case does not apply: the capability the backend lacks. */
  skip?: string | undefined;
  /** A bound the caller's framework should give the case, in ms. */
  timeoutMs: number;
  run(): Promise<void>;
}

const REPLY_BOUND_MS = 10_000;

/**
 * The contract every {@link WorkerBackend} keeps, as framework-free cases (node:assert): a handshake, requests that
 * share one namespace, a cooperative interrupt, a stale interrupt, kill and shutdown; and, per capability, what it
 * promises. Every case ends every worker it started.
 *
 * ```ts
 * for (const contractCase of workerBackendContract(() => subject).filter((each) => each.skip === undefined)) {
 *   it(contractCase.name, contractCase.run, contractCase.timeoutMs);
 * }
 * ```
 */
export function workerBackendContract(subject: () => WorkerBackendUnderTest): WorkerBackendContractCase[] {
  const withWorker =
    (body: (worker: WorkerHandle, under: WorkerBackendUnderTest) => Promise<void>) =>
    async (): Promise<void> => {
      const under = subject();
      const worker = under.backend.start(under.startOptions());
      try {
        await body(worker, under);
      } finally {
        worker.kill();
        await bounded(worker.exited, 'the worker to exit after kill');
      }
    };
  const needs = (capability: WorkerCapability): string | undefined =>
    subject().backend.capabilities.has(capability) ? undefined : `the backend lacks ${capability}`;
  return [
    {
      name: 'answers the handshake, then health',
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        const info = await worker.ready;
        assert.equal(typeof info.python, 'string');
        assert.ok(info.startupMs >= 0);
        assert.equal(worker.alive, true);
        await expectOk(worker, 'health', {});
      }),
    },
    {
      name: 'requests share one namespace',
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        await expectOk(worker, 'execute', { code: CONTRACT_CELLS.assign });
        const read = await expectOk(worker, 'execute', { code: CONTRACT_CELLS.read });
        assert.deepEqual((read.result as { value?: unknown } | null)?.value, 42);
      }),
    },
    {
      name: 'an interrupt stops the active operation; the worker and its namespace go on',
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        await expectOk(worker, 'execute', { code: CONTRACT_CELLS.assign });
        const { id, reply } = worker.request('execute', { code: CONTRACT_CELLS.block });
        await new Promise((resolve) => setTimeout(resolve, 200));
        worker.interrupt(id);
        const answer = await bounded(reply, 'the interrupted operation to answer');
        // Either the operation failed (operation_cancelled) or the cell did (a KeyboardInterrupt in it): never a success.
        if (answer.ok) assert.equal(answer.result.status, 'error');
        else assert.equal(answer.error.code, 'operation_cancelled');
        assert.equal(worker.alive, true);
        const read = await expectOk(worker, 'execute', { code: CONTRACT_CELLS.read });
        assert.deepEqual((read.result as { value?: unknown } | null)?.value, 42);
      }),
    },
    {
      name: 'an interrupt of an operation that already finished stops nothing later',
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        const first = worker.request('health', {});
        await bounded(first.reply, 'health');
        worker.interrupt(first.id);
        await expectOk(worker, 'execute', { code: CONTRACT_CELLS.assign });
        await expectOk(worker, 'execute', { code: CONTRACT_CELLS.read });
      }),
    },
    {
      name: 'kill ends the worker: exited settles, the pending request and any later one fail',
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        const pending = worker.request('execute', { code: CONTRACT_CELLS.block });
        await new Promise((resolve) => setTimeout(resolve, 100));
        worker.kill();
        await bounded(worker.exited, 'the worker to exit');
        assert.equal(worker.alive, false);
        await assert.rejects(bounded(pending.reply, 'the pending request to fail'));
        await assert.rejects(bounded(worker.request('health', {}).reply, 'a request after kill to fail'));
      }),
    },
    {
      name: 'shutdown ends an idle worker within its grace',
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        await bounded(worker.shutdown(5_000), 'shutdown');
        assert.equal(worker.alive, false);
      }),
    },
    {
      name: 'memoryGuard: the worker has a local pid to measure',
      skip: needs('memoryGuard'),
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        assert.equal(typeof worker.pid, 'number');
        assert.doesNotThrow(() => process.kill(worker.pid!, 0));
      }),
    },
    {
      name: 'fdCapture: output written to fd 1 reaches the operation stdout',
      skip: needs('fdCapture'),
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        await worker.ready;
        const result = await expectOk(worker, 'execute', { code: CONTRACT_CELLS.fdWrite });
        assert.match(String(result.stdout), /contract-fd-line/);
      }),
    },
    {
      name: 'processGroup: kill also ends what the worker started',
      skip: needs('processGroup'),
      timeoutMs: 30_000,
      run: withWorker(async (worker) => {
        const info = await worker.ready;
        const started = await expectOk(worker, 'execute', { code: CONTRACT_CELLS.spawnChild });
        const child = (started.result as { value?: unknown } | null)?.value;
        assert.equal(typeof child, 'number');
        worker.kill();
        await bounded(worker.exited, 'the worker to exit');
        // Behind a launch wrapper with its own pid namespace the child's number means nothing here: the engine's
        // namespace ends with the worker, which the exit above already showed.
        if (info.pid !== worker.pid) return;
        await bounded(untilGone(child as number), 'the child process to end with the worker');
      }),
    },
  ];
}

/** Sends one request and asserts that it succeeded; returns its result. */
async function expectOk(worker: WorkerHandle, op: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const reply: WorkerReply = await bounded(worker.request(op, params).reply, `${op} to answer`);
  assert.ok(reply.ok, `${op} failed: ${reply.ok ? '' : `${reply.error.code}: ${reply.error.message}`}`);
  if (op === 'execute') assert.equal(reply.result.status, 'ok', `the cell failed: ${JSON.stringify(reply.result.error ?? null).slice(0, 400)}`);
  return reply.result;
}

function bounded<T>(promise: Promise<T>, what: string, ms = REPLY_BOUND_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new assert.AssertionError({ message: `timed out after ${ms} ms waiting for ${what}` })), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Waits until `pid` has ended (a zombie waiting for its reaper counts as ended). */
async function untilGone(pid: number): Promise<void> {
  while (running(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): the signal probe is all there is
  }
}
