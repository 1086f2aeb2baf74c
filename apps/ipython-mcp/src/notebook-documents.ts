// The attached notebook (--notebook PATH) for the agent: its shared document mirrors the agent's cells (unless
// --notebook-cells off) and is served as the resource ipython-mcp://notebook. @ipython-mcp/notebook-document is
// loaded only for --notebook.
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { notebookTools, type DocumentResources, type NotebookActions } from '@ipython-mcp/mcp-server';
import type { NotebookMirror } from '@ipython-mcp/notebook-document';
import type { Logger } from '@ipython-mcp/worker-supervisor';
import type { JupyterRequest } from './jupyter-request.js';
import { NOTEBOOK_READ_CHARS, notebookActions } from './notebook-actions.js';

/** The notebook resource's URI (linked from runtime_status's `backend.notebook_resource`). */
export const NOTEBOOK_RESOURCE_URI = 'ipython-mcp://notebook';

/** The notebook's mirror, the resources that read it, and the notebook tool's actions on it. */
export interface NotebookDocuments {
  mirror: NotebookMirror;
  documents: DocumentResources;
  actions: NotebookActions;
}

/** The mirror of `request`'s notebook and the resources that read it; undefined when the target is not a notebook. */
export async function notebookDocuments(request: JupyterRequest, logger: Logger): Promise<NotebookDocuments | undefined> {
  if (!('notebookPath' in request.target)) return undefined;
  const library = await import('@ipython-mcp/notebook-document');
  const { NotebookMirror, NOTEBOOK_OUTPUT_URI_PREFIX } = library;
  const path = request.target.notebookPath;
  const mirror = new NotebookMirror({
    url: request.url,
    token: request.token,
    path,
    cells: request.notebookCells,
    warn: (event, fields) => logger.warn(event, fields),
  });
  const actions = notebookActions(library, mirror, { url: request.url, token: request.token, path });
  const documents: DocumentResources = {
    list: () => [
      {
        uri: NOTEBOOK_RESOURCE_URI,
        name: 'notebook',
        title: `Notebook ${path}`,
        description: `The attached notebook ${path} as the person sees it now (unsaved edits included): its cells in order, each code cell's count and outputs in short form, images as links.`,
        mimeType: 'text/plain',
      },
    ],
    read: (uri) => {
      if (uri === NOTEBOOK_RESOURCE_URI) {
        return mirror.read(NOTEBOOK_READ_CHARS).then(
          (text) => ({ contents: [{ uri, mimeType: 'text/plain', text }] }),
          (error: unknown) => {
            throw new McpError(ErrorCode.InternalError, `the notebook cannot be read: ${(error as Error).message}`);
          },
        );
      }
      if (!uri.startsWith(NOTEBOOK_OUTPUT_URI_PREFIX)) return undefined;
      const [cellId, position] = uri.slice(NOTEBOOK_OUTPUT_URI_PREFIX.length).split('/');
      return mirror.image(cellId ?? '', Number(position)).then((image) => {
        if (image === undefined) throw new McpError(ErrorCode.InvalidParams, `no image output at ${uri} (the cell may have been edited or deleted)`);
        return { contents: [{ uri, mimeType: image.mimeType, blob: image.base64 }] };
      });
    },
    clientNamed: (name) => {
      mirror.client = name;
    },
    // The notebook tool: read, edit and run the notebook's own cells.
    tools: notebookTools(actions),
  };
  return { mirror, documents, actions };
}
