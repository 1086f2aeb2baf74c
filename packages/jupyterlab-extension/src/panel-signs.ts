/**
 * The signs of one notebook panel: the mark on each agent cell and, at the notebook's top and bottom edges, a badge for
 * the agent's most recent cell out of view on that side.
 */
import { createAbsolutePositionFromRelativePosition, createRelativePositionFromJSON } from 'yjs';
import type { AwarenessLike, CellLike, NotebookPanelLike, WidgetLike } from './jupyterlab-types.js';

/** How long an agent cell stays "recent" after it appeared, its run ended or the agent's cursor moved into it. */
export const RECENT_MS = 10_000;
/** The cell metadata key ipython-mcp marks its cells with (packages/notebook-document's AGENT_METADATA_KEY). */
const AGENT_KEY = 'ipython_mcp';
/** Every ipython-mcp connection's awareness username starts with this (notebook-document's agentUser). */
const AGENT_USERNAME_PREFIX = 'ipython-mcp-';
/** The colour ipython-mcp gives its collaborators, when the agent's awareness state is gone. */
const DEFAULT_COLOR = 'var(--jp-collaborator-color7)';
/** How many pixels of a cell must show for it to count as in view. */
const IN_VIEW_PX = 24;

interface AgentMark {
  client: string;
  running: boolean;
  byPerson: boolean;
}

/** What a badge points at. */
interface Activity {
  cell: CellLike;
  index: number;
  client: string;
  running: boolean;
  at: number;
}

type Edge = 'above' | 'below';

/** The cell's `ipython_mcp` mark, when it is an agent cell. */
function agentMark(cell: CellLike): AgentMark | undefined {
  const mark = cell.model.getMetadata(AGENT_KEY) as Record<string, unknown> | undefined;
  if (mark === undefined || mark === null || mark.agent !== true) return undefined;
  const client = typeof mark.run_by === 'string' ? mark.run_by : typeof mark.client === 'string' ? mark.client : 'agent';
  return { client, running: typeof mark.running === 'string', byPerson: mark.edited_by_person === true || mark.run_by_person === true };
}

/** The agent's name in its awareness state (`claude-code (agent)` → `claude-code`). */
function agentName(name: unknown): string | undefined {
  return typeof name === 'string' && name !== '' ? name.replace(/ \(agent\)$/, '') : undefined;
}

export class PanelSigns {
  static isNotebookPanel(widget: WidgetLike): widget is NotebookPanelLike {
    return widget.hasClass('jp-NotebookPanel') && 'content' in widget && 'context' in widget;
  }

