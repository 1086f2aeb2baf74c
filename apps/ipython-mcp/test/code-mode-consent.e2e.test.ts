// Consent for Code Mode's nested calls, through real MCP clients that can ask the person (an elicitation handler
// stands in for the person): a tool the policy allows, one asked about and allowed, one refused (nothing ran
// upstream: the fixture server logs every call it starts), one allowed for the rest of the session, a client that
// cannot ask, and a refusal set in the servers file. Both protocol eras (2025-11-25 `elicitation/create` from the
// server; 2026-07-28 `input_required` rounds), over stdio (the `ipython-mcp code-mode` binary) and over Streamable
// HTTP (the same server class behind each era's SDK HTTP transport, in this process).
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttpClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServersFile } from '../src/code-mode-config.js';
import { CodeModeMcpServer } from '../src/code-mode-server.js';
import { CLI, testPython, waitForExit } from './harness.js';

const UPSTREAM = fileURLToPath(new URL('./fixtures/upstream-server.mjs', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'code-mode-consent-'));

type Era = '2025-11-25' | '2026-07-28';
type Over = 'stdio' | 'http';

/** What the stand-in person answers, in order; and what they were asked. */
interface Person {
  answers: string[];
  asked: Array<{ message: string; requestedSchema: unknown }>;
}

/** A connection to a Code Mode server over the `notes` fixture, with the log of what ran upstream. */
interface Connection {
  call(code: string): Promise<CallToolResult>;
  /** The upstream tools that started, in order. */
  ran(): string[];
  close(): Promise<void>;
}

/** A servers file over the fixture's note tools, with `purge` refused in the file; its own call log. */
function serversFile(): { file: string; log: string } {
  const name = randomUUID();
  const log = join(directory, `${name}.log`);
  const file = join(directory, `${name}.json`);
  const env = { UPSTREAM_LABEL: 'notes', UPSTREAM_CONSENT_TOOLS: '1', UPSTREAM_CALL_LOG: log };
  writeFileSync(file, JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [UPSTREAM], env, consent: { tools: { purge: 'refuse' } } } } }));
  return { file, log };
}

function ranIn(log: string): () => string[] {
  return () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { tool: string }).tool) : []);
}

/** The elicitation handler of the stand-in person: the next answer, or a decline when none is left. */
function answer(person: Person, params: { message: string; requestedSchema?: unknown }): { action: 'accept' | 'decline'; content?: { answer: string } } {
  person.asked.push({ message: params.message, requestedSchema: params.requestedSchema });
  const next = person.answers.shift();
  return next === undefined ? { action: 'decline' } : { action: 'accept', content: { answer: next } };
}

/** A client of either era on a transport; `person` undefined: a client without the elicitation capability. */
async function client(era: Era, transport: () => unknown, person: Person | undefined): Promise<{ call: Connection['call']; close: () => Promise<void> }> {
  const capabilities = person === undefined ? {} : { elicitation: { form: {} } };
  if (era === '2025-11-25') {
    const legacy = new LegacyClient({ name: 'consent-test', version: '1' }, { capabilities });
    if (person !== undefined) legacy.setRequestHandler(ElicitRequestSchema, async (request) => answer(person, request.params as { message: string }));
    await legacy.connect(transport() as LegacyStdioClientTransport);
    return {
      call: async (code) => (await legacy.callTool({ name: 'run_code', arguments: { code } }, undefined, { timeout: 60_000 })) as CallToolResult,
      close: () => legacy.close(),
    };
  }
  const modern = new ModernClient({ name: 'consent-test', version: '1' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } } as never);
  if (person !== undefined) modern.setRequestHandler('elicitation/create', async (request) => answer(person, request.params as { message: string }) as never);
  await modern.connect(transport() as ModernStdioClientTransport);
  expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return {
    call: async (code) => (await modern.callTool({ name: 'run_code', arguments: { code } }, { timeout: 60_000 })) as CallToolResult,
    close: () => modern.close(),
  };
}

