import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DETACH_ARGUMENT, DetachedCells, OutputTail, TAIL_CHARS, takeDetach, takesOwnDetach, withDetachProperty } from './detached-cells.js';

const never = new AbortController().signal;

/** A call that the test ends: `finish(result)` settles it. */
function pendingCall(): { running: Promise<CallToolResult>; finish: (result: CallToolResult) => void; stop: AbortController } {
  let finish!: (result: CallToolResult) => void;
  const running = new Promise<CallToolResult>((resolve) => {
    finish = resolve;
  });
  return { running, finish, stop: new AbortController() };
}

const textResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], structuredContent: { stdout: text } });

function adopt(cells: DetachedCells, call = pendingCall(), epoch = 1): { id: string; call: ReturnType<typeof pendingCall> } {
  const id = cells.adopt({ epoch, startedAt: performance.now(), tail: new OutputTail(), stop: call.stop, running: call.running });
  return { id, call };
}

describe('withDetachProperty', () => {
  it("adds the argument to a dynamic tool's schema, leaving the function's own schema unchanged", () => {
    const schema = { type: 'object' as const, properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false };
    const published = withDetachProperty(schema);
    expect(published.properties).toEqual({ x: { type: 'integer' }, [DETACH_ARGUMENT]: { type: 'number', exclusiveMinimum: 0 } });
    expect(published.required).toEqual(['x']);
    expect(schema.properties).not.toHaveProperty(DETACH_ARGUMENT);
    expect(takesOwnDetach(schema)).toBe(false);
    expect(takesOwnDetach({})).toBe(false);
  });

  it('leaves a function that has a detach_after_seconds parameter of its own as it is: the argument is the function\'s', () => {
    const schema = { type: 'object' as const, properties: { [DETACH_ARGUMENT]: { type: 'integer' } } };
    expect(withDetachProperty(schema)).toBe(schema);
    expect(takesOwnDetach(schema)).toBe(true);
  });
});

describe('takeDetach', () => {
  it('takes a valid value off the arguments and leaves the rest unchanged', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 3600, noNaN: true }), fc.dictionary(fc.string().filter((key) => key !== DETACH_ARGUMENT), fc.jsonValue()), (seconds, rest) => {
        const args = { ...rest, [DETACH_ARGUMENT]: seconds };
        const taken = takeDetach(args, 3600);
        expect(taken.ok).toBe(true);
        if (!taken.ok) return;
        expect(taken.detachMs).toBe(seconds * 1000);
        expect(taken.args).toEqual(rest);
        expect(args[DETACH_ARGUMENT]).toBe(seconds);
      }),
    );
  });

  it('refuses everything that is not a number of seconds above 0 and at most the bound, naming the bound', () => {
    const bad = fc.oneof(
      fc.double({ max: 0, noNaN: true }),
      fc.double({ min: 3600.000001, noNaN: true }),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, null, true, '5', [5], { seconds: 5 }),
    );
    fc.assert(
      fc.property(bad, (value) => {
        const taken = takeDetach({ code: 'x', [DETACH_ARGUMENT]: value }, 3600);
        expect(taken.ok).toBe(false);
        if (!taken.ok) expect(taken.message).toContain('at most 3600');
      }),
    );
  });

  it('leaves arguments without it as they are', () => {
    const args = { code: '1' };
    expect(takeDetach(args, 10)).toEqual({ ok: true, args, detachMs: undefined });
  });
});

describe('OutputTail', () => {
  it('keeps the last TAIL_CHARS of each stream and counts exactly what came before', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ kind: fc.constantFrom('stdout' as const, 'stderr' as const), text: fc.string({ maxLength: 1500 }) }), { maxLength: 20 }), (events) => {
        const tail = new OutputTail();
        for (const event of events) tail.add(event);
        const fields = tail.fields();
        for (const kind of ['stdout', 'stderr'] as const) {
          const whole = events.filter((event) => event.kind === kind).map((event) => event.text).join('');
          const kept = whole.slice(Math.max(0, whole.length - TAIL_CHARS));
          expect(fields[kind] ?? '').toBe(kept);
          expect(fields[`${kind}_omitted_chars`] ?? 0).toBe(whole.length - kept.length);
        }
      }),
    );
  });
});

