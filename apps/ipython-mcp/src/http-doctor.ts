import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tokenFilePath } from './http-command.js';

/**
 * `ipython-mcp doctor --url URL`: connects to a running `--http` server as a client would (bearer token from
 * IPYTHON_MCP_HTTP_TOKEN, else the token file) and reports its namespace, sessions and runtime state. Returns the
 * exit code: 0 when it answered runtime_status, 1 otherwise (with the fix in the line).
 */
export async function doctorHttp(url: string): Promise<number> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    process.stdout.write(`FAIL http: ${JSON.stringify(url.slice(0, 200))} is not a URL. Fix: pass the server's banner URL, e.g. http://127.0.0.1:8765/mcp.\n`);
    return 1;
  }
  const fromEnv = process.env.IPYTHON_MCP_HTTP_TOKEN !== undefined && process.env.IPYTHON_MCP_HTTP_TOKEN.trim() !== '';
  const token = fromEnv ? (process.env.IPYTHON_MCP_HTTP_TOKEN as string).trim() : tokenIfPresent();
  const tokenSource = fromEnv ? 'IPYTHON_MCP_HTTP_TOKEN' : tokenFilePath();
  const transport = new StreamableHTTPClientTransport(target, token === undefined ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'ipython-mcp-doctor', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: 15_000 });
    const result = await client.callTool({ name: 'runtime_status', arguments: {} }, undefined, { timeout: 15_000 });
    const status = (result.structuredContent ?? {}) as Record<string, unknown>;
    const server = client.getServerVersion();
    process.stdout.write(
      `ok   http: ${target.href} answers (${server?.name ?? 'server'} ${server?.version ?? '?'}; namespace ${String(status.namespace)}, ` +
        `${String(status.sessions)} open sessions, state ${String(status.state)}, epoch ${String(status.epoch)}; token from ${tokenSource})\n`,
    );
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const fix = /\b401\b|unauthorized/i.test(message)
      ? `the token was refused; set IPYTHON_MCP_HTTP_TOKEN to the server's token (or run doctor as the user whose ${tokenFilePath()} the server uses)`
      : /\b403\b|forbidden/i.test(message)
        ? 'the server refused this Host; use the address from its ready banner, or start it with --http-allow-host NAME for the name you dial'
        : /certificate|self.signed|CERT_|SSL|TLS/i.test(message + String((error as { cause?: unknown }).cause ?? ''))
          ? 'the TLS certificate is not trusted here; for a self-signed one, point NODE_EXTRA_CA_CERTS at its PEM file (docs/clients.md)'
        : /ECONNREFUSED|fetch failed/.test(message)
          ? 'nothing answers there; start it with `ipython-mcp --http PORT` and use the URL its banner prints'
            : 'check the URL and the server\'s stderr';
    process.stdout.write(`FAIL http: ${target.href} did not answer runtime_status (${message.slice(0, 200)}). Fix: ${fix}.\n`);
    return 1;
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

/** The token file's token, without creating one (doctor only reads). */
function tokenIfPresent(): string | undefined {
  try {
    return readFileSync(tokenFilePath(), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
