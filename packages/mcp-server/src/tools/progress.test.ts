import { describe, expect, it } from 'vitest';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { progressReporter } from './progress.js';

function recorder(): { messages: string[]; send: (notification: ServerNotification) => Promise<void> } {
  const messages: string[] = [];
  return {
    messages,
    send: async (notification) => {
      messages.push(String((notification.params as { message?: string }).message));
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('progressReporter', () => {
  it('sends whole lines only, labelling each run of lines by its stream', async () => {
    const { messages, send } = recorder();
    const reporter = progressReporter('token', send)!;
    reporter.onEvent({ type: 'event', id: 1, kind: 'stdout', text: 'step 0\nstep' });
    reporter.onEvent({ type: 'event', id: 1, kind: 'stderr', text: 'warn\n' });
    await sleep(450);
    expect(messages).toEqual(['[stdout] step 0\n[stderr] warn']);
    reporter.onEvent({ type: 'event', id: 1, kind: 'stdout', text: ' 1\nstep 2\n' });
    await sleep(450);
    expect(messages).toEqual(['[stdout] step 0\n[stderr] warn', '[stdout] step 1\nstep 2']);
    await reporter.settle();
  });

  it('sends a line longer than a message in pieces rather than holding it forever', async () => {
    const { messages, send } = recorder();
    const reporter = progressReporter('token', send)!;
    reporter.onEvent({ type: 'event', id: 1, kind: 'stdout', text: 'x'.repeat(5000) });
    await sleep(450);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.length).toBeLessThanOrEqual(4096);
    expect(messages[0]!.startsWith('[stdout] xxx')).toBe(true);
    await reporter.settle();
  });

  it('sends nothing without a progress token', () => {
    expect(progressReporter(undefined, async () => undefined)).toBeUndefined();
  });
});