describe('DetachedCells', () => {
  it('a look at a running cell, then its result once, then "read"', async () => {
    const cells = new DetachedCells('default');
    const { id, call } = adopt(cells);
    expect(id).toBe('default-1-1');
    const look = await cells.answer({ job: id }, 1, never);
    expect(look.kind).toBe('running');
    call.finish(textResult('done'));
    const done = await cells.answer({ job: id, wait_seconds: 5 }, 1, never);
    expect(done).toEqual({ kind: 'result', result: textResult('done') });
    const again = await cells.answer({ job: id }, 1, never);
    expect(again.kind === 'refused' && again.failure.details).toMatchObject({ reason: 'read' });
  });

  it("a look says what to call next in its structured content too, waiting no longer than the call's detach", async () => {
    const cells = new DetachedCells('default');
    const call = pendingCall();
    const id = cells.adopt({ epoch: 1, startedAt: performance.now(), tail: new OutputTail(), stop: call.stop, running: call.running, detachSeconds: 45 });
    const look = cells.running(id);
    const suggested = `call the job tool with {"job": "default-1-1", "wait_seconds": 45} for its result`;
    expect(look.structured).toMatchObject({ status: 'running', job: id, next: expect.stringContaining(suggested) });
    expect(look.structured.next).toContain('"stop": true');
    expect(look.text).toContain(suggested);
    // Without a known detach time, a wait below the common client timeouts (Codex's default is 60 s).
    const unknown = adopt(cells).id;
    expect(cells.running(unknown).structured.next).toContain('"wait_seconds": 30}');
  });

  it('waiting returns at the end of the wait with a look when the cell is still running', async () => {
    const cells = new DetachedCells('default');
    const { id } = adopt(cells);
    const started = performance.now();
    const answer = await cells.answer({ job: id, wait_seconds: 0.2 }, 1, never);
    expect(answer.kind).toBe('running');
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('stop aborts the call\'s signal and waits for its result', async () => {
    const cells = new DetachedCells('default');
    const { id, call } = adopt(cells);
    call.stop.signal.addEventListener('abort', () => call.finish(textResult('stopped')));
    const answer = await cells.answer({ job: id, stop: true }, 1, never);
    expect(call.stop.signal.aborted).toBe(true);
    expect(answer).toEqual({ kind: 'result', result: textResult('stopped') });
  });

  it('keeps at most maxResults finished results unread: the oldest goes, and says so', async () => {
    const cells = new DetachedCells('default', { maxResults: 3, maxBytes: 1 << 20 });
    const jobs = Array.from({ length: 5 }, () => adopt(cells));
    for (const [index, job] of jobs.entries()) job.call.finish(textResult(`r${index}`));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cells.size).toBe(3);
    for (const dropped of jobs.slice(0, 2)) {
      const answer = await cells.answer({ job: dropped.id }, 1, never);
      expect(answer.kind === 'refused' && answer.failure.details).toMatchObject({ reason: 'dropped' });
    }
    for (const [index, kept] of jobs.slice(2).entries()) {
      expect(await cells.answer({ job: kept.id }, 1, never)).toEqual({ kind: 'result', result: textResult(`r${index + 2}`) });
    }
  });

  it('keeps finished results within maxBytes; running cells are never dropped', async () => {
    const cells = new DetachedCells('default', { maxResults: 100, maxBytes: 5000 });
    const running = adopt(cells);
    const finished = Array.from({ length: 4 }, () => adopt(cells));
    for (const job of finished) job.call.finish(textResult('x'.repeat(1000)));
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Two results of ~2,100 bytes fit in 5,000; the running cell stays whatever the bound.
    expect(cells.size).toBe(3);
    expect((await cells.answer({ job: running.id }, 1, never)).kind).toBe('running');
  });

  it('says why a handle is refused: junk, another namespace, never started here', async () => {
    const cells = new DetachedCells('research');
    adopt(cells);
    const reason = async (handle: string) => {
      const answer = await cells.answer({ job: handle }, 1, never);
      return answer.kind === 'refused' ? answer.failure.details?.reason : answer.kind;
    };
    expect(await reason('junk')).toBe('malformed');
    expect(await reason('default-1-1')).toBe('other_namespace');
    expect(await reason('research-1-9')).toBe('unknown');
    expect(await reason('research-7-1')).toBe('unknown');
    fc.assert(
      fc.asyncProperty(fc.string(), async (handle) => {
        const answer = await cells.answer({ job: handle }, 1, never);
        if (handle === 'research-1-1') return;
        expect(answer.kind).toBe('refused');
        if (answer.kind === 'refused') expect(answer.failure.code).toBe('job_not_found');
      }),
    );
  });

  it('a call that rejects still ends as a result (an internal error), never a hang', async () => {
    const cells = new DetachedCells('default');
    const id = cells.adopt({ epoch: 1, startedAt: performance.now(), tail: new OutputTail(), stop: new AbortController(), running: Promise.reject(new TypeError('boom')) });
    const answer = await cells.answer({ job: id, wait_seconds: 5 }, 1, never);
    expect(answer.kind).toBe('result');
    if (answer.kind === 'result') expect(answer.result.isError).toBe(true);
  });
});
