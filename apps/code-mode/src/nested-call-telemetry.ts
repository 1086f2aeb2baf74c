import type { NestedCallContext, ToolDefinition } from '@ipython-mcp/code-mode';
import { SpanStatusCode, context as otelContext, trace, type Attributes, type AttributeValue, type Context, type Span } from '@opentelemetry/api';
import type { OnToolCallFinishEvent, OnToolCallStartEvent, TelemetrySettings, ToolExecutionOptions, ToolSet } from 'ai';

/** Span attribute naming the run_code call a nested call was made from. */
export const RUN_CODE_CALL_ID_ATTRIBUTE = 'ipython_code_mode.run_code.id';

/**
 * Where run_code's options carry the OpenTelemetry context its `execute` ran in (run_code's span). Nested calls
 * arrive from the kernel's pipe, whose callbacks run in whatever context the pipe was created in, so the context
 * is captured when run_code starts and restored for each nested call.
 */
export const ACTIVE_CONTEXT = Symbol('ipython-code-mode.active-context');

/** run_code's AI SDK options plus the OpenTelemetry context it started in, as nested calls receive them. */
export function withActiveContext(options: ToolExecutionOptions): ToolExecutionOptions & { [ACTIVE_CONTEXT]: Context } {
  return { ...options, [ACTIVE_CONTEXT]: otelContext.active() };
}

/**
 * How nested tool calls (made by code in the kernel) are reported: give these the same values you give
 * `generateText`/`streamText`, and nested calls show up there like direct tool calls do. The AI SDK does not hand
 * its tracer or callbacks to a tool's `execute`, so Code Mode needs them passed here.
 */
export interface NestedCallReporting {
  /**
   * The run's telemetry settings. With `isEnabled`, each nested call gets an `ai.toolCall` span (the AI SDK's own
   * name and attributes: `ai.toolCall.name`, `.id`, `.args`, `.result`, honouring `recordInputs`/`recordOutputs`,
   * `functionId` and `metadata`) from `tracer` (else the global tracer provider's `ai` tracer, as the AI SDK
   * does), started in the active OpenTelemetry context. With a context manager registered (the OpenTelemetry
   * Node SDK and `@vercel/otel` register one), that context is run_code's own span, so nested calls are its
   * children in the same trace; each span also carries `ipython_code_mode.run_code.id`. `integrations` get
   * `onToolCallStart`/`onToolCallFinish` for nested calls.
   */
  experimental_telemetry?: TelemetrySettings | undefined;
  /** Called before each nested call runs, with the AI SDK's event (`stepNumber` and `model` are undefined). */
  experimental_onToolCallStart?: ((event: OnToolCallStartEvent<ToolSet>) => PromiseLike<void> | void) | undefined;
  /** Called after each nested call, with its output or error and its duration. */
  experimental_onToolCallFinish?: ((event: OnToolCallFinishEvent<ToolSet>) => PromiseLike<void> | void) | undefined;
}

type Listener<EVENT> = (event: EVENT) => PromiseLike<void> | void;

/**
 * `definition` with its nested calls reported as {@link NestedCallReporting} asks; unchanged when nothing is
 * asked. Reporting never changes the outcome: a listener that throws is ignored, as the AI SDK ignores it.
 */
