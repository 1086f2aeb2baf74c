import { describe, expect, it } from 'vitest';
import { TIMEOUT_ARGUMENT, takeTimeout, takesOwnTimeout, withTimeoutProperty } from './call-deadline.js';

describe('takeTimeout', () => {
  it('leaves arguments without timeout_seconds as they are', () => {
    const args = { code: '1' };
    expect(takeTimeout(args, 10)).toEqual({ ok: true, args, timeoutMs: undefined });
  });

  it('takes a valid value out and converts it to ms, without changing the caller\'s object', () => {
    const args = { code: '1', timeout_seconds: 2.5 };
    expect(takeTimeout(args, 10)).toEqual({ ok: true, args: { code: '1' }, timeoutMs: 2500 });
    expect(args.timeout_seconds).toBe(2.5);
    expect(takeTimeout({ timeout_seconds: 10 }, 10)).toMatchObject({ ok: true, timeoutMs: 10_000 });
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 10.001, '5', null, true, [1], { seconds: 1 }])('refuses %s, naming the bound', (value) => {
    const taken = takeTimeout({ timeout_seconds: value }, 10);
    expect(taken.ok).toBe(false);
    if (taken.ok) return;
    expect(taken.message).toContain('at most 10');
    expect(taken.message).toContain('IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS');
    expect(taken.details).toEqual({ path: TIMEOUT_ARGUMENT, maximum: 10 });
  });
});

describe('withTimeoutProperty', () => {
  it('adds the bounded property to a dynamic tool schema', () => {
    const schema = { type: 'object' as const, properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false };
    const published = withTimeoutProperty(schema, 60);
    expect(published.properties).toMatchObject({ x: { type: 'integer' }, timeout_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 60 } });
    expect(published.required).toEqual(['x']);
    expect(schema.properties).not.toHaveProperty('timeout_seconds');
  });

  it('keeps a function\'s own timeout_seconds parameter', () => {
    const schema = { type: 'object' as const, properties: { timeout_seconds: { type: 'integer' } } };
    expect(withTimeoutProperty(schema, 60)).toBe(schema);
    expect(takesOwnTimeout(schema)).toBe(true);
    expect(takesOwnTimeout({})).toBe(false);
  });
});
