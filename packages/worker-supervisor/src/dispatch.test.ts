// Dispatch, deadlines, interrupts and request matching without Python: the runtime over ChannelWorkers whose other
// end is a scripted fake worker on an in-memory channel.
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelWorker } from './channel-worker.js';
import { Runtime } from './runtime.js';
import type { RuntimeOptions } from './runtime-options.js';
import { InMemoryChannel } from './worker-channel.js';
import { RequestMatcher, WorkerExitedError } from './worker-connection.js';
import { silentLogger } from './logger.js';
import type { WorkerHandle, WorkerReply } from './worker-handle.js';

type Message = Record<string, unknown> & { type: string };
/** Answers one request: a response body (`ok`, `result`/`error`, `catalog_revision`), or undefined for no answer. */
type Script = (request: Message, far: FakeEnd) => Record<string, unknown> | undefined;

/** The worker's end of the channel, driven by a script. */
class FakeEnd {
  readonly received: Message[] = [];
  private active: number | undefined;
  constructor(
    readonly channel: InMemoryChannel,
    private readonly script: Script,
  ) {
    channel.onmessage = (raw) => this.onMessage(raw as Message);
  }
  respond(id: number, body: Record<string, unknown>): void {
    if (this.active === id) this.active = undefined;
    this.channel.send({ type: 'response', id, ...body });
  }
  private onMessage(message: Message): void {
    this.received.push(message);
    if (message.type === 'request') {
      this.active = message.id as number;
      const body = this.script(message, this);
      if (body !== undefined) this.respond(message.id as number, body);
    } else if (message.type === 'shutdown') {
      this.channel.close();
    } else if (message.type === 'interrupt' && message.id === this.active && this.onInterrupt) {
      this.respond(message.id as number, { ok: false, error: { code: 'operation_cancelled', message: 'interrupted' } });
    }
  }
  /** Whether an interrupt of the active request stops it (a cooperative cell). */
  onInterrupt = true;
  ops(): string[] {
    return this.received.filter((message) => message.type === 'request').map((message) => message.op as string);
  }
}

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

/** A runtime whose every worker is a fake; `ends` lists the fakes in spawn order. */
function fakeRuntime(script: Script, options: Partial<RuntimeOptions> = {}): { runtime: Runtime; ends: FakeEnd[] } {
  const ends: FakeEnd[] = [];
  const runtime = new Runtime({
    python: 'unused',
    warmStandby: false,
    memoryLimitMb: null,
    operationTimeoutMs: 200,
    interruptionGraceMs: 200,
    ...options,
    backend: {
      name: 'scripted',
      capabilities: new Set(),
      start: () => {
        const [near, far] = InMemoryChannel.createLinkedPair();
        ends.push(new FakeEnd(far, script));
        return new ChannelWorker(near);
      },
    },
  });
  runtimes.push(runtime);
  return { runtime, ends };
}

const ok = (result: Record<string, unknown> = {}): Record<string, unknown> => ({ ok: true, result });

