// A runnable example agent: `pnpm --filter ipython-code-mode build && node dist/example.js`.
//
// It needs a real model. With AI_GATEWAY_API_KEY set it uses the AI SDK's gateway provider (part of `ai`), model
// CODE_MODE_MODEL (default anthropic/claude-sonnet-4.5). With OPENAI_API_KEY set and @ai-sdk/openai installed it
// uses OpenAI (CODE_MODE_MODEL, default gpt-4.1-mini). With neither, it says so and exits.
//
// Not a sandbox: the model's code runs on this machine with your permissions.
import { pathToFileURL } from 'node:url';
import { generateText, jsonSchema, stepCountIs, tool, type LanguageModel } from 'ai';
import { IPythonKernel, ipythonCodeMode } from './index.js';

const SALES: Record<string, number[]> = {
  north: [1200, 1350, 1500, 1480, 1620, 1710],
  south: [900, 870, 950, 1010, 990, 1100],
};

/** The example's one tool: monthly sales totals of a region. */
export const getSales = tool({
  description: 'Get the monthly sales totals (January first) for a region: north or south.',
  inputSchema: jsonSchema<{ region: string }>({
    type: 'object',
    properties: { region: { type: 'string', enum: Object.keys(SALES), description: 'The sales region.' } },
    required: ['region'],
    additionalProperties: false,
  }),
  execute: ({ region }) => (SALES[region] ?? []).map((total, index) => ({ month: index + 1, total })),
});

async function chooseModel(): Promise<LanguageModel | undefined> {
  if (process.env.AI_GATEWAY_API_KEY) return process.env.CODE_MODE_MODEL ?? 'anthropic/claude-sonnet-4.5';
  if (process.env.OPENAI_API_KEY) {
    const packageName = '@ai-sdk/openai';
    try {
      const { openai } = (await import(packageName)) as { openai: (model: string) => LanguageModel };
      return openai(process.env.CODE_MODE_MODEL ?? 'gpt-4.1-mini');
    } catch {
      process.stderr.write('OPENAI_API_KEY is set, but @ai-sdk/openai is not installed: install it, or set AI_GATEWAY_API_KEY.\n');
      return undefined;
    }
  }
  return undefined;
}

/**
 * Runs the example conversation on `model`: two prompts sharing one kernel, so the second reuses what the first
 * loaded. Writes the answers and the code the model ran through `write`.
 */
export async function runExample(model: LanguageModel, write: (text: string) => void, python?: string): Promise<void> {
  await using kernel = new IPythonKernel(python === undefined ? {} : { python });
  const prompts = [
    'Load the monthly sales of the north and south regions into a pandas DataFrame named `sales` (or plain lists if pandas is missing) and compare their growth.',
    'Using the data you already loaded, which region had the larger single-month increase, and in which month?',
  ];
  for (const prompt of prompts) {
    await using codeMode = await ipythonCodeMode({ tools: { get_sales: getSales }, kernel });
    const result = await generateText({
      model,
      tools: codeMode.tools,
      stopWhen: stepCountIs(10),
      system: 'You are a data analyst. Use run_code to compute answers; keep the final answer short.',
      prompt,
    });
    for (const step of result.steps) {
      for (const call of step.toolCalls) {
        const input = call.input as { code?: unknown };
        if (typeof input.code === 'string') write(`\n[run_code]\n${input.code}\n`);
      }
    }
    write(`\n> ${prompt}\n${result.text}\n`);
  }
}

async function main(): Promise<number> {
  const model = await chooseModel();
  if (model === undefined) {
    process.stdout.write(
      'No model configured. Set AI_GATEWAY_API_KEY (Vercel AI Gateway, included in `ai`) or OPENAI_API_KEY with ' +
        '@ai-sdk/openai installed, then run this example again. Optionally set CODE_MODE_MODEL.\n',
    );
    return 0;
  }
  await runExample(model, (text) => process.stdout.write(text));
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