export function reportNestedCalls(definition: ToolDefinition, reporting: NestedCallReporting): ToolDefinition {
  const telemetry = reporting.experimental_telemetry;
  const integrations = telemetry?.integrations === undefined ? [] : Array.isArray(telemetry.integrations) ? telemetry.integrations : [telemetry.integrations];
  const onStart: Array<Listener<OnToolCallStartEvent<ToolSet>>> = [];
  const onFinish: Array<Listener<OnToolCallFinishEvent<ToolSet>>> = [];
  for (const integration of integrations) {
    if (integration.onToolCallStart !== undefined) onStart.push(integration.onToolCallStart.bind(integration));
    if (integration.onToolCallFinish !== undefined) onFinish.push(integration.onToolCallFinish.bind(integration));
  }
  if (reporting.experimental_onToolCallStart !== undefined) onStart.push(reporting.experimental_onToolCallStart);
  if (reporting.experimental_onToolCallFinish !== undefined) onFinish.push(reporting.experimental_onToolCallFinish);
  const traced = telemetry?.isEnabled === true;
  if (!traced && onStart.length === 0 && onFinish.length === 0) return definition;

  const execute = async (input: unknown, context: NestedCallContext): Promise<unknown> => {
    const outer = runCodeOptions(context.context);
    const base = {
      stepNumber: undefined,
      model: undefined,
      // `input` is typed `never` for a generic ToolSet; it is the input the tool got.
      toolCall: { type: 'tool-call' as const, toolCallId: context.toolCallId, toolName: definition.name, input: input as never },
      messages: outer?.messages ?? [],
      abortSignal: context.signal,
      functionId: telemetry?.functionId,
      metadata: telemetry?.metadata,
      experimental_context: outer?.experimental_context,
    };
    const run = async (span: Span | undefined): Promise<unknown> => {
      await notify(onStart, base);
      const startedAt = performance.now();
      let output: unknown;
      try {
        output = await definition.execute(input as never, context);
      } catch (error) {
        await notify(onFinish, { ...base, success: false, error, durationMs: performance.now() - startedAt });
        if (span !== undefined) recordError(span, error);
        throw error;
      }
      await notify(onFinish, { ...base, success: true, output, durationMs: performance.now() - startedAt });
      if (span !== undefined && telemetry?.recordOutputs !== false) {
        const result = json(output);
        if (result !== undefined) span.setAttribute('ai.toolCall.result', result);
      }
      return output;
    };
    if (!traced) return run(undefined);
    const tracer = telemetry.tracer ?? trace.getTracer('ai');
    const parent = (outer as { [ACTIVE_CONTEXT]?: Context } | undefined)?.[ACTIVE_CONTEXT] ?? otelContext.active();
    const attributes = spanAttributes(telemetry, definition.name, context, input, outer);
    return tracer.startActiveSpan('ai.toolCall', { attributes }, parent, async (span) => {
      try {
        return await run(span);
      } finally {
        span.end();
      }
    });
  };
  return { ...definition, execute: execute as ToolDefinition['execute'] };
}

function spanAttributes(
  telemetry: TelemetrySettings,
  toolName: string,
  context: NestedCallContext,
  input: unknown,
  outer: ToolExecutionOptions | undefined,
): Attributes {
  const functionId = telemetry.functionId;
  const attributes: Attributes = {
    'operation.name': `ai.toolCall${functionId !== undefined ? ` ${functionId}` : ''}`,
    'ai.operationId': 'ai.toolCall',
    'ai.toolCall.name': toolName,
    'ai.toolCall.id': context.toolCallId,
  };
  if (functionId !== undefined) {
    attributes['resource.name'] = functionId;
    attributes['ai.telemetry.functionId'] = functionId;
  }
  for (const [key, value] of Object.entries(telemetry.metadata ?? {})) {
    if (value !== undefined) attributes[`ai.telemetry.metadata.${key}`] = value as AttributeValue;
  }
  if (outer !== undefined) attributes[RUN_CODE_CALL_ID_ATTRIBUTE] = outer.toolCallId;
  if (telemetry.recordInputs !== false) {
    const args = json(input);
    if (args !== undefined) attributes['ai.toolCall.args'] = args;
  }
  return attributes;
}

function recordError(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException({ name: error.name, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }) });
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  } else {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

async function notify<EVENT>(listeners: Array<Listener<EVENT>>, event: EVENT): Promise<void> {
  for (const listener of listeners) {
    try {
      await listener(event);
    } catch {
      // A reporting hook must not change what the code gets, as in the AI SDK's own notify.
    }
  }
}

function json(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** The run_code call's AI SDK options, which Code Mode passes to nested calls as their `context`. */
function runCodeOptions(value: unknown): ToolExecutionOptions | undefined {
  return typeof value === 'object' && value !== null && typeof (value as { toolCallId?: unknown }).toolCallId === 'string'
    ? (value as ToolExecutionOptions)
    : undefined;
}
