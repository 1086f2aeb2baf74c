import { ErrorCode as McpErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OPERATION_FACTS } from '@ipython-mcp/protocol';
import type { OperationFailure, OperationOutcome, Runtime } from '@ipython-mcp/worker-supervisor';
import { takesOwnTimeout } from './call-deadline.js';
import { takesOwnDetach } from './detached/detached-cells.js';
import type { DynamicCatalog } from './dynamic-catalog.js';
import type { JournalRecorder } from '../resources/index.js';
import { DYNAMIC_TOOL_RESULT, type ResultRules, type ResultWriter } from '../results/index.js';
import { catalogEffectOf, type CatalogEffect, type StableToolDefinition } from './tool-definition.js';

type Json = Record<string, unknown>;

/** What a tool's argument check found: the operation's parameters, or why the call is refused. */
export type CheckedArguments = { ok: true; data: Json } | { ok: false; failure: OperationFailure };

/**
 * One tool as the tool caller (tool-caller.ts) runs it: a stable tool's definition or a dynamic tool's catalog
 * entry, in one shape. The caller reads only this; nothing in it switches on a tool's name or kind.
 */
export interface CallableTool {
  /** The name the client called (a dynamic tool's rules are shared, so they do not hold it). */
  readonly name: string;
  /** How its results and failures are written. */
  readonly rules: ResultRules;
  /** Whether `timeout_seconds` is taken off the arguments as the call's deadline. */
  readonly takesDeadline: boolean;
  /** Whether `detach_after_seconds` is taken off the arguments (detached-cells.ts). */
  readonly detachable: boolean;
  /** Without an operation: what the server answers from. */
  readonly answeredFrom: 'status' | 'detached' | undefined;
  /** Checks the arguments (the deadline already taken off). */
  check(args: Json): CheckedArguments;
  /** The worker operation; `null` when the server answers itself (runtime_status). */
  readonly op: string | null;
  /** The operation's parameters, from the checked arguments. */
  params(data: Json): Json;
  /** Whether the worker streams output as progress notifications while it runs. */
  readonly streams: boolean;
  /** What a successful call may do to the dynamic catalog, and whether its result waits for the reconciliation. */
  readonly catalogEffect: CatalogEffect;
  readonly resultWaitsForCatalog: boolean;
  /** The MCP result of a finished call (the catalog already reconciled when the result waits for it). */
  result(outcome: OperationOutcome, results: ResultWriter): Promise<CallToolResult>;
  /** Records the call in the journal, by the tool's policy. */
  record(journal: JournalRecorder, data: Json, outcome: OperationOutcome): void;
}

/** The refusal of arguments that break the tool's input schema. */
export function invalidArguments(name: string, problems: string[], details?: Json): OperationFailure {
  return { code: 'invalid_arguments', message: `invalid arguments for ${name.slice(0, 200)}: ${problems.join('; ')}`.slice(0, 1000), ...(details ? { details } : {}) };
}

/** A stable tool, callable: its definition read as it is. */
export function stableCallable(tool: StableToolDefinition, catalog: DynamicCatalog): CallableTool {
  return {
    name: tool.name,
    rules: tool,
    takesDeadline: tool.takesDeadline === true,
    detachable: tool.detachable === true,
    answeredFrom: tool.answeredFrom,
    check(args) {
      // The usual well-formed execute skips zod (plainInput); anything else is checked by the tool's model.
      const plain = tool.plainInput?.(args);
      if (plain !== undefined) return { ok: true, data: plain };
      const parsed = tool.input.safeParse(args);
      if (parsed.success) return { ok: true, data: parsed.data as Json };
      const problems = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`);
      return { ok: false, failure: invalidArguments(tool.name, problems) };
    },
    op: tool.op,
    params: (data) => data,
    streams: true,
    catalogEffect: catalogEffectOf(tool),
    resultWaitsForCatalog: true,
    async result(outcome, results) {
      if (!outcome.ok) return results.failure(tool, outcome.error, outcome.meta);
      // The writer only reads the worker's result; a copy is made only for a field the server overrides.
      let structured = outcome.result;
      if (catalogEffectOf(tool) === 'changes') {
        // Explicitly unregistered names become plain unknown tools (not stale ones).
        if (tool.withdrawnTools) catalog.forget(tool.withdrawnTools(outcome.result));
        // Clients see the server's catalog revision (monotonic across worker replacement), never the worker's.
        if ('revision' in structured) structured = { ...structured, revision: catalog.revision };
      }
      return results.success(tool, structured, outcome.meta);
    },
    record: (journal, data, outcome) => journal.stableTool(tool, data, outcome),
  };
}

/** A dynamic tool's catalog entry, as {@link DynamicCatalog.get} returns it. */
type DynamicEntry = NonNullable<ReturnType<DynamicCatalog['get']>>;

/**
 * A dynamic tool, callable: one immutable snapshot entry serves the whole call (its validator, and its fingerprint,
 * which the worker checks against the live registration before invoking). Its result does not wait for the
 * reconciliation its call may need, unless the worker said the entry was behind.
 */
export function dynamicCallable(entry: DynamicEntry, name: string, catalog: DynamicCatalog, runtime: Runtime): CallableTool {
  return {
    name,
    rules: DYNAMIC_TOOL_RESULT,
    // Unless the function takes a `timeout_seconds` of its own: then it is the function's.
    takesDeadline: !takesOwnTimeout(entry.registration.input_schema),
    // Likewise `detach_after_seconds`.
    detachable: !takesOwnDetach(entry.registration.input_schema),
    answeredFrom: undefined,
    check(args) {
      if (entry.validate(args)) return { ok: true, data: args };
      const errors = (entry.validate.errors ?? []).slice(0, 5);
      const problems = [errors.map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'is invalid'}`).join('; ')];
      return {
        ok: false,
        failure: invalidArguments(name, problems, { issues: errors.map((error) => ({ path: error.instancePath.slice(0, 200), keyword: error.keyword })) }),
      };
    },
    op: 'call_tool',
    params: (data) => ({ tool_name: name, arguments: data, fingerprint: entry.registration.fingerprint }),
    streams: false,
    catalogEffect: OPERATION_FACTS.call_tool.catalogEffect,
    resultWaitsForCatalog: false,
    async result(outcome, results) {
      if (outcome.ok) return results.success(DYNAMIC_TOOL_RESULT, outcome.result, outcome.meta);
      const code = outcome.error.code;
      if (code !== 'tool_not_found' && code !== 'stale_registration') return results.failure(DYNAMIC_TOOL_RESULT, outcome.error, outcome.meta);
      // The snapshot was behind the worker: reconcile (and notify) before answering.
      await catalog.reconcileAfter(runtime);
      if (code === 'stale_registration') return results.failure(DYNAMIC_TOOL_RESULT, outcome.error, outcome.meta);
      return staleOrUnknown(catalog, name, results, outcome.meta);
    },
    record: (journal, data, outcome) => journal.call(entry.registration.name, data, outcome, name),
  };
}

/** A stale_registration failure for a tool the catalog remembers as stale; an unknown tool (a JSON-RPC error) otherwise. */
export function staleOrUnknown(catalog: DynamicCatalog, name: string, results: ResultWriter, meta?: OperationOutcome['meta']): CallToolResult {
  const reason = catalog.staleReason(name);
  if (reason === undefined) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 200)}`);
  const shown = name.slice(0, 80);
  return results.failure(
    DYNAMIC_TOOL_RESULT,
    { code: 'stale_registration', message: `tool ${JSON.stringify(shown)} is stale (${reason}); register it again`, details: { tool_name: shown, reason } },
    meta,
  );
}
