import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CellStop, stopCauseOf, withStopCause } from './detached-cells.js';
import { RequestJobs } from './request-jobs.js';

/** A detached cell the test ends by hand. */
function cell(): { stop: AbortController; done: Promise<void>; end: () => void } {
  let end!: () => void;
  const done = new Promise<void>((resolve) => {
    end = resolve;
  });
  return { stop: new AbortController(), done, end };
}

const cancelled = (requestId: unknown, reason?: unknown): JSONRPCMessage =>
  ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, ...(reason === undefined ? {} : { reason }) } }) as JSONRPCMessage;
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('RequestJobs', () => {
  it("a cancel of a held request stops its cell once, naming the client and the request; the entry goes", () => {
    const jobs = new RequestJobs();
    const held = cell();
    jobs.hold(7, held);
    expect(jobs.size).toBe(1);
    jobs.observe(cancelled(7, 'User requested cancellation'));
    expect(held.stop.signal.aborted).toBe(true);
    const stop = stopCauseOf(held.stop.signal);
    expect(stop).toBeInstanceOf(CellStop);
    expect(stop?.by).toBe('client');
    expect(stop?.message).toBe('cancelled by the client (request 7: User requested cancellation)');
    expect(jobs.size).toBe(0);
    // A second cancel of the same request does nothing more.
    expect(jobs.cancel(7)).toBe(false);
  });

  it('request ids are told apart by type, as JSON-RPC does: 1 and "1" are two requests', () => {
    const jobs = new RequestJobs();
    const number = cell();
    const text = cell();
    jobs.hold(1, number);
    jobs.hold('1', text);
    jobs.observe(cancelled('1'));
    expect(text.stop.signal.aborted).toBe(true);
    expect(number.stop.signal.aborted).toBe(false);
    expect(stopCauseOf(text.stop.signal)?.message).toBe('cancelled by the client (request "1")');
  });

  it('an entry goes when its cell ends, and a cancel after that does nothing', async () => {
    const jobs = new RequestJobs();
    const held = cell();
    jobs.hold(3, held);
    held.end();
    await settle();
    expect(jobs.size).toBe(0);
    jobs.observe(cancelled(3));
    expect(held.stop.signal.aborted).toBe(false);
  });

  it('a cell already stopped is not held', () => {
    const jobs = new RequestJobs();
    const held = cell();
    held.stop.abort(CellStop.byJobTool());
    jobs.hold(4, held);
    expect(jobs.size).toBe(0);
    expect(stopCauseOf(held.stop.signal)?.by).toBe('job');
  });

  it('ignores what is not a cancel of a held request: other notifications, responses, malformed cancels', () => {
    const jobs = new RequestJobs();
    const held = cell();
    jobs.hold(5, held);
    const others = [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 5, progress: 1 } },
      { jsonrpc: '2.0', id: 5, result: {} },
      { jsonrpc: '2.0', id: 5, error: { code: -1, message: 'x' } },
      { jsonrpc: '2.0', method: 'notifications/cancelled' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: null },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: 5 },
      cancelled(null),
      cancelled({ id: 5 }),
      cancelled([5]),
      cancelled(6),
      cancelled('5'),
    ];
    for (const message of others) jobs.observe(message as JSONRPCMessage);
    expect(held.stop.signal.aborted).toBe(false);
    expect(jobs.size).toBe(1);
  });

  it('a new request that reuses a held id ends the old entry: a cancel then means the new request', () => {
    const jobs = new RequestJobs();
    const held = cell();
    jobs.hold(9, held);
    jobs.observe({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'execute' } } as JSONRPCMessage);
    expect(jobs.size).toBe(0);
    jobs.observe(cancelled(9));
    expect(held.stop.signal.aborted).toBe(false);
  });

  it("bounds the client's reason and the request id it words", () => {
    const stop = CellStop.byClient('x'.repeat(1000), `${'why '.repeat(200)}  `);
    expect(stop.message.length).toBeLessThan(64 + 200 + 60);
    expect(CellStop.byClient(1, '   ').message).toBe('cancelled by the client (request 1)');
    expect(CellStop.byClient(1, { not: 'text' }).message).toBe('cancelled by the client (request 1)');
  });

  /**
   * Any interleaving of holds, cell ends, cancels, id reuse and unrelated messages, against a model: a cancel stops
   * exactly the running cell its request holds (once, by the client), never another; the map holds exactly the
   * requests whose cell runs, neither ended nor cancelled nor reused.
   */
  it('matches a model over any interleaving', async () => {
    const id = fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('0', '1', 'a'));
    const step = fc.oneof(
      fc.record({ kind: fc.constant('hold' as const), id }),
      fc.record({ kind: fc.constant('end' as const), id }),
      fc.record({ kind: fc.constant('cancel' as const), id }),
      fc.record({ kind: fc.constant('request' as const), id }),
      fc.record({ kind: fc.constant('response' as const), id }),
      fc.record({ kind: fc.constant('progress' as const), id }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const jobs = new RequestJobs();
        // The model: the cell each id holds (the latest), and every cell made, with how often it was stopped.
        const model = new Map<string | number, ReturnType<typeof cell>>();
        const made: Array<{ cell: ReturnType<typeof cell>; ended: boolean; stops: number }> = [];
        for (const each of steps) {
          switch (each.kind) {
            case 'hold': {
              const held = cell();
              const record = { cell: held, ended: false, stops: 0 };
              made.push(record);
              held.stop.signal.addEventListener('abort', () => (record.stops += 1));
              jobs.hold(each.id, held);
              model.set(each.id, held);
              break;
            }
            case 'end': {
              const held = model.get(each.id);
              if (held === undefined) break;
              held.end();
              (made.find((record) => record.cell === held) as { ended: boolean }).ended = true;
              model.delete(each.id);
              await settle();
              break;
            }
            case 'cancel': {
              const held = model.get(each.id);
              const before = made.map((record) => record.stops);
              jobs.observe(cancelled(each.id));
              made.forEach((record, index) => {
                expect(record.stops, 'one stop, for the cancelled request only').toBe((before[index] as number) + (record.cell === held ? 1 : 0));
              });
              if (held !== undefined) expect(stopCauseOf(held.stop.signal)?.by).toBe('client');
              model.delete(each.id);
              break;
            }
            case 'request':
              jobs.observe({ jsonrpc: '2.0', id: each.id, method: 'tools/call', params: {} } as JSONRPCMessage);
              model.delete(each.id);
              break;
            case 'response':
              jobs.observe({ jsonrpc: '2.0', id: each.id, result: {} } as JSONRPCMessage);
              break;
            case 'progress':
              jobs.observe({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: each.id, progress: 1 } } as JSONRPCMessage);
              break;
          }
          expect(jobs.size).toBe(model.size);
        }
        for (const record of made) expect(record.stops).toBeLessThanOrEqual(1);
        // Ending every cell leaves nothing behind.
        for (const record of made) record.cell.end();
        await settle();
        expect(jobs.size).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});

describe('withStopCause', () => {
  const interrupted = { code: 'operation_cancelled' as const, message: 'the operation was cancelled; state was preserved', details: { replacement_startup_ms: 5 } };

  it("puts who stopped a cancelled call first in its message and in details.stopped_by", () => {
    expect(withStopCause(interrupted, CellStop.byClient(7))).toEqual({
      code: 'operation_cancelled',
      message: 'cancelled by the client (request 7): the operation was cancelled; state was preserved',
      details: { replacement_startup_ms: 5, stopped_by: 'client' },
    });
    expect(withStopCause(interrupted, CellStop.byTaskCancel()).details).toEqual({ replacement_startup_ms: 5, stopped_by: 'task' });
    expect(withStopCause(interrupted, CellStop.byJobTool()).message).toMatch(/^stopped by the job tool: /);
  });

  it('leaves any other failure, and a cancel nobody named, as it was', () => {
    const timeout = { code: 'operation_timeout' as const, message: 'the operation passed its deadline; state was preserved' };
    expect(withStopCause(timeout, CellStop.byClient(7))).toBe(timeout);
    expect(withStopCause(interrupted, undefined)).toBe(interrupted);
  });
});
