// The worker-backend contract against the local process backend (real Python) and an in-memory fake backend; and
// what the runtime does with a backend's capabilities.
import { DEFAULT_WORKER_LIMITS, workerLimits } from '@ipython-mcp/protocol';
import { testPython } from '@ipython-mcp/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelWorker } from './channel-worker.js';
import { localProcessBackend } from './local-process-backend.js';
import { Runtime } from './runtime.js';
import type { WorkerBackend, WorkerCapability, WorkerStartOptions } from './worker-backend.js';
import { CONTRACT_CELLS, workerBackendContract, type WorkerBackendUnderTest } from './worker-backend-contract.js';
import { InMemoryChannel } from './worker-channel.js';

type Message = Record<string, unknown> & { type: string };

/**
 * The far end of an in-memory worker: answers `health`, and `execute` of the contract's cells only, from a
 * namespace of one integer. Enough for the contract; nothing more.
 */
class FakeInterpreter {
  private value: number | undefined;
  private blocked: number | undefined;

  constructor(private readonly channel: InMemoryChannel) {
    channel.onmessage = (raw) => this.onMessage(raw as Message);
  }

  private onMessage(message: Message): void {
    if (message.type === 'shutdown') this.channel.close();
    else if (message.type === 'interrupt' && message.id === this.blocked) {
      this.blocked = undefined;
      this.answer(message.id as number, { ok: false, error: { code: 'operation_cancelled', message: 'the operation was interrupted' } });
    } else if (message.type === 'request') this.onRequest(message.id as number, message.op as string, message.params as Record<string, unknown>);
  }

  private onRequest(id: number, op: string, params: Record<string, unknown>): void {
    if (op === 'health') return this.answer(id, { ok: true, result: { status: 'ok' } });
    if (op !== 'execute') return this.answer(id, { ok: false, error: { code: 'invalid_arguments', message: `the fake does not run ${op}` } });
    const cell = (result: unknown, status: 'ok' | 'error' = 'ok'): void => this.answer(id, { ok: true, result: { status, stdout: '', stderr: '', result } });
    switch (params.code) {
      case CONTRACT_CELLS.assign:
        this.value = 41;
        return cell(null);
      case CONTRACT_CELLS.read:
        return this.value === undefined ? cell(null, 'error') : cell({ kind: 'json', value: this.value + 1 });
      case CONTRACT_CELLS.block:
        this.blocked = id;
        return;
      default:
        return cell(null, 'error');
    }
  }

  private answer(id: number, body: Record<string, unknown>): void {
    this.channel.send({ type: 'response', id, ...body });
  }
}

/** A backend whose workers are {@link ChannelWorker}s over in-memory channels, a {@link FakeInterpreter} at the far end. */
function fakeBackend(capabilities: WorkerCapability[] = []): WorkerBackend & { started: number } {
  return {
    name: 'in-memory-fake',
    capabilities: new Set(capabilities),
    started: 0,
    start() {
      this.started += 1;
      const [near, far] = InMemoryChannel.createLinkedPair();
      new FakeInterpreter(far);
      return new ChannelWorker(near);
    },
  };
}

function startOptions(): WorkerStartOptions {
  return {
    python: testPython(),
    maxMessageBytes: DEFAULT_WORKER_LIMITS.maxIpcMessageBytes,
    startupTimeoutMs: 20_000,
    configure: { limits: workerLimits(DEFAULT_WORKER_LIMITS), library_paths: [], preload_modules: [], module_aliases: {}, reserved_tool_names: [] },
  };
}

const subjects: Array<{ name: string; subject: () => WorkerBackendUnderTest }> = [
  { name: 'the local process backend', subject: () => ({ backend: localProcessBackend, startOptions }) },
  { name: 'an in-memory fake backend', subject: () => ({ backend: fakeBackend(), startOptions }) },
];

for (const { name, subject } of subjects) {
  describe(`worker backend contract: ${name}`, () => {
    // Only the cases that apply: which ones do not, and why, is pinned below ('the contract itself').
    for (const contractCase of workerBackendContract(subject).filter((each) => each.skip === undefined)) {
      it(contractCase.name, contractCase.run, contractCase.timeoutMs);
    }
  });
}

describe('the contract itself', () => {
  it('skips a capability case for a backend without it, and runs it for a backend with it', () => {
    const without = workerBackendContract(() => ({ backend: fakeBackend(), startOptions })).filter((each) => each.skip !== undefined);
    expect(without.map((each) => each.skip)).toEqual(['the backend lacks memoryGuard', 'the backend lacks fdCapture', 'the backend lacks processGroup']);
    const all = workerBackendContract(() => ({ backend: localProcessBackend, startOptions }));
    expect(all.filter((each) => each.skip !== undefined)).toEqual([]);
  });

  it('fails a backend that breaks it: a fake that claims fdCapture it does not have', async () => {
    const liar = workerBackendContract(() => ({ backend: fakeBackend(['fdCapture']), startOptions })).find((each) => each.name.startsWith('fdCapture'));
    await expect(liar!.run()).rejects.toThrow(/the cell failed|contract-fd-line/);
  });
});

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function runtimeOver(backend: WorkerBackend, options: Partial<ConstructorParameters<typeof Runtime>[0]> = {}): Runtime {
  const runtime = new Runtime({ python: 'unused', warmStandby: false, operationTimeoutMs: 300, interruptionGraceMs: 300, ...options, backend });
  runtimes.push(runtime);
  return runtime;
}

describe('a Runtime over a backend', () => {
  it('runs operations on the fake backend, through admission and dispatch unchanged', async () => {
    const backend = fakeBackend();
    const runtime = runtimeOver(backend);
    expect((await runtime.run('execute', { code: CONTRACT_CELLS.assign })).ok).toBe(true);
    const read = await runtime.run('execute', { code: CONTRACT_CELLS.read });
    expect(read).toMatchObject({ ok: true, result: { result: { value: 42 } } });
    const stopped = await runtime.run('execute', { code: CONTRACT_CELLS.block });
    expect(stopped).toMatchObject({ ok: false, error: { code: 'operation_timeout' }, meta: { namespace: 'preserved' } });
    expect(backend.started).toBe(1);
  });

  it('turns the memory guard off for a backend without memoryGuard, and keeps it for the local backend', () => {
    expect(runtimeOver(fakeBackend(), { memoryLimitMb: 512 }).status().memoryLimitMb).toBeNull();
    expect(runtimeOver(localProcessBackend, { memoryLimitMb: 512 }).status().memoryLimitMb).toBe(512);
  });

  it('is unavailable, naming the setting and the capability, when --state needs what the backend lacks', async () => {
    const backend = fakeBackend();
    const runtime = runtimeOver(backend, { state: { path: '/nonexistent/ns.state', maxBytes: 1024, saveTimeoutMs: 1000 } });
    const outcome = await runtime.run('health', {});
    expect(outcome).toMatchObject({ ok: false, error: { code: 'runtime_unavailable' } });
    expect(runtime.status().error).toMatch(/in-memory-fake worker backend cannot honour --state \(it lacks the state capability\)/);
    expect(backend.started).toBe(0);
  });

  it('is unavailable when a sandbox launch is asked of a backend without sandbox', async () => {
    const runtime = runtimeOver(fakeBackend(['state']), { launch: (command) => command });
    expect(await runtime.run('health', {})).toMatchObject({ ok: false, error: { code: 'runtime_unavailable' } });
    expect(runtime.status().error).toMatch(/--sandbox .*lacks the sandbox capability/);
  });
});
