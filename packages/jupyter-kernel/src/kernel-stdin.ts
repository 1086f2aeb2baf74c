/**
 * Code Mode's nested tool calls from a kernel, answered on the kernel's stdin channel (docs/jupyter.md, "Code Mode
 * on a kernel"). A `run_code` runs as the kernel's own cell with `allow_stdin` true; each tool call of its code is
 * an `input_request` whose prompt is {@link TOOL_CALL_PROMPT_PREFIX} and the `tool_call` message as JSON text, and
 * the `input_reply` carries the `tool_result` message as JSON text (python/ipython_mcp_worker/kernel/stdin_calls.py).
 * The kernel sends an input request to the client whose request is running only: a person's `input()` never
 * reaches these handlers, and a call of the agent's never reaches the person's frontend.
 */
import { OPERATION_FACTS, isOperationName, parseWorkerMessage } from '@ipython-mcp/protocol';
import type { Logger, RequestHooks, ToolAnswer } from '@ipython-mcp/worker-supervisor';

/** How a prompt that carries a nested call starts: recognisable, and versioned with the wire it speaks. */
export const TOOL_CALL_PROMPT_PREFIX = 'ipython-mcp/tool_call/1 ';

/**
 * The largest `input_reply` answer sent, in bytes of JSON: a Jupyter server closes a WebSocket whose message is
 * over its `websocket_max_message_size` (Tornado's default, 10 MiB), which would end the connection. A larger
 * tool result is answered as a failed call instead.
 */
export const STDIN_ANSWER_LIMIT_BYTES = 8 * 1024 * 1024;

/** Whether a request runs as the kernel's own cell (an execute_request) rather than a comm message: its `kernel_cell` fact. */
export function runsAsCell(op: string, params: Readonly<Record<string, unknown>>): boolean {
  if (!isOperationName(op) || typeof params.code !== 'string') return false;
  const facts = OPERATION_FACTS[op];
  if (!facts.kernelCell) return false;
  // A blank execute runs no cell (it goes over the comm); Code Mode's run_code is always a cell, for its stdin.
  return facts.callsHost || params.code.trim() !== '';
}

/** What answers the input requests of one cell: called with each prompt and the function that replies to it. */
export type InputHandler = (prompt: string, reply: (value: string) => void) => void;

/** The nested calls of one worker's run_code cells, waiting for the host's answers. */
export class KernelToolCalls {
  readonly #logger: Logger;
  /** Calls sent on to the host, by call id: how to reply. */
  readonly #open = new Map<number, (value: string) => void>();
  /** The last answer sent: a kernel that skipped it as stale (its own interrupt raced it) asks again. */
  #last: { callId: number; text: string } | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * The input handler of request `requestId`'s cell. `live` says whether the request is still open: a reply to a
   * cell that has ended would only wait in the kernel as a stale answer.
   */
  handlerFor(requestId: number, hooks: RequestHooks, live: () => boolean): InputHandler {
    return (prompt, reply) => {
      const guarded = (value: string): void => {
        if (live()) reply(value);
      };
      if (!prompt.startsWith(TOOL_CALL_PROMPT_PREFIX)) {
        // The agent's own input() (the kernel side makes it read "" without asking; getpass and the like ask).
        guarded('');
        return;
      }
      let raw: unknown;
      try {
        raw = JSON.parse(prompt.slice(TOOL_CALL_PROMPT_PREFIX.length));
      } catch {
        raw = undefined;
      }
      const call = parseWorkerMessage(raw);
      if (call?.type !== 'tool_call' || call.id !== requestId) {
        this.#logger.warn('kernel.invalid_tool_call', {});
        guarded('');
        return;
      }
      if (this.#last?.callId === call.call_id) {
        guarded(this.#last.text);
        return;
      }
      this.#open.set(call.call_id, guarded);
      if (hooks.onToolCall === undefined) {
        this.answer(call.call_id, { ok: false, message: 'tool calls are not available here' });
        return;
      }
      hooks.onToolCall(call);
    };
  }

  /** Sends the host's answer to call `callId`; an answer to a call no longer open is dropped. */
  answer(callId: number, result: ToolAnswer): void {
    const reply = this.#open.get(callId);
    if (reply === undefined) return;
    this.#open.delete(callId);
    let text = JSON.stringify(
      result.ok ? { type: 'tool_result', call_id: callId, ok: true, value_json: result.valueJson } : { type: 'tool_result', call_id: callId, ok: false, message: result.message },
    );
    const size = Buffer.byteLength(text, 'utf8');
    if (size > STDIN_ANSWER_LIMIT_BYTES) {
      const message = `the tool's result is ${size} bytes, over the ${STDIN_ANSWER_LIMIT_BYTES}-byte limit of an answer on a kernel's stdin channel`;
      text = JSON.stringify({ type: 'tool_result', call_id: callId, ok: false, message });
    }
    this.#last = { callId, text };
    try {
      reply(text);
    } catch (error) {
      this.#logger.warn('kernel.input_reply_failed', { reason: (error as Error).message.slice(0, 200) });
    }
  }

  /** Forgets every open call (the worker ended). */
  clear(): void {
    this.#open.clear();
  }
}

/**
 * The kernel side's guard of its own machine (python/ipython_mcp_worker/kernel/machine_guard.py): the memory limit
 * of the kernel's process tree while an agent's cell runs, and the grace after an interrupt past which the processes
 * that cell started are ended.
 */
export interface MachineGuardOptions {
  /** MiB the kernel and its processes may hold while an agent's cell runs; null: the memory guard is off. */
  readonly memoryLimitMb: number | null;
  /** After an interrupt of the agent's cell, how long it may still run before the processes it started are ended. */
  readonly graceMs: number;
}

/** The `kernel_guard` field the comm's opening data carries beside the configure message (none without options). */
export function machineGuardConfigure(options: MachineGuardOptions | undefined): Record<string, unknown> {
  if (options === undefined) return {};
  const memory = options.memoryLimitMb === null ? {} : { memory_limit_bytes: options.memoryLimitMb * 1024 * 1024 };
  return { kernel_guard: { ...memory, grace_ms: options.graceMs } };
}
