import type { OperationMeta } from '@ipython-mcp/worker-supervisor';

/**
 * The compact result shapes: what a tool's `structuredContent` keeps of the worker's full result. A field that holds
 * its default is left out (an empty stdout, a false truncation flag, a zero omitted count, an empty list, a null
 * error), so a model reads only information; each tool's `outputSchema` documents the defaults, so "absent" reads
 * as "default" for a program too. Values (`result.value`, `value`) are never touched.
 */

type Json = Record<string, unknown>;

/** A queue wait at least this long is reported on a success (shorter ones say nothing new). */
export const LONG_QUEUE_WAIT_MS = 1000;

/** The full runtime metadata of an operation, as `_meta["ipython-mcp/runtime"]` carries it on every result. */
export function runtimeMeta(meta: OperationMeta): Json {
  return {
    request_id: meta.requestId,
    sequence: meta.sequence,
    epoch: meta.epoch,
    queue_wait_ms: meta.queueWaitMs,
    duration_ms: meta.durationMs,
    interruption: meta.interruption,
    namespace: meta.namespace,
    ...(meta.shared === undefined ? {} : sharedMeta(meta.shared)),
    ...(meta.epochReason === undefined ? {} : epochReasonMeta(meta.epochReason)),
  };
}

/** Why the epoch began, when another client of a shared kernel restarted or shut it down (the person's Restart Kernel). */
function epochReasonMeta(reason: NonNullable<OperationMeta['epochReason']>): Json {
  return { epoch_reason: reason.kind, kernel_action: reason.action };
}

/**
 * Who did what on a kernel other clients share (Jupyter): whether the operation reached the kernel, how long and
 * behind whose request it waited for it, and whether another client (the person's stop button) stopped it.
 */
function sharedMeta(shared: NonNullable<OperationMeta['shared']>): Json {
  return { ran: shared.ran, kernel_wait_ms: shared.waitedMs, waited_behind: shared.behind, stopped_by: shared.stoppedBy };
}

/**
 * The `runtime` object a result shows, or undefined when it would say nothing new. An interrupted operation
 * (timeout, cancellation, crash, shutdown) shows it whole: request, sequence, epoch, queue wait, duration,
 * interruption kind and namespace outcome, as is one another client of a shared kernel stopped (a wait for a shared
 * kernel before a call that then ran is in `_meta` only: a success says nothing new to the model). Otherwise it shows the epoch only when it changed since the last result
 * (`epochChanged`), the queue wait only when it was long, and the queue wait of a `queue_timeout` always.
 */
export function shownRuntime(meta: OperationMeta, epochChanged: boolean, errorCode?: string): Json | undefined {
  if (meta.interruption !== null || (meta.shared?.stoppedBy ?? null) !== null) return runtimeMeta(meta);
  const shown: Json = {};
  if (epochChanged) {
    shown.epoch = meta.epoch;
    // The first answer in a new epoch says who ended the old one, when it was another client of the kernel.
    if (meta.epochReason !== undefined) Object.assign(shown, epochReasonMeta(meta.epochReason));
  }
  if (meta.queueWaitMs >= LONG_QUEUE_WAIT_MS || errorCode === 'queue_timeout') {
    shown.sequence = meta.sequence;
    shown.queue_wait_ms = meta.queueWaitMs;
  }
  return Object.keys(shown).length > 0 ? shown : undefined;
}

function isDefault(value: unknown, fallback: unknown): boolean {
  if (Array.isArray(fallback)) return Array.isArray(value) && value.length === 0;
  if (fallback !== null && typeof fallback === 'object') {
    return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;
  }
  return value === fallback;
}

/** Whether field `key` of a result holds its default, so the compact form leaves it out. */
function atDefault(key: string, value: unknown, defaults: Json): boolean {
  return key in defaults && isDefault(value, defaults[key]);
}

