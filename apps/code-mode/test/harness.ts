export { isAlive, survivors, testPython } from '@ipython-mcp/test-support';
import { generateText, stepCountIs, type StopCondition, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** One run_code call the scripted model makes. */
export interface CodeCall {
  code: string;
  restart?: boolean;
}

/** A tool result as the model received it in its next prompt. */
export interface SeenOutput {
  toolCallId: string;
  toolName: string;
  output: { type: string; value: unknown };
}

/** What a scripted run produced. */
export interface ScriptedRun {
  /** Per step, the outputs of that step's calls as the model saw them. */
  seen: SeenOutput[][];
  /** The generateText result. */
  result: Awaited<ReturnType<typeof generateText>>;
  /** The mock model, with every call it got. */
  model: MockLanguageModelV3;
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

/** One step of a script: the run_code calls (or other tool calls) the mock model makes in it. */
export type ScriptStep = Array<CodeCall | { tool: string; input: Record<string, unknown> }>;

/**
 * A mock model that, at step i, calls the tools in `steps[i]` (several calls in a step run in parallel, as the
 * SDK runs them), then answers "done".
 */
export function scriptedModel(steps: ScriptStep[]): MockLanguageModelV3 {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const calls = steps[step];
      step += 1;
      if (calls === undefined) {
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      }
      return {
        content: calls.map((call, index) => ({
          type: 'tool-call' as const,
          toolCallId: `call-${step}-${index}`,
          toolName: 'tool' in call ? call.tool : 'run_code',
          input: JSON.stringify('tool' in call ? call.input : call),
        })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

/** Drives a real AI SDK `generateText` loop with {@link scriptedModel}. */
export async function runScript(
  tools: ToolSet,
  steps: ScriptStep[],
  stopWhen: StopCondition<ToolSet>[] = [],
): Promise<ScriptedRun> {
  const model = scriptedModel(steps);
  const result = await generateText({ model, tools, prompt: 'go', stopWhen: [stepCountIs(steps.length + 1), ...stopWhen] });
  const seen: SeenOutput[][] = [];
  for (let index = 1; index < model.doGenerateCalls.length; index += 1) {
    const prompt = model.doGenerateCalls[index]?.prompt ?? [];
    const last = prompt[prompt.length - 1];
    const parts = last?.role === 'tool' ? last.content : [];
    seen.push(
      parts
        .filter((part) => part.type === 'tool-result')
        .map((part) => ({ toolCallId: part.toolCallId, toolName: part.toolName, output: part.output as SeenOutput['output'] })),
    );
  }
  return { seen, result, model };
}

/** The single output the model saw for step `index`'s only call. */
export function only(run: ScriptedRun, index: number): SeenOutput['output'] {
  const outputs = run.seen[index];
  if (outputs === undefined || outputs.length !== 1) throw new Error(`step ${index} has ${outputs?.length ?? 0} outputs, not 1`);
  return outputs[0]!.output;
}

