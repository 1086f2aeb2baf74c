import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  ROOT_CONTEXT,
  context as otelContext,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type ContextManager,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
} from '@opentelemetry/api';

/** One span as the tracer recorded it. */
export interface RecordedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Attributes;
  status: SpanStatus | undefined;
  exceptions: unknown[];
  ended: boolean;
}

class RecordingSpan implements Span {
  constructor(
    private readonly context: SpanContext,
    readonly record: RecordedSpan,
  ) {}
  spanContext(): SpanContext {
    return this.context;
  }
  setAttribute(key: string, value: AttributeValue): this {
    this.record.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.record.attributes, attributes);
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }
  updateName(name: string): this {
    this.record.name = name;
    return this;
  }
  end(): void {
    this.record.ended = true;
  }
  isRecording(): boolean {
    return !this.record.ended;
  }
  recordException(exception: unknown): void {
    this.record.exceptions.push(exception);
  }
}

/** A minimal recording Tracer on the @opentelemetry/api interface: spans nest under the span of the given context. */
export class InMemoryTracer implements Tracer {
  readonly spans: RecordedSpan[] = [];

  startSpan(name: string, options: SpanOptions = {}, context: Context = otelContext.active()): Span {
    const parent = trace.getSpanContext(context);
    const spanContext: SpanContext = { traceId: parent?.traceId ?? randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), traceFlags: 1 };
    const record: RecordedSpan = {
      name,
      traceId: spanContext.traceId,
      spanId: spanContext.spanId,
      parentSpanId: parent?.spanId,
      attributes: { ...(options.attributes ?? {}) },
      status: undefined,
      exceptions: [],
      ended: false,
    };
    this.spans.push(record);
    return new RecordingSpan(spanContext, record);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = (rest.length > 1 ? rest[0] : {}) as SpanOptions;
    const context = (rest.length > 2 ? rest[1] : otelContext.active()) as Context;
    const span = this.startSpan(name, options, context);
    return otelContext.with(trace.setSpan(context, span), () => fn(span)) as ReturnType<F>;
  }
}

/** An AsyncLocalStorage context manager, as the OpenTelemetry Node SDK registers one. */
export class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(context, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}
