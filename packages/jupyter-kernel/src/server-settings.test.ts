import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JupyterKernelError, redactUrl } from './errors.js';
import { openJupyterKernel } from './open-kernel.js';
import { resolveServer } from './server-settings.js';

function invalid(options: Parameters<typeof resolveServer>[0]): JupyterKernelError {
  try {
    resolveServer(options);
  } catch (error) {
    expect(error).toBeInstanceOf(JupyterKernelError);
    return error as JupyterKernelError;
  }
  throw new Error('expected resolveServer to throw');
}

describe('resolveServer', () => {
  it('builds http and ws URLs with a trailing slash and keeps a path prefix', () => {
    const resolved = resolveServer({ url: 'https://box.example:8888/user/ana', token: 'secret' });
    expect(resolved.settings.baseUrl).toBe('https://box.example:8888/user/ana/');
    expect(resolved.settings.wsUrl).toBe('wss://box.example:8888/user/ana/');
    expect(resolved.displayUrl).toBe('https://box.example:8888/user/ana/');
    expect(resolved.settings.token).toBe('secret');
  });

  it('refuses what is not an http(s) URL, a token in the URL, and a bad timeout, without echoing secrets', () => {
    expect(invalid({ url: 'not a url', token: 't' }).code).toBe('jupyter_invalid_options');
    expect(invalid({ url: 'ftp://host/', token: 't' }).code).toBe('jupyter_invalid_options');
    const inUrl = invalid({ url: 'http://host:8888/?token=hunter2', token: 't' });
    expect(inUrl.code).toBe('jupyter_invalid_options');
    expect(inUrl.message).not.toContain('hunter2');
    expect(invalid({ url: 'http://user:hunter2@host/', token: 't' }).message).not.toContain('hunter2');
    expect(invalid({ url: 'http://host/', token: 't', requestTimeoutMs: 0 }).code).toBe('jupyter_invalid_options');
  });

  it('sends the services console chatter to stderr, never stdout', () => {
    resolveServer({ url: 'http://127.0.0.1:1/', token: 't' });
    const stdout = vi.spyOn(process.stdout, 'write');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      console.debug('Starting WebSocket: ws://example/');
      console.log('Server selected unknown kernel wire protocol');
      expect(stdout).not.toHaveBeenCalled();
      expect(stderr).toHaveBeenCalledTimes(2);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
  });
});

describe('redactUrl', () => {
  it('drops credentials, query and fragment', () => {
    expect(redactUrl('http://a:b@host:1/base/?token=x#y')).toBe('http://host:1/base/');
    expect(redactUrl('::')).toBe('<invalid url>');
  });
});

describe('a server that accepts and never answers', () => {
  let silent: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('is jupyter_unreachable after requestTimeoutMs, not a hang', async () => {
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent?.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const started = Date.now();
    const error = await openJupyterKernel({
      server: { url: `http://127.0.0.1:${port}/`, token: 't', requestTimeoutMs: 300 },
      target: { kernelName: 'python3' },
    }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(JupyterKernelError);
    expect((error as JupyterKernelError).code).toBe('jupyter_unreachable');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
