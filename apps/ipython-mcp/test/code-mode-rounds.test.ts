// The 2026-07-28 consent rounds without a server: a run that asks answers `input_required`; the retried call with
// the answer resumes it; a state it did not hand out, or one already answered, is refused; a cancelled round stops
// the run; a client without elicitation is never asked.
import type { AskConsent, ConsentAnswer } from '@ipython-mcp/code-mode';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsentRounds, type InputRequiredAnswer, type RoundAnswer } from '../src/code-mode-rounds.js';

const CAN_ASK = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } }, 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } };
const question = { server: 'fs', toolName: 'write', functionName: 'write', input: { path: 'x' }, reason: 'it may change things' };

/** A run that asks `times` questions in a row and reports the answers it got. */
function asking(times: number, answers: ConsentAnswer[]): (ask: AskConsent, signal: AbortSignal) => Promise<CallToolResult> {
  return async (ask, signal) => {
    for (let index = 0; index < times; index += 1) answers.push(await ask(question, signal));
    return { content: [{ type: 'text', text: answers.map((answer) => answer.answer).join(',') }] };
  };
}

const open = (state?: string, responses?: Record<string, unknown>, envelope: Record<string, unknown> | undefined = CAN_ASK) => ({
  requestState: state,
  inputResponses: responses,
  envelope,
  signal: new AbortController().signal,
});
const isQuestion = (answer: RoundAnswer): answer is InputRequiredAnswer => 'resultType' in answer;

let rounds: ConsentRounds;
afterEach(() => rounds?.close());

describe('ConsentRounds', () => {
  it('asks with input_required, resumes the run with each answer, and ends with its result', async () => {
    rounds = new ConsentRounds();
    const answers: ConsentAnswer[] = [];
    const start = asking(2, answers);
    const first = await rounds.round(open(), start);
    expect(isQuestion(first)).toBe(true);
    const ask = first as InputRequiredAnswer;
    expect(ask.inputRequests.consent?.method).toBe('elicitation/create');
    expect(JSON.stringify(ask.inputRequests.consent?.params)).toContain('the tool \\"write\\" of the MCP server \\"fs\\"');
    const second = await rounds.round(open(ask.requestState, { consent: { action: 'accept', content: { answer: 'yes' } } }), start);
    expect(isQuestion(second)).toBe(true);
    const done = await rounds.round(open((second as InputRequiredAnswer).requestState, { consent: { action: 'decline' } }), start);
    expect(done).toEqual({ content: [{ type: 'text', text: 'yes,no' }] });
    expect(answers[1]).toMatchObject({ answer: 'no', dismissed: true, by: 'the MCP client "c" (it declined the question)' });
    // The state was used up: a replay is refused, and so is one never handed out.
    for (const state of [ask.requestState, 'made-up']) {
      const refused = await rounds.round(open(state, { consent: { action: 'accept', content: { answer: 'yes' } } }), start);
      expect(refused).toMatchObject({ isError: true });
    }
  });

  it('never asks a client without elicitation, and reads a retried call without an answer as no', async () => {
    rounds = new ConsentRounds();
    const silentAnswers: ConsentAnswer[] = [];
    const silent = await rounds.round(open(undefined, undefined, { 'io.modelcontextprotocol/clientInfo': { name: 'c' } }), asking(1, silentAnswers));
    expect(silent).toEqual({ content: [{ type: 'text', text: 'cannot-ask' }] });
    expect(silentAnswers[0]).toMatchObject({ why: 'the MCP client "c" cannot ask the person (it does not declare the elicitation capability)' });
    const answers: ConsentAnswer[] = [];
    const waiting = await rounds.round(open(), asking(1, answers));
    const done = await rounds.round(open((waiting as InputRequiredAnswer).requestState), async () => {
      throw new Error('a retried call resumes its run; it never starts another');
    });
    expect(done).toEqual({ content: [{ type: 'text', text: 'no' }] });
    expect(answers[0]).toMatchObject({ dismissed: true, by: 'the MCP client "c" (it gave no answer)' });
  });
});
