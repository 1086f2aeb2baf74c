import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, namespaceName } from '../transports/index.js';
import { DEFAULT_NAMESPACE, NAMESPACE_NAME, namespaceFilePath } from './namespace-files.js';

describe('namespace names in the URL', () => {
  it('/mcp is the default namespace; /mcp/NAME a valid name', () => {
    expect(namespaceName('/mcp')).toBe(DEFAULT_NAMESPACE);
    expect(namespaceName('/mcp?x=1')).toBe(DEFAULT_NAMESPACE);
    expect(namespaceName('/mcp/data-2')).toBe('data-2');
  });

  it('any path is either refused or names a namespace matching NAMESPACE_NAME', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (tail) => {
        const name = namespaceName(`/mcp/${tail}`);
        if (name !== undefined && name !== DEFAULT_NAMESPACE) expect(NAMESPACE_NAME.test(name)).toBe(true);
        if (name !== undefined) expect(name.includes('/')).toBe(false);
      }),
    );
  });

  it.each(['/', '/mcpx', '/mcp/A', '/mcp/a_b', `/mcp/${'a'.repeat(33)}`, '/mcp/a/b', '/mcp/..', '/other/mcp'])('%s is not a namespace', (path) => {
    expect(namespaceName(path)).toBeUndefined();
  });
});

describe('per-namespace file paths', () => {
  it('default keeps the path; other names go before the extension', () => {
    expect(namespaceFilePath('/x/j.ipynb', DEFAULT_NAMESPACE)).toBe('/x/j.ipynb');
    expect(namespaceFilePath('/x/j.ipynb', 'a')).toBe('/x/j.a.ipynb');
    expect(namespaceFilePath('/x.d/journal', 'a')).toBe('/x.d/journal.a');
    expect(namespaceFilePath('/x/.hidden', 'a')).toBe('/x/.hidden.a');
  });

  it('two different names never share a file, and each stays in the same directory', () => {
    const name = fc.stringMatching(/^[a-z0-9-]{1,32}$/);
    fc.assert(
      fc.property(fc.constantFrom('/t/j.ipynb', '/t/state', 'rel/s.bin'), name, name, (path, a, b) => {
        fc.pre(a !== b);
        expect(namespaceFilePath(path, a)).not.toBe(namespaceFilePath(path, b));
        const dir = path.slice(0, path.lastIndexOf('/') + 1);
        expect(namespaceFilePath(path, a).startsWith(dir)).toBe(true);
      }),
    );
  });
});

describe('loopback hosts', () => {
  it.each([['127.0.0.1', true], ['127.1.2.3', true], ['localhost', true], ['::1', true], ['0.0.0.0', false], ['192.168.1.2', false], ['::', false], ['example.com', false]])(
    '%s -> %s',
    (host, loopback) => {
      expect(isLoopbackHost(host)).toBe(loopback);
    },
  );
});
