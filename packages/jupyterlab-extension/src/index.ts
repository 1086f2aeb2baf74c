/**
 * ipython-mcp's JupyterLab extension, for the person's open notebook (issue 58, decision 0021).
 *
 * - An agent's cell out of view gives a sign at the notebook's edge, the way a collaborator's cursor would if it
 *   were in view: "▼ claude-code is working in cell 14" at the bottom (▲ at the top), in the agent's collaborator
 *   colour. A click takes the person there; the sign goes once the cell is in view or the agent's activity there
 *   ends (the run ended and a few seconds passed).
 * - Every agent cell (`ipython_mcp.agent` in its metadata) has a bar in the agent's colour and the agent's name under
 *   its prompt, "and you" added once the person edited or ran it.
 *
 * The agent's activity is read from what ipython-mcp writes into the shared document: a cell with a run record
 * (`ipython_mcp.running`) is running; an agent cell that appears, a run that ends, or the agent's awareness cursor
 * moving to a cell is recent for {@link RECENT_MS}. The person's own cells carry no `ipython_mcp` mark and never give
 * a sign. Nothing here writes to the document.
 *
 * JupyterLab's objects are read through the small interfaces below (jupyterlab-types.ts) rather than its packages:
 * the extension needs the shell, the notebook panel's cells and the document's awareness, and importing
 * @jupyterlab/notebook for those would bring its whole dependency tree into the workspace's install.
 */
import type { LabApp, WidgetLike } from './jupyterlab-types.js';
import { PanelSigns } from './panel-signs.js';

/** How often the open notebooks are looked at (the agent's writes arrive between looks; scrolling is immediate). */
const LOOK_MS = 400;

const plugin = {
  id: '@ipython-mcp/jupyterlab-extension:agent-signs',
  description: "Marks the agent's cells and signs an agent's cell out of the person's view.",
  autoStart: true,
  activate(app: LabApp): void {
    const signs = new Map<WidgetLike, PanelSigns>();
    setInterval(() => {
      for (const widget of app.shell.widgets('main')) {
        if (signs.has(widget) || !PanelSigns.isNotebookPanel(widget)) continue;
        signs.set(widget, new PanelSigns(widget));
      }
      for (const [widget, each] of signs) {
        if (!widget.isDisposed) {
          each.look();
          continue;
        }
        each.dispose();
        signs.delete(widget);
      }
    }, LOOK_MS);
  },
};

export default plugin;
