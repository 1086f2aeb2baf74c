/** Log levels, quietest last. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Metadata-only structured logger. Never pass code, arguments, results or namespace values. */
export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A logger that writes one JSON line per event to stderr (never stdout: the MCP channel is stdout).
 */
export function createStderrLogger(level: LogLevel, write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const threshold = ORDER[level];
  const emit = (eventLevel: LogLevel) => (event: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[eventLevel] < threshold) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: eventLevel, event, ...fields })}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