async function connectStdio(era: Era, person: Person | undefined): Promise<Connection> {
  const { file, log } = serversFile();
  const params = { command: process.execPath, args: [CLI, 'code-mode', '--servers', file], env: { ...(process.env as Record<string, string>), IPYTHON_MCP_PYTHON: testPython() }, stderr: 'ignore' as const };
  let pid: number | null = null;
  const made = await client(
    era,
    () => {
      const transport = era === '2025-11-25' ? new LegacyStdioClientTransport(params) : new ModernStdioClientTransport(params);
      queueMicrotask(() => {
        pid = transport.pid;
      });
      return transport;
    },
    person,
  );
  return {
    call: made.call,
    ran: ranIn(log),
    close: async () => {
      await made.close();
      if (pid !== null) await waitForExit(pid, 10_000);
    },
  };
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The same CodeModeMcpServer the binary runs, behind the era's SDK HTTP transport on 127.0.0.1:0. */
async function connectHttp(era: Era, person: Person | undefined): Promise<Connection> {
  const { file, log } = serversFile();
  const instance = new CodeModeMcpServer({ config: readServersFile(file), python: testPython(), version: 'test' });
  instance.start();
  let http: HttpServer;
  if (era === '2025-11-25') {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await instance.server.connect(transport);
    http = createServer((request, response) => {
      void (async () => {
        const raw = request.method === 'POST' ? await body(request) : undefined;
        await transport.handleRequest(request, response, raw === undefined ? undefined : JSON.parse(raw.toString('utf8')));
      })();
    });
  } else {
    const handler = createMcpHandler(() => instance.modernServer(), { legacy: 'reject' });
    http = createServer((request, response) => {
      void (async () => {
        const raw = await body(request);
        const headers = new Headers();
        for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) headers.append(request.rawHeaders[index] as string, request.rawHeaders[index + 1] as string);
        const init: RequestInit = { method: request.method ?? 'POST', headers, ...(raw.length > 0 ? { body: new Uint8Array(raw) } : {}) };
        const answered = await handler.fetch(new Request(`http://127.0.0.1${request.url ?? '/'}`, init));
        response.writeHead(answered.status, Object.fromEntries(answered.headers));
        if (answered.body !== null) for await (const chunk of answered.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk);
        response.end();
      })();
    });
  }
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  const made = await client(era, () => (era === '2025-11-25' ? new LegacyHttpClientTransport(url) : new ModernHttpClientTransport(url)), person);
  return {
    call: made.call,
    ran: ranIn(log),
    close: async () => {
      await made.close().catch(() => undefined);
      await instance.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

const connect = (era: Era, over: Over, person: Person | undefined): Promise<Connection> => (over === 'stdio' ? connectStdio(era, person) : connectHttp(era, person));

function texts(result: CallToolResult): string[] {
  return result.content.map((part) => (part.type === 'text' ? part.text : `<${part.type}>`));
}

/** The code's value (the first block) and the consent summary (the last), failing the test on an error result. */
function outcome(result: CallToolResult): { value: unknown; summary: string } {
  expect(result.isError, texts(result).join('\n')).toBeFalsy();
  const [first, ...rest] = texts(result);
  return { value: JSON.parse(first ?? 'null'), summary: rest.at(-1) ?? '' };
}

const CATCH = (call: string): string => `try:\n    out = ${call}\nexcept ToolCallError as error:\n    out = "ToolCallError: " + str(error)\nout`;

const SUITES = (['2025-11-25', '2026-07-28'] as const).flatMap((era) => (['stdio', 'http'] as const).map((over) => ({ era, over })));

describe.each(SUITES)('consent for nested calls, $era over $over', ({ era, over }) => {
  const person: Person = { answers: [], asked: [] };
  let connection: Connection;
  beforeAll(async () => {
    connection = await connect(era, over, person);
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
  });

  it('runs a tool that declares itself read-only and closed-world without asking', async () => {
    const { value, summary } = outcome(await connection.call('read_note(name="a")'));
    expect(value).toBe('');
    expect(person.asked).toEqual([]);
    expect(summary).toBe('Tool calls from this code: notes.read-note: allowed by policy.');
    expect(connection.ran()).toEqual(['read-note']);
  });

  it('asks about a tool that may change things, naming the server, the tool and the arguments; "yes" runs it', async () => {
    person.answers.push('yes');
    const { value, summary } = outcome(await connection.call('write_note(name="a", text="hello")\nread_note(name="a")'));
    expect(value).toBe('hello');
    expect(person.asked).toHaveLength(1);
    expect(person.asked[0]?.message).toContain('the tool "write-note" of the MCP server "notes"');
    expect(person.asked[0]?.message).toContain('{"name":"a","text":"hello"}');
    expect(person.asked[0]?.requestedSchema).toMatchObject({ properties: { answer: { enum: ['yes', 'no', 'yes for this tool for the rest of the session'] } } });
    expect(summary).toBe('Tool calls from this code: notes.write-note: asked and allowed; notes.read-note: allowed by policy.');
    expect(connection.ran().slice(-2)).toEqual(['write-note', 'read-note']);
  });

  it('"no" raises ToolCallError saying who refused, and nothing runs upstream', async () => {
    person.answers.push('no');
    const before = connection.ran().length;
    const { value, summary } = outcome(await connection.call(CATCH('delete_note(name="a")')));
    expect(value).toBe('ToolCallError: the tool "delete-note" of the MCP server "notes" was refused by the person through the MCP client "consent-test" when asked; nothing ran');
    expect(summary).toBe('Tool calls from this code: notes.delete-note: refused by the person.');
    expect(connection.ran().length).toBe(before);
    // Uncaught, it ends the code with the same words, and the summary still says what happened.
    person.answers.push('no');
    const uncaught = await connection.call('delete_note(name="a")');
    expect(uncaught.isError).toBe(true);
    expect(texts(uncaught).join('\n')).toContain('refused by the person through the MCP client "consent-test"');
    expect(texts(uncaught).at(-1)).toBe('Tool calls from this code: notes.delete-note: refused by the person.');
    expect(connection.ran().length).toBe(before);
  });

  it('"yes for this tool for the rest of the session" asks once, for that tool only, across run_code calls', async () => {
    const asked = person.asked.length;
    person.answers.push('yes for this tool for the rest of the session');
    const first = outcome(await connection.call('[write_note(name="b", text=str(i)) for i in range(3)]'));
    expect(first.value).toEqual(['written', 'written', 'written']);
    expect(first.summary).toBe('Tool calls from this code: notes.write-note: allowed for the session ×3.');
    const again = outcome(await connection.call('write_note(name="c", text="x")'));
    expect(again.summary).toBe('Tool calls from this code: notes.write-note: allowed for the session.');
    expect(person.asked.length).toBe(asked + 1);
    // Another tool still asks; the client declines this time (no answer queued): the client's "no", said as such.
    const other = outcome(await connection.call(CATCH('delete_note(name="b")')));
    expect(other.value).toContain('was refused by the MCP client "consent-test" (it declined the question) when asked; nothing ran');
    expect(other.summary).toBe('Tool calls from this code: notes.delete-note: refused by the client.');
    expect(person.asked.length).toBe(asked + 2);
  });

  it('refuses a tool the servers file refuses, without asking, and nothing runs', async () => {
    const asked = person.asked.length;
    const before = connection.ran().length;
    const { value, summary } = outcome(await connection.call(CATCH('purge(name="x")')));
    expect(value).toBe(
      'ToolCallError: the tool "purge" of the MCP server "notes" is refused by the consent policy (set by mcpServers.notes.consent.tools.purge in the servers file); nothing ran',
    );
    expect(summary).toBe('Tool calls from this code: notes.purge: refused by policy.');
    expect(person.asked.length).toBe(asked);
    expect(connection.ran().length).toBe(before);
  });

  it('refuses an asking tool for a client that cannot ask, naming the settings to change, and nothing runs', async () => {
    const silent = await connect(era, over, undefined);
    try {
      const { value, summary } = outcome(await silent.call(`${CATCH('write_note(name="a", text="x")')}\n[out, read_note(name="a")]`));
      const [refusal, read] = value as [string, string];
      expect(refusal).toContain('the tool "write-note" of the MCP server "notes" needs the person\'s yes');
      expect(refusal).toContain('the MCP client "consent-test" cannot ask the person (it does not declare the elicitation capability)');
      expect(refusal).toContain('--consent notes.write-note=run');
      expect(refusal).toContain('"consent": {"tools": {"write-note": "run"}}');
      expect(read).toBe('');
      expect(summary).toBe('Tool calls from this code: notes.write-note: refused: cannot ask; notes.read-note: allowed by policy.');
      expect(silent.ran()).toEqual(['read-note']);
    } finally {
      await silent.close();
    }
  }, 60_000);
});

describe('--consent on the command line', () => {
  it('lets a trusted headless run allow a server\'s tools, and refuses a bad flag with exit code 2', async () => {
    const { spawnSync } = await import('node:child_process');
    const { file } = serversFile();
    const bad = spawnSync(process.execPath, [CLI, 'code-mode', '--servers', file, '--consent', 'notes=maybe'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('the policy must be run, ask or refuse');
    const unknown = spawnSync(process.execPath, [CLI, 'code-mode', '--servers', file, '--consent', 'nowhere=run'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('the servers file has no server "nowhere"');
    const elsewhere = spawnSync(process.execPath, [CLI, '--consent', 'run'], { encoding: 'utf8' });
    expect(elsewhere.status).toBe(2);
    expect(elsewhere.stderr).toContain('--consent only applies to `ipython-mcp code-mode`');
  });
});