  readonly #panel: NotebookPanelLike;
  readonly #badges: Record<Edge, HTMLButtonElement>;
  /** Recent activity by cell id. */
  readonly #recent = new Map<string, { at: number; client: string }>();
  /** Agent cells already seen, and whether each was running when last looked at (undefined before the first look). */
  #seen: Map<string, boolean> | undefined;
  /** Each agent collaborator's cursor cell id, by awareness client. */
  readonly #cursors = new Map<number, string | undefined>();
  #awareness: AwarenessLike | undefined;
  readonly #onAwareness = (change: { added: number[]; updated: number[]; removed: number[] }): void => {
    this.#readCursors([...change.added, ...change.updated], true);
  };
  readonly #onScroll = (): void => {
    this.#place();
  };
  #pointed: Record<Edge, Activity | undefined> = { above: undefined, below: undefined };

  constructor(panel: NotebookPanelLike) {
    this.#panel = panel;
    this.#badges = { above: this.#badge('above'), below: this.#badge('below') };
    panel.content.node.addEventListener('scroll', this.#onScroll, { passive: true });
  }

  /** Stops listening (the panel was closed). */
  dispose(): void {
    this.#awareness?.off('change', this.#onAwareness);
    for (const badge of Object.values(this.#badges)) badge.remove();
  }

  #badge(edge: Edge): HTMLButtonElement {
    const badge = document.createElement('button');
    badge.className = `ipython-mcp-offscreen ipython-mcp-offscreen-${edge}`;
    badge.hidden = true;
    badge.addEventListener('click', () => {
      const pointed = this.#pointed[edge];
      if (pointed === undefined) return;
      // Only the view moves: the person's active cell and mode stay as they were (so their keys never go into the
      // agent's cell).
      const notebook = this.#panel.content;
      const index = notebook.widgets.indexOf(pointed.cell);
      if (notebook.scrollToItem !== undefined && index >= 0) void notebook.scrollToItem(index, 'center');
      else pointed.cell.node.scrollIntoView({ block: 'center' });
    });
    this.#panel.node.appendChild(badge);
    return badge;
  }

  /** Reads the document's marks and the agents' cursors, marks the agent cells, and places the badges. */
  look(): void {
    const { context } = this.#panel;
    // A notebook being loaded has no cells yet (a loaded one has one at least): its first look waits for them, so the
    // cells it opened with are not taken for new ones.
    if (!context.isReady || !this.#panel.isVisible || this.#panel.content.widgets.length === 0) return;
    const awareness = context.model.sharedModel.awareness;
    if (awareness !== undefined && awareness !== null && awareness !== this.#awareness) {
      this.#awareness?.off('change', this.#onAwareness);
      this.#awareness = awareness;
      awareness.on('change', this.#onAwareness);
      this.#readCursors([...awareness.getStates().keys()], false);
    }
    const now = Date.now();
    const first = this.#seen === undefined;
    const seen = new Map<string, boolean>();
    for (const cell of this.#panel.content.widgets) {
      const mark = cell.model.type === 'code' ? agentMark(cell) : undefined;
      this.#markCell(cell, mark);
      if (mark === undefined) continue;
      const id = cell.model.id;
      const before = this.#seen?.get(id);
      seen.set(id, mark.running);
      // A cell that appeared since the last look, or whose run ended since, is recent (not at the first look: the
      // notebook as it was opened gives no sign).
      if (!first && (before === undefined || (before && !mark.running))) this.#recent.set(id, { at: now, client: mark.client });
    }
    this.#seen = seen;
    for (const [id, recent] of this.#recent) if (now - recent.at > RECENT_MS || !seen.has(id)) this.#recent.delete(id);
    this.#place();
  }

  /** The bar and the name on an agent cell (the colour of its agent's collaborator, when present). */
  #markCell(cell: CellLike, mark: AgentMark | undefined): void {
    const node = cell.node;
    if (mark === undefined) {
      if (!node.classList.contains('ipython-mcp-agentCell')) return;
      node.classList.remove('ipython-mcp-agentCell');
      node.style.removeProperty('--ipython-mcp-agent-label');
      node.style.removeProperty('--ipython-mcp-agent-color');
      return;
    }
    node.classList.add('ipython-mcp-agentCell');
    const label = JSON.stringify(mark.byPerson ? `${mark.client} (agent), edited or run by you` : `${mark.client} (agent)`);
    if (node.style.getPropertyValue('--ipython-mcp-agent-label') !== label) node.style.setProperty('--ipython-mcp-agent-label', label);
    const color = this.#colorOf(mark.client);
    if (node.style.getPropertyValue('--ipython-mcp-agent-color') !== color) node.style.setProperty('--ipython-mcp-agent-color', color);
  }

  /** The colour of the agent collaborator named `client`. */
  #colorOf(client: string): string {
    for (const state of this.#awareness?.getStates().values() ?? []) {
      const user = state.user;
      if (typeof user?.username !== 'string' || !user.username.startsWith(AGENT_USERNAME_PREFIX)) continue;
      if (agentName(user.name) === client && typeof user.color === 'string') return user.color;
    }
    return DEFAULT_COLOR;
  }

  /** Notes where each agent's cursor is; with `fresh`, a cursor that moved into another cell makes that cell recent. */
  #readCursors(clients: number[], fresh: boolean): void {
    const states = this.#awareness?.getStates();
    const ydoc = this.#panel.context.model.sharedModel.ydoc;
    if (states === undefined || ydoc === undefined) return;
    for (const client of clients) {
      const state = states.get(client);
      const username = state?.user?.username;
      if (typeof username !== 'string' || !username.startsWith(AGENT_USERNAME_PREFIX)) continue;
      const head = state?.cursors?.[0]?.head;
      let cellId: string | undefined;
      if (head !== undefined && head !== null && typeof head === 'object') {
        const type = createAbsolutePositionFromRelativePosition(createRelativePositionFromJSON(head), ydoc)?.type;
        cellId = this.#panel.content.widgets.find((cell) => cell.model.sharedModel.ysource === type)?.model.id;
      }
      // A cursor first seen (the page just joined, or the agent did) is where the agent was, not a move.
      if (fresh && cellId !== undefined && this.#cursors.has(client) && cellId !== this.#cursors.get(client)) {
        this.#recent.set(cellId, { at: Date.now(), client: agentName(state?.user?.name) ?? 'agent' });
      }
      this.#cursors.set(client, cellId);
    }
  }

  /** Shows, for each edge, the most recent agent activity beyond it, or nothing. */
  #place(): void {
    const notebook = this.#panel.content;
    const view = notebook.node.getBoundingClientRect();
    const activities: Activity[] = [];
    let firstInView: number | undefined;
    notebook.widgets.forEach((cell, index) => {
      const mark = agentMark(cell);
      const recent = this.#recent.get(cell.model.id);
      if (mark !== undefined && (mark.running || recent !== undefined)) {
        activities.push({ cell, index, client: recent?.client ?? mark.client, running: mark.running, at: recent?.at ?? Infinity });
      }
    });
    const pointed: Record<Edge, Activity | undefined> = { above: undefined, below: undefined };
    for (const activity of activities) {
      const edge = this.#edgeOf(activity, view, () => (firstInView ??= this.#firstInView(view)));
      if (edge === undefined) {
        // Seen: the sign for this cell ends (a running cell's comes back if the person scrolls away while it runs).
        if (!activity.running) this.#recent.delete(activity.cell.model.id);
        continue;
      }
      const current = pointed[edge];
      if (current === undefined || (activity.running && !current.running) || (activity.running === current.running && activity.at >= current.at)) {
        pointed[edge] = activity;
      }
    }
    this.#pointed = pointed;
    for (const edge of ['above', 'below'] as const) this.#show(edge, pointed[edge], view);
  }

  /** Which edge of the view `activity`'s cell lies beyond, or undefined when it is in view. */
  #edgeOf(activity: Activity, view: DOMRect, firstInView: () => number): Edge | undefined {
    const node = activity.cell.node;
    if (node.isConnected && activity.cell.isVisible) {
      const box = node.getBoundingClientRect();
      if (box.height > 0) {
        const shown = Math.min(box.bottom, view.bottom) - Math.max(box.top, view.top);
        if (shown >= Math.min(IN_VIEW_PX, box.height)) return undefined;
        return box.top >= view.bottom - IN_VIEW_PX ? 'below' : 'above';
      }
    }
    // Not drawn (JupyterLab's windowing leaves cells far from the view out of the page): placed by its index.
    return activity.index > firstInView() ? 'below' : 'above';
  }

  /** The index of the first cell in view (0 when none is). */
  #firstInView(view: DOMRect): number {
    const index = this.#panel.content.widgets.findIndex((cell) => {
      if (!cell.node.isConnected) return false;
      const box = cell.node.getBoundingClientRect();
      return box.height > 0 && box.bottom > view.top && box.top < view.bottom;
    });
    return Math.max(index, 0);
  }

  #show(edge: Edge, activity: Activity | undefined, view: DOMRect): void {
    const badge = this.#badges[edge];
    if (activity === undefined) {
      badge.hidden = true;
      return;
    }
    const arrow = edge === 'below' ? '▼' : '▲';
    const what = activity.running ? 'is working in' : 'wrote';
    const text = `${arrow} ${activity.client} ${what} cell ${activity.index + 1}`;
    if (badge.textContent !== text) badge.textContent = text;
    badge.title = `Scroll to cell ${activity.index + 1}`;
    badge.dataset.cellId = activity.cell.model.id;
    badge.style.setProperty('--ipython-mcp-agent-color', this.#colorOf(activity.client));
    // Placed over the notebook's own area (below the panel's toolbar), at the edge the cell lies beyond.
    const panelBox = this.#panel.node.getBoundingClientRect();
    if (edge === 'above') badge.style.top = `${Math.round(view.top - panelBox.top) + 8}px`;
    else badge.style.bottom = `${Math.round(panelBox.bottom - view.bottom) + 12}px`;
    badge.hidden = false;
  }
}
