import type { Logger } from '@ipython-mcp/worker-supervisor';
import { ServersFileError, readServersFile } from './code-mode-config.js';
import { serveCodeModeStdio } from './code-mode-server.js';
import { VERSION } from './version.js';

/** `ipython-mcp code-mode --servers FILE`: serves until stdin ends or a signal, then exits 0. */
export async function codeModeCommand(serversFile: string, python: string, logger: Logger, fail: (message: string) => never): Promise<void> {
  let config;
  try {
    config = readServersFile(serversFile);
  } catch (error) {
    if (error instanceof ServersFileError) fail(error.message);
    throw error;
  }
  const { closed } = await serveCodeModeStdio({ config, python, logger, version: VERSION });
  const names = config.servers.map((server) => server.name).join(', ') || 'none';
  process.stderr.write(`ipython-mcp ${VERSION} code-mode ready on stdio (python: ${python}; upstream servers: ${names})\n`);
  await closed;
  process.exit(0);
}
