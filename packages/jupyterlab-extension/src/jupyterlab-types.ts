/**
 * The parts of JupyterLab 4's objects this extension reads, as JupyterLab 4.x has them (`ILabShell.widgets`,
 * `NotebookPanel.content` / `.context`, `Notebook.widgets` / `.scrollToItem`, `ICellModel.getMetadata`,
 * `YNotebook.awareness` / `.ydoc`, `YCodeCell.ysource`). Only what is read is declared.
 */
import type { Doc, Text } from 'yjs';

export interface WidgetLike {
  readonly node: HTMLElement;
  readonly isDisposed: boolean;
  readonly isVisible: boolean;
  hasClass(name: string): boolean;
}

export interface CellModelLike {
  readonly type: string;
  readonly id: string;
  getMetadata(key: string): unknown;
  readonly sharedModel: { readonly ysource?: Text };
}

export interface CellLike extends WidgetLike {
  readonly model: CellModelLike;
}

/** A collaborator's awareness state as JupyterLab's collaboration writes it (`user`, and `cursors` in a cell). */
export interface AwarenessState {
  user?: { username?: unknown; name?: unknown; display_name?: unknown; color?: unknown };
  cursors?: Array<{ head?: unknown; anchor?: unknown }>;
}

export interface AwarenessLike {
  getStates(): Map<number, AwarenessState>;
  on(event: 'change', listener: (change: { added: number[]; updated: number[]; removed: number[] }) => void): void;
  off(event: 'change', listener: (change: { added: number[]; updated: number[]; removed: number[] }) => void): void;
}

export interface NotebookLike extends WidgetLike {
  readonly widgets: readonly CellLike[];
  /** WindowedList's: scrolls only (the notebook's `scrollToCell` also activates the cell, in edit mode). */
  scrollToItem?(index: number, align?: 'auto' | 'smart' | 'center' | 'start' | 'end'): Promise<void>;
}

export interface NotebookPanelLike extends WidgetLike {
  readonly content: NotebookLike;
  readonly context: {
    readonly isReady: boolean;
    readonly model: { readonly sharedModel: { readonly awareness?: AwarenessLike | null; readonly ydoc?: Doc } };
  };
}

export interface LabApp {
  readonly shell: { widgets(area?: string): Iterable<WidgetLike> };
}
