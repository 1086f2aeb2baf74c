// The pure parts of `code-mode --servers`: the servers file, tool selection, function names, upstream results.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServersFileError, readServersFile, selectsTool } from '../src/code-mode-config.js';
import { ConsentFlagError, codeModeConsentGate, consentFlags } from '../src/code-mode-consent.js';
import { functionNames } from '../src/code-mode-names.js';
import { UpstreamToolError, upstreamValue } from '../src/upstream-result.js';

const directory = mkdtempSync(join(tmpdir(), 'code-mode-config-'));
function file(content: string): string {
  const path = join(directory, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, content);
  return path;
}

describe('readServersFile', () => {
  it('reads the common shape with defaults, tolerates other clients\' keys, and resolves cwd against the file', () => {
    const config = readServersFile(file(JSON.stringify({ mcpServers: { a: { command: 'x', type: 'stdio', cwd: 'sub' } }, other: 1 })));
    expect(config.maxToolCalls).toBe(100);
    expect(config.timeoutMs).toBe(60_000);
    expect(config.descriptionBudget).toBe(8000);
    expect(config.servers).toEqual([
      { name: 'a', command: 'x', args: [], env: {}, cwd: join(directory, 'sub'), tools: undefined, prefix: undefined, startupTimeoutMs: 30_000, callTimeoutMs: 300_000 },
    ]);
    expect(readServersFile(file(JSON.stringify({ mcpServers: {}, codeMode: { timeoutSeconds: null } }))).timeoutMs).toBeNull();
    expect(readServersFile(file(JSON.stringify({ mcpServers: {}, codeMode: { descriptionBudget: null } }))).descriptionBudget).toBeNull();
    expect(readServersFile(file(JSON.stringify({ mcpServers: {}, codeMode: { descriptionBudget: 0 } }))).descriptionBudget).toBe(0);
  });

  it('refuses bad files with the path and the place of the problem', () => {
    expect(() => readServersFile(join(directory, 'missing.json'))).toThrow(/cannot read the servers file .*ENOENT/);
    expect(() => readServersFile(file('{not json'))).toThrow(/is not JSON/);
    expect(() => readServersFile(file('{}'))).toThrow(/invalid at mcpServers/);
    expect(() => readServersFile(file(JSON.stringify({ mcpServers: { a: { command: 'x', args: 'y' } } })))).toThrow(/mcpServers\.a\.args/);
    expect(() => readServersFile(file(JSON.stringify({ mcpServers: { a: { command: 'x', prefix: 'no-dash' } } })))).toThrow(ServersFileError);
    expect(() => readServersFile(file(JSON.stringify({ mcpServers: {}, codeMode: { maxToolCalls: -1 } })))).toThrow(/codeMode\.maxToolCalls/);
    for (const descriptionBudget of [-1, 2.5, '8000']) {
      expect(() => readServersFile(file(JSON.stringify({ mcpServers: {}, codeMode: { descriptionBudget } })))).toThrow(/codeMode\.descriptionBudget/);
    }
  });
});

describe('consent settings', () => {
  it('reads codeMode.consent and each server\'s consent (one policy, or a default and tools), and refuses bad ones', () => {
    const config = readServersFile(
      file(JSON.stringify({ mcpServers: { a: { command: 'x', consent: 'run' }, b: { command: 'x', consent: { default: 'refuse', tools: { 'get-x': 'ask' } } }, c: { command: 'x' } }, codeMode: { consent: 'ask' } })),
    );
    expect(config.consent).toEqual({ default: 'ask', servers: { a: { default: 'run' }, b: { default: 'refuse', tools: { 'get-x': 'ask' } } } });
    expect(() => readServersFile(file(JSON.stringify({ mcpServers: { a: { command: 'x', consent: 'always' } } })))).toThrow(/mcpServers\.a\.consent/);
    expect(() => readServersFile(file(JSON.stringify({ mcpServers: { a: { command: 'x', consent: { tool: {} } } } })))).toThrow(/mcpServers\.a\.consent/);
    expect(() => readServersFile(file(JSON.stringify({ mcpServers: {}, codeMode: { consent: true } })))).toThrow(/codeMode\.consent/);
  });

  it('reads --consent flags (a later one wins), and the command line comes before the file', () => {
    const flags = consentFlags(['ask', 'a=run', 'a.write.x=refuse', 'a=refuse'], ['a', 'b']);
    expect(flags).toEqual({ default: 'ask', servers: { a: { default: 'refuse', tools: { 'write.x': 'refuse' } } } });
    expect(() => consentFlags(['a=yes'], ['a'])).toThrow(ConsentFlagError);
    expect(() => consentFlags(['z.tool=run'], ['a'])).toThrow(/no server "z"/);
    const gate = codeModeConsentGate({ servers: { b: { default: 'refuse' } } }, consentFlags(['b.read=run'], ['a', 'b']));
    expect(gate.policy({ server: 'b', tool: 'read' })).toEqual({ policy: 'run', source: 'command line', reason: 'set by --consent b.read=POLICY' });
    expect(gate.policy({ server: 'b', tool: 'write' })).toEqual({ policy: 'refuse', source: 'servers file', reason: 'set by mcpServers.b.consent in the servers file' });
    expect(gate.policy({ server: 'a', tool: 'write', annotations: { readOnlyHint: true, openWorldHint: false } }).policy).toBe('run');
  });
});

describe('selectsTool', () => {
  it('matches names and globs against the tool name and its Python form', () => {
    expect(selectsTool(undefined, 'anything')).toBe(true);
    expect(selectsTool(['get_*', 'search'], 'get-weather')).toBe(true);
    expect(selectsTool(['get_*', 'search'], 'search')).toBe(true);
    expect(selectsTool(['get_*', 'search'], 'searches')).toBe(false);
    expect(selectsTool(['a?c'], 'abc')).toBe(true);
    expect(selectsTool(['a.c'], 'abc')).toBe(false);
    expect(selectsTool([], 'abc')).toBe(false);
  });
});

describe('functionNames', () => {
  it('keeps unique names, prefixes shared ones on every server, honours a prefix, and never repeats a name', () => {
    const names = functionNames([
      { server: 'weather-api', prefix: undefined, tool: 'search' },
      { server: 'docs', prefix: undefined, tool: 'search' },
      { server: 'docs', prefix: undefined, tool: 'fetch' },
      { server: 'x', prefix: 'w', tool: 'fetch_page' },
      { server: 'y', prefix: undefined, tool: 'docs_search' },
    ]);
    expect(names).toEqual(['weather_api_search', 'docs_search', 'fetch', 'w_fetch_page', 'docs_search_2']);
  });
});

describe('upstreamValue', () => {
  it('prefers structuredContent, then text parsed as JSON when it is JSON, then the content items', () => {
    expect(upstreamValue({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { b: 2 } })).toEqual({ b: 2 });
    expect(upstreamValue({ content: [{ type: 'text', text: ' [1, 2] ' }] })).toEqual([1, 2]);
    expect(upstreamValue({ content: [{ type: 'text', text: 'plain words' }] })).toBe('plain words');
    expect(upstreamValue({ content: [{ type: 'text', text: '{broken' }] })).toBe('{broken');
    expect(upstreamValue({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' };
    expect(upstreamValue({ content: [image] })).toEqual([image]);
    expect(upstreamValue({ content: [] })).toBeNull();
  });

  it('throws an isError result with its text', () => {
    expect(() => upstreamValue({ isError: true, content: [{ type: 'text', text: 'nope' }] })).toThrow(UpstreamToolError);
    expect(() => upstreamValue({ isError: true, content: [] })).toThrow(/without a message/);
  });
});
