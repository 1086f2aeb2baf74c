import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourceTemplatesRequestSchema, ListResourcesRequestSchema, ReadResourceRequestSchema, type ReadResourceResult, type Resource } from '@modelcontextprotocol/sdk/types.js';
import type { DocumentResources } from './document-resources.js';
import { JOURNAL_RESOURCE, JOURNAL_RESOURCE_URI, readJournal } from './journal-resource.js';
import type { JournalRecorder } from './journal-recorder.js';
import type { OutputResources } from './output-resources.js';

/** Resources listed per `resources/list` page. */
const LIST_PAGE = 100;

/**
 * The resources of one session: its namespace's journal (when one is written) and its outputs (spill files, images,
 * whole results; output-resources.ts). A session reads only its own namespace's outputs. Call before connecting.
 */
export function serveResources(server: Server, outputs: OutputResources, journal: JournalRecorder | undefined, documents?: DocumentResources): void {
  server.registerCapabilities({ resources: {} });
  server.setRequestHandler(ListResourcesRequestSchema, (request) => listResources(outputs, journal, request.params?.cursor, documents));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: outputs.templates() }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => readResource(outputs, journal, request.params.uri, documents));
}

/** One `resources/list` page (both protocol eras): the journal first, then the documents, then the outputs; the cursor is an offset. */
export async function listResources(
  outputs: OutputResources,
  journal: JournalRecorder | undefined,
  cursor: string | undefined,
  documents?: DocumentResources,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const all: Resource[] = [...(journal ? [JOURNAL_RESOURCE] : []), ...(documents?.list() ?? []), ...(await outputs.list())];
  const start = cursor !== undefined && /^[0-9]{1,9}$/.test(cursor) ? Number(cursor) : 0;
  const resources = all.slice(start, start + LIST_PAGE);
  return start + LIST_PAGE < all.length ? { resources, nextCursor: String(start + LIST_PAGE) } : { resources };
}

/** `resources/read` (both protocol eras): the journal, the notebook document, or one of the namespace's outputs. */
export function readResource(
  outputs: OutputResources,
  journal: JournalRecorder | undefined,
  uri: string,
  documents?: DocumentResources,
): Promise<ReadResourceResult> | ReadResourceResult {
  if (uri === JOURNAL_RESOURCE_URI && journal) return readJournal(journal);
  const document = documents?.read(uri);
  if (document !== undefined) return document;
  return outputs.read(uri);
}
