import { readFile } from 'node:fs/promises';
import { ErrorCode as McpErrorCode, McpError, type ReadResourceResult, type Resource } from '@modelcontextprotocol/sdk/types.js';
import type { JournalRecorder } from './journal-recorder.js';

/** The URI of the session journal resource. */
export const JOURNAL_RESOURCE_URI = 'ipython-mcp://journal';
const NOTEBOOK_MIME_TYPE = 'application/x-ipynb+json';

/**
 * The journal file being written, as an MCP resource, so a client can show it (or save it) without a path. Listed
 * only when a journal is configured (session-resources.ts serves it).
 */
export const JOURNAL_RESOURCE: Resource = Object.freeze({
  uri: JOURNAL_RESOURCE_URI,
  name: 'session-journal',
  title: 'Session journal',
  description: 'The Jupyter notebook of this session: every cell the agent ran, with its outputs (it holds code and values).',
  mimeType: NOTEBOOK_MIME_TYPE,
});

/** The journal's whole text, once what was recorded so far is written. */
export async function readJournal(journal: JournalRecorder): Promise<ReadResourceResult> {
  const status = journal.status();
  if (status.state === 'failed') throw new McpError(McpErrorCode.InternalError, `the journal is not being written: ${status.error ?? 'unknown error'}`);
  await journal.flushed();
  try {
    return { contents: [{ uri: JOURNAL_RESOURCE_URI, mimeType: NOTEBOOK_MIME_TYPE, text: await readFile(journal.status().path, 'utf8') }] };
  } catch (error) {
    throw new McpError(McpErrorCode.InternalError, `the journal could not be read: ${(error as { code?: string }).code ?? 'error'}`);
  }
}