/** A copy of `object` without the fields that equal their default (`[]` and `{}` mean "empty"). */
export function withoutDefaults(object: Json, defaults: Json): Json {
  // Runs several times on every result: keys and reads, not Object.entries (an array per field).
  const copy: Json = {};
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (!atDefault(key, value, defaults)) copy[key] = value;
  }
  return copy;
}

/** A truncation map with only its true flags, or undefined when none is set. */
function trueFlags(flags: unknown): Json | undefined {
  if (flags === null || typeof flags !== 'object' || Array.isArray(flags)) return flags === true ? { value: true } : undefined;
  let kept: Json | undefined;
  for (const key of Object.keys(flags)) {
    const flag = (flags as Json)[key];
    if (flag === false) continue;
    kept ??= {};
    // An own "__proto__" key stays a key (as Object.fromEntries kept it), not a prototype.
    if (key === '__proto__') Object.defineProperty(kept, key, { value: flag, enumerable: true, writable: true, configurable: true });
    else kept[key] = flag;
  }
  return kept;
}

function mapItems(list: unknown, compactItem: (item: Json) => Json): unknown {
  return Array.isArray(list) ? list.map((item: unknown) => (isObject(item) ? compactItem(item) : item)) : list;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Defaults shared by every result: the value-contract fields are present only when non-empty. */
export const COMMON: Json = { escaped: [], encoded: {}, encoded_omitted: 0 };
/** Defaults of execute's JSON value (`kind: "json"` is the default kind). */
export const JSON_RESULT_DEFAULTS: Json = { ...COMMON, kind: 'json' };
/** Defaults of the value results (call_function, dynamic tools). */
export const VALUE_DEFAULTS: Json = { ...COMMON, truncated: false };
/** Defaults of a listing (list, search); its `total` is left out when it equals the number of items. */
export const LISTING_DEFAULTS: Json = { ...COMMON, truncated: false };
/** Defaults of one reload result. */
export const RELOAD_ITEM_DEFAULTS: Json = { bindings: [] };
/** Defaults of remove's partitions. */
export const REMOVE_DEFAULTS: Json = { ...COMMON, removed: [], refused: [], unknown: [] };
/** Defaults of a registration. */
export const REGISTRATION_DEFAULTS: Json = { ...COMMON, description_truncated: false };
/** Defaults of unregister_tool's partitions. */
export const UNREGISTER_DEFAULTS: Json = { ...COMMON, unregistered: [], unknown: [] };

/** Defaults of the execute result (the worker's shape in docs/protocol.md). */
export const EXECUTE_DEFAULTS: Json = {
  ...COMMON,
  status: 'ok',
  stdout: '',
  stderr: '',
  stdout_omitted_chars: 0,
  stderr_omitted_chars: 0,
  truncated: {},
  result: null,
  displays: [],
  displays_omitted: 0,
  error: null,
};
/** Defaults of execute's cell error. */
export const EXECUTE_ERROR_DEFAULTS: Json = { message_truncated: false, traceback_truncated: false, filename_truncated: false };
/** Defaults of one display. */
export const DISPLAY_DEFAULTS: Json = { metadata: {}, truncated: false };

/** Drops the 75-dash banner, the padded "Traceback (most recent call last)" header line and ANSI colour codes. */
export function cleanTraceback(traceback: string): string {
  // eslint-disable-next-line no-control-regex -- ANSI escape sequences are exactly what is removed here
  const plain = traceback.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
  const lines = plain.split('\n');
  const kept = lines.filter((line, index) => {
    if (/^-{20,}$/.test(line)) return false;
    if (index <= 2 && /^\S+\s{2,}Traceback \(most recent call last\)$/.test(line)) return false;
    return true;
  });
  return kept.join('\n').replace(/^\n+/, '');
}

const compactDisplay = (display: Json): Json => withoutDefaults(display, DISPLAY_DEFAULTS);

/**
 * One pass over the worker's fields, in their order: the fields at their default go, the truncation map keeps its
 * true flags (absent when none is set), and a JSON value, a cell error and the displays are compacted in turn.
 * Every execute runs this, so it builds the one object it returns rather than copying the result first.
 */
export function compactExecute(full: Json): Json {
  const shown: Json = {};
  for (const key of Object.keys(full)) {
    const value = full[key];
    if (key === 'truncated') {
      const flags = trueFlags(value);
      if (flags !== undefined) shown.truncated = flags;
    } else if (key === 'result' && isObject(value)) {
      shown.result = value.kind === 'json' && 'value' in value ? withoutDefaults(value, JSON_RESULT_DEFAULTS) : value;
    } else if (key === 'error' && isObject(value)) {
      const error = withoutDefaults(value, EXECUTE_ERROR_DEFAULTS);
      if (typeof error.traceback === 'string') error.traceback = cleanTraceback(error.traceback);
      shown.error = error;
    } else if (!atDefault(key, value, EXECUTE_DEFAULTS)) {
      shown[key] = key === 'displays' ? mapItems(value, compactDisplay) : value;
    }
  }
  return shown;
}

/** Defaults of one `list` entry. */
export const FUNCTION_DEFAULTS: Json = { signature_truncated: false, doc_truncated: false, module: null, doc: null };
/** Defaults of one `search` match. */
export const MATCH_DEFAULTS: Json = { repr: null, repr_truncated: false };

/** A listing (`list`, `search`): `total` is left out when it equals the number of items returned. */
function compactListing(full: Json, key: string, itemDefaults: Json): Json {
  const items = full[key];
  const shown = withoutDefaults(full, LISTING_DEFAULTS);
  if (Array.isArray(items) && shown.total === items.length) delete shown.total;
  shown[key] = mapItems(items, (item) => withoutDefaults(item, itemDefaults));
  return shown;
}

/** Defaults of an inspection. */
export const INSPECT_DEFAULTS: Json = {
  ...COMMON,
  qualified_type: null,
  signature: null,
  module: null,
  documentation: null,
  representation: null,
  truncated: {},
  error: null,
};

/** Defaults of reset's result. */
export const RESET_DEFAULTS: Json = { ...COMMON, removed: [], removed_truncated: false };

/** Defaults of runtime_status: idle, nothing interrupted, no error, no dynamic tools. */
export const STATUS_DEFAULTS: Json = {
  queue_depth: 0,
  active: false,
  last_interruption: null,
  replacement_startup_ms: null,
  worker_startup_ms: null,
  error: null,
  dynamic_tools: 0,
  registry_revision: 0,
};

// The compaction rules a tool definition names as its `compact` (stable-tools.ts, tool-result.ts). Each tool's
// output schema is derived from the same defaults table (output-schemas.ts).

/** A result whose fields at their default (`defaults`) are left out. */
export const compactWith =
  (defaults: Json) =>
  (full: Json): Json =>
    withoutDefaults(full, defaults);

/** A value result (call_function, dynamic tools). */
export const compactValue = compactWith(VALUE_DEFAULTS);

/** A listing (`list`, `search`) whose items sit at `key` and drop `itemDefaults`. */
export const compactListingOf =
  (key: string, itemDefaults: Json) =>
  (full: Json): Json =>
    compactListing(full, key, itemDefaults);

/** An inspection: its truncation map keeps only its true flags. */
export function compactInspection(full: Json): Json {
  return withoutDefaults({ ...full, truncated: trueFlags(full.truncated) ?? {} }, INSPECT_DEFAULTS);
}

/** reload's result: each module's result drops its empty bindings. */
export function compactReload(full: Json): Json {
  return { ...withoutDefaults(full, COMMON), results: mapItems(full.results, (item) => withoutDefaults(item, RELOAD_ITEM_DEFAULTS)) };
}

/** reset's result: `removed_count` is left out when it equals the length of `removed`. */
export function compactReset(full: Json): Json {
  const shown = withoutDefaults(full, RESET_DEFAULTS);
  if (Array.isArray(full.removed) && full.removed_count === full.removed.length) delete shown.removed_count;
  return shown;
}
