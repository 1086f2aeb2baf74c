import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, type TestServer } from './harness.js';

/**
 * Catalog reconciliation by registry revision, end to end: the built binary, a real client, a real worker. A
 * worker that sends `catalog_revision` on its responses spares the server a `discover` after every execute that
 * touches no registration; an older worker that does not send it gets one per execute (the fallback). Both must
 * keep the catalog correct, so this asserts correctness either way and that the count is one of the two; the exact
 * zero is pinned without Python in packages/mcp-server/src/tools/reconcile.test.ts.
 */

const EXECUTES = 5;

/** The `discover` operations the server ran, from its metadata-only debug log on stderr. */
function discoverCount(server: TestServer): number {
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"event":"op.done"') && line.includes('"op":"discover"')).length;
}

/**
 * The discover count once the server's log has caught up. The log comes on stderr, a pipe apart from the protocol
 * on stdout: the line of a discover that finished before a result can still be on its way when the result is read.
 */
async function settledDiscoverCount(server: TestServer): Promise<number> {
  let count = discoverCount(server);
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = discoverCount(server);
    if (now === count) return now;
    count = now;
  }
  return count;
}

function structuredOf(result: CallToolResult): Record<string, any> {
  if (result.isError) throw new Error(`unexpected failure: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Record<string, any>;
}

describe('dynamic tools registered, executes that do not touch them', () => {
  let server: TestServer;
  let notifications = 0;
  beforeAll(async () => {
    server = await startServer({ IPYTHON_MCP_LOG_LEVEL: 'debug' });
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notifications += 1;
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('cost at most one discover each (none with catalog_revision), and the catalog stays correct', async () => {
    structuredOf(await server.call('execute', { code: 'def triple(x: int) -> int:\n    return 3 * x' }));
    structuredOf(await server.call('register_tool', { name: 'triple' }));
    expect((await server.client.listTools()).tools.map((tool) => tool.name)).toContain('triple');
    const before = await settledDiscoverCount(server);
    for (let index = 0; index < EXECUTES; index += 1) structuredOf(await server.call('execute', { code: `unrelated_${index} = ${index}` }));
    const spent = (await settledDiscoverCount(server)) - before;
    expect([0, EXECUTES]).toContain(spent);
    expect(structuredOf(await server.call('triple', { x: 2 })).value).toBe(6);
    expect((await server.client.listTools()).tools.map((tool) => tool.name)).toContain('triple');
  });

  it('an incompatible redefinition is still seen at once: the tool goes stale, with a notification', async () => {
    const seen = notifications;
    structuredOf(await server.call('execute', { code: 'def triple(x: str) -> str:\n    return x * 3' }));
    // The server reconciles before answering the execute, so the notification is already out or on its way.
    const deadline = Date.now() + 5000;
    while (notifications === seen && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(notifications).toBeGreaterThan(seen);
    expect((await server.client.listTools()).tools.map((tool) => tool.name)).not.toContain('triple');
    const stale = await server.call('triple', { x: 2 });
    expect(stale.isError).toBe(true);
    expect((stale.structuredContent as Record<string, any>).error.code).toBe('stale_registration');
  });
});
