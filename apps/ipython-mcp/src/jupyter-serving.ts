// Serving namespaces from Jupyter kernels: one backend per namespace, by the policy the flags imply. The Jupyter
// client (and @jupyterlab/services under it) is loaded only when --jupyter is given.
import { DEFAULT_NAMESPACE, type NamespaceBackend } from '@ipython-mcp/mcp-server';
import type { MachineGuardOptions } from '@ipython-mcp/jupyter-kernel';
import type { Logger } from '@ipython-mcp/worker-supervisor';
import { targetFlag, type JupyterRequest } from './jupyter-request.js';
import { notebookChoice, type BackendMaker } from './notebook-choice.js';
import { NOTEBOOK_RESOURCE_URI, notebookDocuments } from './notebook-documents.js';

/** The backends of a server whose namespaces live in Jupyter kernels. */
export interface JupyterServing {
  /** The default namespace's backend. */
  readonly main: NamespaceBackend;
  /** A named namespace's backend (`--http /mcp/NAME`), or why it cannot have one. */
  backendFor(namespace: string): NamespaceBackend | string;
  /** Shuts down every kernel ipython-mcp started (idempotent; every exit path calls it). */
  close(): Promise<void>;
}

/**
 * Builds the backends for `request`. With `--kernel-name` each namespace gets a kernel of its own, started here and
 * shut down on close; with `--kernel`/`--notebook` only the default namespace can be served (one attached kernel
 * has one namespace).
 */
export async function jupyterServing(request: JupyterRequest, logger: Logger, machineGuard?: MachineGuardOptions): Promise<JupyterServing> {
  const { jupyterKernelBackend } = await import('@ipython-mcp/jupyter-kernel');
  const made: Array<{ close(): Promise<void> }> = [];
  // --notebook: the notebook's shared document gets the agent's cells and is readable as a resource.
  const notebook = await notebookDocuments(request, logger);
  if (notebook !== undefined) made.push({ close: async () => notebook.mirror.close() });
  const backendOf: BackendMaker = (target, cells) =>
    jupyterKernelBackend({
      server: { url: request.url, token: request.token },
      target,
      kernelEnv: kernelStartEnv(process.env),
      logger,
      machineGuard,
      ...(cells === undefined ? {} : { cells }),
    });
  const make = (): NamespaceBackend => {
    if (request.choose) {
      // --jupyter alone: a kernel of the default kernelspec until the notebook tool opens a notebook.
      const choice = notebookChoice(request, logger, backendOf);
      made.push(choice);
      return { backend: choice.backend, status: (workers) => choice.status(workers), documents: choice.documents, warmStandby: true, close: () => choice.close() };
    }
    const backend = backendOf(request.target, notebook === undefined ? undefined : () => notebook.mirror.events());
    made.push(backend);
    return {
      backend,
      status: (workers) => ({
        ...backend.status(workers),
        notebook_cells:
          notebook === undefined
            ? { mirrored: false, state: 'not_a_notebook', reason: `${targetFlag(request.target)} names a kernel, not a notebook: only --notebook PATH mirrors the agent's cells` }
            : notebook.mirror.status(),
        ...(notebook === undefined ? {} : { notebook_resource: NOTEBOOK_RESOURCE_URI }),
      }),
      ...(notebook === undefined ? {} : { documents: notebook.documents }),
      // Attached: every worker would attach to the same kernel, and the newest attach takes it over.
      warmStandby: backend.policy === 'owned',
      close: () => backend.close(),
    };
  };
  const main = make();
  const owned = 'kernelName' in request.target;
  let closing: Promise<void> | undefined;
  return {
    main,
    backendFor(namespace: string): NamespaceBackend | string {
      if (namespace === DEFAULT_NAMESPACE) return main;
      if (!owned) {
        return `namespace ${namespace} cannot be served: ${targetFlag(request.target)} names one kernel, which is the default namespace (/mcp); use /mcp, or start ipython-mcp with --kernel-name NAME to give each named namespace a kernel of its own`;
      }
      return make();
    },
    close(): Promise<void> {
      closing ??= Promise.all(made.map((backend) => backend.close().catch(() => undefined))).then(() => undefined);
      return closing;
    },
  };
}

/**
 * The kernel start parameters in ipython-mcp's own environment: every `KERNEL_*` variable (Enterprise Gateway's
 * `KERNEL_USERNAME`, `KERNEL_NAMESPACE`, ...), sent in the start request of a `--kernel-name` kernel.
 */
export function kernelStartEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => /^KERNEL_[A-Z0-9_]+$/.test(entry[0]) && typeof entry[1] === 'string'));
}
