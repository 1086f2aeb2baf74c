// ipython-code-mode re-exports every public error class of the engine, so a user catching one needs only this
// package: the two lists of Error subclasses must be the same.
import * as engine from '@ipython-mcp/code-mode';
import { describe, expect, it } from 'vitest';
import * as app from '../src/index.js';

function errorClasses(exports: Record<string, unknown>): string[] {
  return Object.entries(exports)
    .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
    .map(([name]) => name)
    .sort();
}

describe('error classes', () => {
  it('the app exports exactly the error classes the engine exports', () => {
    const engineErrors = errorClasses(engine);
    expect(engineErrors.length).toBeGreaterThan(10);
    // The app's own errors (an MCP tool's failure, a refusal by the host's approval callback) come on top of the engine's.
    const own = ['McpToolError', 'ToolApprovalRefusedError'];
    expect(errorClasses(app).filter((name) => !own.includes(name))).toEqual(engineErrors);
  });

  it('each re-export is the engine class itself, so instanceof holds across the two packages', () => {
    for (const name of errorClasses(engine)) expect((app as Record<string, unknown>)[name], name).toBe((engine as Record<string, unknown>)[name]);
  });
});
