import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * The per-call deadline: execute, call_function and every dynamic tool take an optional `timeout_seconds`, which
 * replaces the server's operation timeout for that one call (still measured from dispatch). It is taken out of the
 * arguments before they are checked against the tool's own model, so the tool never sees it.
 */

/** The argument's name. */
export const TIMEOUT_ARGUMENT = 'timeout_seconds';

/**
 * The JSON Schema of the argument, with the server's bound. No description: the name and bounds say it, and the
 * tool list goes out with every model request (execute's description names the argument once).
 */
export function timeoutProperty(maxSeconds: number): Record<string, unknown> {
  return { type: 'number', exclusiveMinimum: 0, maximum: maxSeconds };
}

/**
 * `inputSchema` with the `timeout_seconds` property added. A schema that has a property of that name already (a
 * dynamic tool whose function takes `timeout_seconds`) is returned as it is: the function's parameter wins.
 */
export function withTimeoutProperty(schema: Tool['inputSchema'], maxSeconds: number): Tool['inputSchema'] {
  return withArgument(schema, TIMEOUT_ARGUMENT, timeoutProperty(maxSeconds));
}

/** `inputSchema` with the property `name` added, unless the schema declares one of that name itself (it wins). */
export function withArgument(schema: Tool['inputSchema'], name: string, property: Record<string, unknown>): Tool['inputSchema'] {
  if (hasOwnArgument(schema, name)) return schema;
  return { ...schema, properties: { ...schema.properties, [name]: property } };
}

/** Whether a dynamic tool's own schema has a `timeout_seconds` parameter (then there is no deadline argument). */
export function takesOwnTimeout(schema: { properties?: unknown }): boolean {
  return hasOwnArgument(schema, TIMEOUT_ARGUMENT);
}

/** Whether a tool's input schema declares the property `name` itself. */
export function hasOwnArgument(schema: { properties?: unknown }, name: string): boolean {
  const properties = schema.properties;
  return properties !== null && typeof properties === 'object' && Object.hasOwn(properties, name);
}

/** What {@link takeTimeout} found: the other arguments and the deadline in ms, or the problem. */
export type TakenTimeout =
  | { ok: true; args: Record<string, unknown>; timeoutMs: number | undefined }
  | { ok: false; message: string; details: Record<string, unknown> };

/** What {@link takeSeconds} found: the other arguments and the value in ms, or the problem. */
export type TakenSeconds =
  | { ok: true; args: Record<string, unknown>; ms: number | undefined }
  | { ok: false; message: string; details: Record<string, unknown> };

/**
 * Takes the seconds argument `name` out of `args` and checks it: a finite number above 0 and at most `maxSeconds`
 * (`bound` names the setting behind it, for the message). Absent, `ms` is undefined. `args` itself is never changed.
 */
export function takeSeconds(args: Record<string, unknown>, name: string, maxSeconds: number, bound = ''): TakenSeconds {
  if (!Object.hasOwn(args, name)) return { ok: true, args, ms: undefined };
  const { [name]: value, ...rest } = args;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > maxSeconds) {
    const got = typeof value === 'number' ? String(value) : value === null ? 'null' : `a ${Array.isArray(value) ? 'list' : typeof value}`;
    return {
      ok: false,
      message: `${name} must be a number of seconds above 0 and at most ${maxSeconds}${bound ? ` (${bound})` : ''}, got ${got}`,
      details: { path: name, maximum: maxSeconds },
    };
  }
  return { ok: true, args: rest, ms: value * 1000 };
}

/**
 * Takes `timeout_seconds` out of `args` and checks it: a finite number above 0 and at most `maxSeconds`. Absent,
 * the call keeps the server's deadline (`timeoutMs` undefined). `args` itself is never changed.
 */
export function takeTimeout(args: Record<string, unknown>, maxSeconds: number): TakenTimeout {
  const taken = takeSeconds(args, TIMEOUT_ARGUMENT, maxSeconds, 'IPYTHON_MCP_MAX_OPERATION_TIMEOUT_SECONDS');
  return taken.ok ? { ok: true, args: taken.args, timeoutMs: taken.ms } : taken;
}
