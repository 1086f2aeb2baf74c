import { readFile } from 'node:fs/promises';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode as McpErrorCode, ListResourcesRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JournalRecorder } from './journal-recorder.js';

/** The URI of the session journal resource. */
export const JOURNAL_RESOURCE_URI = 'ipython-mcp://journal';
const NOTEBOOK_MIME_TYPE = 'application/x-ipynb+json';

/**
 * Publishes the journal file being written as an MCP resource, so a client can show it (or save it) without a
 * path. Only when a journal is configured; call before the server connects.
 */
export function serveJournalResource(server: Server, journal: JournalRecorder): void {
  server.registerCapabilities({ resources: {} });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: JOURNAL_RESOURCE_URI,
        name: 'session-journal',
        title: 'Session journal',
        description: 'The Jupyter notebook of this session: every cell the agent ran, with its outputs (it holds code and values).',
        mimeType: NOTEBOOK_MIME_TYPE,
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    if (request.params.uri !== JOURNAL_RESOURCE_URI) throw new McpError(McpErrorCode.InvalidParams, `Unknown resource: ${request.params.uri.slice(0, 200)}`);
    const status = journal.status();
    if (status.state === 'failed') throw new McpError(McpErrorCode.InternalError, `the journal is not being written: ${status.error ?? 'unknown error'}`);
    await journal.flushed();
    try {
      return { contents: [{ uri: JOURNAL_RESOURCE_URI, mimeType: NOTEBOOK_MIME_TYPE, text: await readFile(journal.status().path, 'utf8') }] };
    } catch (error) {
      throw new McpError(McpErrorCode.InternalError, `the journal could not be read: ${(error as { code?: string }).code ?? 'error'}`);
    }
  });
}
