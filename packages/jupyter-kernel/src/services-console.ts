/**
 * The Jupyter client library's own lines, as events of our log.
 *
 * `@jupyterlab/services` has no logger of its own: it calls the global `console` from its WebSocket and message
 * callbacks: `Starting WebSocket: ws://…` with `console.debug`, `Comm not found for comm id …` with `console.error`,
 * `Connection lost, reconnecting in 4 seconds.` with `console.warn`, a few with `console.log`. In Node `console.debug`,
 * `console.log` and `console.info` write to stdout, the MCP channel; `warn` and `error` write bare lines to stderr, at
 * every log level. The calls come from event callbacks, long after any call of ours returned, so no replacement scoped
 * around a call of ours could catch them, and the bundled CLI leaves no package path on the stack to tell them apart.
 * So, once per process that talks to a Jupyter server, the five methods are replaced: each line becomes one event
 * of the logger given to {@link logServicesConsoleTo} (our code never uses `console`: the lint forbids it), at a
 * level that fits, with every URL cut to scheme, host and path (the WebSocket URL carries the token in its query).
 */
import { format } from 'node:util';
import type { Logger } from '@ipython-mcp/worker-supervisor';
import { redactUrl } from './errors.js';

type ConsoleMethod = 'debug' | 'log' | 'info' | 'warn' | 'error';
const METHODS: readonly ConsoleMethod[] = ['debug', 'log', 'info', 'warn', 'error'];

/** The longest message an event carries. */
const MAX_MESSAGE_CHARS = 300;

/** Known lines of the library: the event and level each becomes. The rest: `jupyter.client`, debug or info. */
const KNOWN: ReadonlyArray<{ pattern: RegExp; event: string; level: keyof Logger }> = [
  { pattern: /^Connection lost, reconnecting/, event: 'jupyter.reconnecting', level: 'warn' },
  { pattern: /^Starting WebSocket/, event: 'jupyter.websocket_opening', level: 'debug' },
  { pattern: /^Comm not found for comm id/, event: 'jupyter.comm_not_found', level: 'debug' },
  { pattern: /^Kernel: /, event: 'jupyter.kernel_status', level: 'debug' },
];

let installed = false;
let sink: Logger | undefined;

/** Sends the library's console lines to `logger` from now on (the latest logger given wins: one per process). */
export function logServicesConsoleTo(logger: Logger): void {
  sink = logger;
  installServicesConsole();
}

/**
 * Replaces the console methods the library uses, once per process. Until a logger is given, a line keeps to stderr
 * as a plain line (never stdout), as an embedder without a logger would expect.
 */
export function installServicesConsole(): void {
  if (installed) return;
  installed = true;
  const original = { warn: console.warn.bind(console), error: console.error.bind(console) };
  for (const method of METHODS) {
    console[method] = (...values: unknown[]): void => {
      const message = redactedMessage(values);
      if (sink === undefined) {
        if (method === 'warn' || method === 'error') original[method](message);
        else process.stderr.write(`${message}\n`);
        return;
      }
      const known = KNOWN.find((entry) => entry.pattern.test(message));
      const level = known?.level ?? (method === 'warn' || method === 'error' ? 'info' : 'debug');
      sink[level](known?.event ?? 'jupyter.client', { message, console: method });
    };
  }
}

/** The line the library formed, every URL in it cut to scheme, host and path, bounded. */
export function redactedMessage(values: unknown[]): string {
  const text = format(...values).replace(/\b(?:https?|wss?):\/\/[^\s'"<>]+/g, (url) => redactUrl(url));
  // A token outside a URL (a message quoting a query string) is cut too.
  const cut = text.replace(/([?&]token=)[^&\s'"]*/gi, '$1…');
  return cut.length > MAX_MESSAGE_CHARS ? `${cut.slice(0, MAX_MESSAGE_CHARS)}…` : cut;
}