describe('RequestMatcher over an in-memory channel', () => {
  it('matches out-of-order responses to their requests and fails the rest when the worker ends', async () => {
    const [near, far] = InMemoryChannel.createLinkedPair();
    let ended: Error | undefined;
    const matcher = new RequestMatcher(near, silentLogger, () => ended, () => ended === undefined);
    near.onmessage = (message) => matcher.handle(message);
    const first = matcher.request('list', {});
    const second = matcher.request('search', { query: 'x' });
    const third = matcher.request('inspect', { name: 'y' });
    far.send({ type: 'response', id: second.id, ok: true, result: { which: 'second' }, catalog_revision: 3 });
    far.send({ type: 'response', id: first.id, ok: true, result: { which: 'first' } });
    far.send({ type: 'response', id: 999, ok: true, result: { which: 'nobody' } });
    expect(await second.reply).toEqual({ ok: true, result: { which: 'second' }, catalogRevision: 3 });
    expect(await first.reply).toEqual({ ok: true, result: { which: 'first' } });
    expect(matcher.inFlight).toBe(1);
    ended = new WorkerExitedError('gone', null, 'SIGKILL');
    matcher.rejectAll(ended);
    await expect(third.reply).rejects.toBeInstanceOf(WorkerExitedError);
    await expect(matcher.request('list', {}).reply).rejects.toBe(ended);
  });

  it('passes a stable error code through and turns an unknown one into internal_error, its code kept in details', async () => {
    const [near, far] = InMemoryChannel.createLinkedPair();
    const matcher = new RequestMatcher(near, silentLogger, () => undefined, () => true);
    near.onmessage = (message) => matcher.handle(message);
    const known = matcher.request('inspect', { name: 'x' });
    const unknown = matcher.request('inspect', { name: 'y' });
    const refused = matcher.request('inspect', { name: 'z' });
    far.send({ type: 'response', id: known.id, ok: false, error: { code: 'name_not_found', message: 'no x', details: { name: 'x' } } });
    far.send({ type: 'response', id: unknown.id, ok: false, error: { code: 'made_up', message: 'odd', details: { name: 'y' } } });
    far.send({ type: 'protocol_error', id: refused.id, code: 'not_a_code', message: 'bad request' });
    expect(await known.reply).toEqual({ ok: false, error: { code: 'name_not_found', message: 'no x', details: { name: 'x' } } });
    expect(await unknown.reply).toEqual({ ok: false, error: { code: 'internal_error', message: 'odd', details: { name: 'y', worker_code: 'made_up' } } });
    expect(await refused.reply).toEqual({ ok: false, error: { code: 'internal_error', message: 'bad request', details: { worker_code: 'not_a_code' } } });
  });

  it('ignores a response that breaks the schema (the deadline handles its request)', async () => {
    const [near, far] = InMemoryChannel.createLinkedPair();
    const matcher = new RequestMatcher(near, silentLogger, () => undefined, () => true);
    near.onmessage = (message) => matcher.handle(message);
    const pending = matcher.request('list', {});
    far.send({ type: 'response', id: pending.id, ok: true, result: {}, catalog_revision: -1 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(matcher.inFlight).toBe(1);
  });
});

describe('Runtime over ChannelWorkers (no Python)', () => {
  it('runs an operation and carries the worker catalog_revision on the outcome meta', async () => {
    const { runtime, ends } = fakeRuntime((request) => (request.op === 'execute' ? { ...ok({ status: 'ok' }), catalog_revision: 7 } : ok()));
    const outcome = await runtime.run('execute', { code: '1+1' });
    expect(outcome).toMatchObject({ ok: true, result: { status: 'ok' }, meta: { epoch: 1, catalogRevision: 7, interruption: null } });
    const plain = await runtime.run('list', {});
    expect(plain.meta.catalogRevision).toBeUndefined();
    expect(ends[0]!.ops()).toEqual(['execute', 'list']);
  });

  it('a deadline interrupts a cooperative operation: verified by health, the namespace is preserved', async () => {
    const { runtime, ends } = fakeRuntime((request) => (request.op === 'execute' ? undefined : ok({ status: 'ok' })));
    const outcome = await runtime.run('execute', { code: 'loop' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'operation_timeout' }, meta: { interruption: 'timeout', namespace: 'preserved', epoch: 1 } });
    const types = ends[0]!.received.map((message) => message.type === 'request' ? `request:${String(message.op)}` : message.type);
    expect(types).toEqual(['request:execute', 'interrupt', 'request:health']);
    expect(ends).toHaveLength(1);
  });

  it('an operation that ignores the interrupt past the grace is killed and the worker replaced (epoch 2)', async () => {
    const { runtime, ends } = fakeRuntime((request) => (request.op === 'execute' ? undefined : ok()));
    await runtime.run('list', {});
    ends[0]!.onInterrupt = false;
    const outcome = await runtime.run('execute', { code: 'stubborn' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'operation_timeout' }, meta: { interruption: 'timeout', namespace: 'reset' } });
    expect(runtime.epoch).toBe(2);
    expect(ends).toHaveLength(2);
    expect((await runtime.run('list', {})).meta.epoch).toBe(2);
  });

  it('the caller’s cancellation interrupts the active operation', async () => {
    const { runtime } = fakeRuntime((request) => (request.op === 'execute' ? undefined : ok()));
    const controller = new AbortController();
    const running = runtime.run('execute', { code: 'wait' }, { signal: controller.signal, timeoutMs: null });
    setTimeout(() => controller.abort(), 20);
    expect(await running).toMatchObject({ ok: false, error: { code: 'operation_cancelled' }, meta: { interruption: 'cancelled', namespace: 'preserved' } });
  });

  it('the after-interrupt policy runs its operation and decides: accepted keeps the worker, refused replaces it', async () => {
    let accept = true;
    const seen: Record<string, unknown>[] = [];
    const { runtime, ends } = fakeRuntime((request) => (request.op === 'execute' ? undefined : request.op === 'discover' ? ok({ revision: 4, tools: [] }) : ok()), {
      afterInterrupt: {
        operation: 'discover',
        params: () => ({}),
        needed: () => true,
        accept: (result) => {
          seen.push(result);
          return accept;
        },
      },
    });
    expect((await runtime.run('execute', { code: 'a' })).meta.namespace).toBe('preserved');
    expect(seen).toEqual([{ revision: 4, tools: [] }]);
    expect(ends[0]!.ops()).toEqual(['execute', 'health', 'discover']);
    accept = false;
    expect((await runtime.run('execute', { code: 'b' })).meta).toMatchObject({ namespace: 'reset', epoch: 2 });
  });

  it('a worker that ends under an operation is a worker_crashed outcome and a reset namespace', async () => {
    const { runtime, ends } = fakeRuntime((request, far) => {
      if (request.op === 'execute') far.channel.close();
      return request.op === 'execute' ? undefined : ok();
    });
    const outcome = await runtime.run('execute', { code: 'os._exit(1)' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'worker_crashed' }, meta: { interruption: 'crash', namespace: 'reset', epoch: 2 } });
    expect(ends).toHaveLength(2);
  });
});

