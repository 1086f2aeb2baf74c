import { randomBytes } from 'node:crypto';
import type { AskConsent, ConsentAnswer, ConsentQuestion } from '@ipython-mcp/code-mode';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ASK_TIMEOUT_MS, canElicitForm, cannotElicit, consentAnswerOf, consentElicitation } from './code-mode-consent.js';

/** The key of the one embedded request a consent round carries. */
const INPUT_KEY = 'consent';
/** Runs waiting for an answer at once, at most: a client that never answers cannot pile them up. */
const MAX_WAITING = 64;

/** The 2026-07-28 `input_required` answer to a tools/call (multi-round-trip requests). */
export interface InputRequiredAnswer {
  resultType: 'input_required';
  inputRequests: Record<string, { method: 'elicitation/create'; params: Record<string, unknown> }>;
  requestState: string;
}

/** What one round of a tools/call answers: the call's result, or a question for the person. */
export type RoundAnswer = CallToolResult | InputRequiredAnswer;

/** The request a round comes from, as the v2 SDK's server hands it to a handler. */
export interface RoundRequest {
  /** The retried call's `requestState` (undefined on a first call). */
  requestState: string | undefined;
  /** The retried call's `inputResponses`. */
  inputResponses: Record<string, unknown> | undefined;
  /** The request's `_meta` envelope (client capabilities and info). */
  envelope: Record<string, unknown> | undefined;
  signal: AbortSignal;
}

/** One run_code call that spans several rounds: its result once done, or the question it waits on. */
interface WaitingRun {
  done: Promise<CallToolResult>;
  /** A question the run put while no round was listening. */
  question: ConsentQuestion | undefined;
  /** Set while a round listens for the run's next question. */
  onQuestion: ((question: ConsentQuestion) => void) | undefined;
  /** Answers the question the run waits on. */
  answer: (answer: ConsentAnswer) => void;
  /** Stops the run (the client cancelled a round). */
  abort: AbortController;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Consent questions on protocol 2026-07-28, where a server asks nothing on its own: a run_code call whose nested call
 * needs the person's yes answers the tools/call with `input_required` (an embedded `elicitation/create`) and a
 * `requestState` naming the run, which keeps waiting in the kernel; the client asks the person and calls again with
 * the answer and that state, and the run goes on, to its result or the next question. A state this server did not
 * hand out is refused; a run nobody answers within {@link ASK_TIMEOUT_MS} is told "no".
 */
export class ConsentRounds {
  private readonly waiting = new Map<string, WaitingRun>();

  /** One round of run_code: `start` runs the code with the `ask` this round machinery answers. */
  async round(request: RoundRequest, start: (ask: AskConsent, signal: AbortSignal) => Promise<CallToolResult>): Promise<RoundAnswer> {
    const capabilities = request.envelope?.['io.modelcontextprotocol/clientCapabilities'];
    const clientName = (request.envelope?.['io.modelcontextprotocol/clientInfo'] as { name?: unknown } | undefined)?.name;
    const name = typeof clientName === 'string' ? clientName : undefined;
    if (request.requestState !== undefined) {
      const run = this.waiting.get(request.requestState);
      if (run === undefined) return refusedState();
      this.waiting.delete(request.requestState);
      clearTimeout(run.timer);
      run.answer(consentAnswerOf(request.inputResponses?.[INPUT_KEY], name));
      return this.whileOpen(request.signal, run);
    }
    const run = this.startRun(start, canElicitForm(capabilities), name);
    return this.whileOpen(request.signal, run);
  }

  /**
   * The round's answer. A round's request being cancelled stops the run, but only while that round is open: once it
   * answered (a question, say), its request is over (over HTTP the SDK aborts its signal then) and the run waits on.
   */
  private async whileOpen(signal: AbortSignal, run: WaitingRun): Promise<RoundAnswer> {
    const stop = (): void => run.abort.abort();
    if (signal.aborted) stop();
    signal.addEventListener('abort', stop, { once: true });
    try {
      return await this.next(run);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /** Tells every waiting run "no" (the server is closing). */
  close(): void {
    for (const [state, run] of this.waiting) {
      clearTimeout(run.timer);
      run.abort.abort();
      this.waiting.delete(state);
    }
  }

  private startRun(start: (ask: AskConsent, signal: AbortSignal) => Promise<CallToolResult>, canAsk: boolean, clientName: string | undefined): WaitingRun {
    const run: WaitingRun = { done: Promise.resolve({ content: [] }), question: undefined, onQuestion: undefined, answer: () => undefined, abort: new AbortController(), timer: undefined };
    // The kernel makes one nested call at a time, so a run has at most one question out. It may ask before a round
    // listens (at once, on its first line): the question then waits in `question` for the round.
    const ask: AskConsent = (question, signal) => {
      if (!canAsk) return Promise.resolve(cannotElicit(clientName));
      return new Promise<ConsentAnswer>((resolve) => {
        run.answer = resolve;
        const cancelled = (): void => resolve({ answer: 'no', by: 'nobody (the call was cancelled)' });
        if (signal?.aborted) return cancelled();
        signal?.addEventListener('abort', cancelled, { once: true });
        if (run.onQuestion !== undefined) run.onQuestion(question);
        else run.question = question;
      });
    };
    run.done = start(ask, run.abort.signal);
    return run;
  }

  /** The run's next question: one it already put, or the next it puts. */
  private nextQuestion(run: WaitingRun): Promise<ConsentQuestion> {
    const put = run.question;
    if (put !== undefined) {
      run.question = undefined;
      return Promise.resolve(put);
    }
    return new Promise<ConsentQuestion>((resolve) => {
      run.onQuestion = (question) => {
        run.onQuestion = undefined;
        resolve(question);
      };
    });
  }

  private async next(run: WaitingRun): Promise<RoundAnswer> {
    const outcome = await Promise.race([run.done.then((result) => ({ result })), this.nextQuestion(run).then((question) => ({ question }))]);
    if ('result' in outcome) return outcome.result;
    if (this.waiting.size >= MAX_WAITING) {
      run.answer({ answer: 'cannot-ask', why: `${MAX_WAITING} other calls already wait for an answer` });
      return this.next(run);
    }
    const state = randomBytes(18).toString('base64url');
    run.timer = setTimeout(() => {
      if (this.waiting.delete(state)) run.answer({ answer: 'no', by: `nobody (no answer came within ${ASK_TIMEOUT_MS / 60_000} minutes)` });
    }, ASK_TIMEOUT_MS);
    run.timer.unref();
    this.waiting.set(state, run);
    return {
      resultType: 'input_required',
      inputRequests: { [INPUT_KEY]: { method: 'elicitation/create', params: consentElicitation(outcome.question) } },
      requestState: state,
    };
  }
}

function refusedState(): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: 'this requestState names no run_code call waiting for an answer (it ended, was answered already, or was never handed out)' }],
  };
}
