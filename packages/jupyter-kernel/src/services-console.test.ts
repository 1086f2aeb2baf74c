// The Jupyter client library's console lines as events of our log (services-console.ts): the level each gets, no
// token or query in any of them, nothing on stdout, and nothing at all at `--log-level error`.
import { createStderrLogger, type LogLevel } from '@ipython-mcp/worker-supervisor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installServicesConsole, logServicesConsoleTo, redactedMessage } from './services-console.js';

const WS = 'ws://127.0.0.1:8888/api/kernels/5b1e/channels?session_id=abc&token=hunter2';

/** Logs to a list at `level`, as the CLI's logger writes to stderr; returns the parsed events. */
function logTo(level: LogLevel): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  logServicesConsoleTo(createStderrLogger(level, (line) => events.push(JSON.parse(line) as Record<string, unknown>)));
  return events;
}

/** The library's lines, through the methods it calls them with. */
function libraryLines(): void {
  console.debug(`Starting WebSocket: ${WS}`);
  console.error('Comm not found for comm id ' + 'c0ffee');
  console.warn(`Connection lost, reconnecting in ${4} seconds.`);
  console.log('Server selected unknown kernel wire protocol:', 'v9');
  console.debug('Kernel: idle (5b1e)');
  console.error(new Error(`bad message from ${WS}`));
}

describe('the Jupyter client library’s console lines', () => {
  const stdout = vi.spyOn(process.stdout, 'write');
  afterEach(() => stdout.mockClear());

  it('become JSON events of our log at a fitting level, the reconnect a warn', () => {
    const events = logTo('debug');
    libraryLines();
    expect(events.map((event) => [event.level, event.event, event.console])).toEqual([
      ['debug', 'jupyter.websocket_opening', 'debug'],
      ['debug', 'jupyter.comm_not_found', 'error'],
      ['warn', 'jupyter.reconnecting', 'warn'],
      ['debug', 'jupyter.client', 'log'],
      ['debug', 'jupyter.kernel_status', 'debug'],
      ['info', 'jupyter.client', 'error'],
    ]);
    expect(events[0]!.message).toBe('Starting WebSocket: ws://127.0.0.1:8888/api/kernels/5b1e/channels');
    expect(events[2]!.message).toBe('Connection lost, reconnecting in 4 seconds.');
    for (const event of events) {
      expect(JSON.stringify(event)).not.toContain('hunter2');
      expect(JSON.stringify(event)).not.toContain('session_id');
    }
    expect(stdout).not.toHaveBeenCalled();
  });

  it('are all quiet at --log-level error, and at warn only the reconnect is said', () => {
    const quiet = logTo('error');
    libraryLines();
    expect(quiet).toEqual([]);
    const warned = logTo('warn');
    libraryLines();
    expect(warned.map((event) => event.event)).toEqual(['jupyter.reconnecting']);
    expect(stdout).not.toHaveBeenCalled();
  });

  it('installing twice replaces the console once', () => {
    const debug = console.debug;
    installServicesConsole();
    expect(console.debug).toBe(debug);
  });
});

describe('redactedMessage', () => {
  it('cuts every URL to scheme, host and path and any token, and bounds the text', () => {
    expect(redactedMessage(['to', 'https://user:pw@host:1/base/?token=t#frag', 'and', WS])).toBe(
      'to https://host:1/base/ and ws://127.0.0.1:8888/api/kernels/5b1e/channels',
    );
    expect(redactedMessage(['query was ?a=1&token=secret&b=2'])).toBe('query was ?a=1&token=…&b=2');
    expect(redactedMessage(['x'.repeat(1000)])).toHaveLength(301);
  });
});