describe('a reply the worker withdrew (the request never reached Python)', () => {
  it('keeps the namespace without a health check or a replacement', async () => {
    const ends: FakeEnd[] = [];
    const runtime = new Runtime({
      python: 'unused',
      warmStandby: false,
      memoryLimitMb: null,
      operationTimeoutMs: 100,
      interruptionGraceMs: 200,
      backend: {
        name: 'withdrawing',
        capabilities: new Set(),
        start: (): WorkerHandle => {
          const [near, far] = InMemoryChannel.createLinkedPair();
          ends.push(new FakeEnd(far, () => ok()));
          const inner = new ChannelWorker(near);
          // Like a worker whose requests wait for a busy interpreter: nothing is sent, an interrupt withdraws it.
          const waiting = new Map<number, (reply: WorkerReply) => void>();
          let nextId = 1000;
          return {
            ready: inner.ready,
            exited: inner.exited,
            pid: undefined,
            get alive() {
              return inner.alive;
            },
            request: (op, params, hooks) => {
              if (op !== 'execute') return inner.request(op, params, hooks);
              const id = nextId++;
              return { id, reply: new Promise<WorkerReply>((resolve) => waiting.set(id, resolve)) };
            },
            // A shared kernel's worker says who held it: the runtime passes that on (who did what).
            interrupt: (id) =>
              waiting.get(id)?.({ ok: false, withdrawn: true, error: { code: 'operation_cancelled', message: 'withdrawn' }, shared: { ran: false, waitedMs: 104.6, behind: 'person' } }),
            sendToolResult: () => undefined,
            kill: () => inner.kill(),
            shutdown: (graceMs) => inner.shutdown(graceMs),
            setHeld: () => undefined,
          };
        },
      },
    });
    runtimes.push(runtime);
    const outcome = await runtime.run('execute', { code: 'waits' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'operation_timeout' }, meta: { interruption: 'timeout', namespace: 'preserved', epoch: 1 } });
    expect(outcome.meta.shared).toEqual({ ran: false, waitedMs: 105, behind: 'person', stoppedBy: null });
    expect(outcome.ok ? '' : outcome.error.message).toBe(
      "the operation passed its deadline before it ran: it never reached the kernel, having waited 0.1 s behind the person's cell (another Jupyter client's request); state was preserved",
    );
    expect(ends).toHaveLength(1);
    expect(ends[0]!.ops()).toEqual([]);
  });
});
