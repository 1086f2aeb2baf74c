/**
 * One agent cell's outputs and how they reach the shared document. A JupyterLab page applies a remote change to a
 * cell's output list as it applies its own kernel's outputs: an inserted output is appended to its list (merged into
 * the last one when both are the same stream, and that merge is written back to the document), a deleted one is
 * removed at its index, and text added to a stream's `Y.Text` is appended to its last output. Replacing the whole
 * list on every write (what `setOutputs` does) therefore makes the page merge the new stream into the old one, write
 * the merged text back (the saved file then holds the stream twice), and delete the merged output (the page shows
 * nothing, or only the last kind of output). So this module writes only what a page applies faithfully: text added at
 * the end of the last stream, outputs added at the end, and deletions from an index to the end in their own
 * transaction before anything is added after them.
 */
import type { YCodeCell } from '@jupyter/ydoc';

/** An output in nbformat's shape (a stream's text as one string). */
export type NbOutput = Record<string, unknown>;

interface Stream extends NbOutput {
  output_type: 'stream';
  name: string;
  text: string;
}

function isStream(output: NbOutput | undefined): output is Stream {
  return output?.output_type === 'stream' && typeof output.text === 'string';
}

/** The outputs a cell should hold, what was last written of them, and the ranged writes between the two. */
export class CellOutputs {
  /** What the cell should hold now. An output is replaced by a new object when it changes, never mutated. */
  #wanted: NbOutput[] = [];
  /** The display id of each wanted output (nbformat has no place for it in a saved output). */
  #displayIds: Array<string | undefined> = [];
  /** What the document holds (the objects last written, in order). */
  #written: NbOutput[] = [];

  /** Characters of the outputs kept so far (their JSON; a stream's text), for the cell's bound. */
  chars = 0;

  /** The outputs as the cell should hold them. */
  get wanted(): readonly NbOutput[] {
    return this.#wanted;
  }

  /** Adds `text` to the last output when it is the same stream, else a new stream output. */
  appendStream(name: string, text: string): void {
    const last = this.#wanted.at(-1);
    if (isStream(last) && last.name === name) {
      this.#wanted[this.#wanted.length - 1] = { ...last, text: last.text + text };
      return;
    }
    this.add({ output_type: 'stream', name, text }, undefined);
  }

  /** Adds an output at the end. */
  add(output: NbOutput, displayId: string | undefined): void {
    this.#wanted.push(output);
    this.#displayIds.push(displayId);
  }

  /** Replaces the data of every output shown under `displayId` (update_display_data). */
  updateDisplay(displayId: string, data: unknown, metadata: unknown): void {
    this.#wanted = this.#wanted.map((each, index) => (this.#displayIds[index] === displayId ? { ...each, data, metadata } : each));
  }

  /** Sets the outputs the cell should hold (an ended run's, for a copy of its cell). */
  replace(outputs: readonly NbOutput[]): void {
    this.#wanted = [...outputs];
    this.#displayIds = outputs.map(() => undefined);
    this.#match();
  }

  /** Empties the cell (clear_output). */
  clear(): void {
    this.#wanted = [];
    this.#displayIds = [];
    this.chars = 0;
  }

  /** Writes into `cell` what changed since the last write, as ranged updates a page applies as they are meant. */
  write(cell: YCodeCell): void {
    const wanted = this.#wanted;
    const written = this.#written;
    let same = 0;
    while (same < written.length && same < wanted.length && written[same] === wanted[same]) same += 1;
    const before = written[same];
    const now = wanted[same];
    if (same === written.length - 1 && isStream(before) && isStream(now) && now.name === before.name && now.text.startsWith(before.text)) {
      // The last stream grew: its new text is appended in place (the page appends it to its last output).
      if (now.text.length > before.text.length) cell.appendStreamOutput(same, now.text.slice(before.text.length));
      same += 1;
    }
    // Each its own transaction: a page applies a deletion and an insertion of one change in the wrong order.
    if (written.length > same) cell.updateOutputs(same, written.length, []);
    if (wanted.length > same) cell.updateOutputs(same, same, wanted.slice(same) as never);
    this.#written = [...wanted];
  }

  /**
   * Takes a cell that holds what was written (the same cell brought back by the person's undo, as a new object):
   * later writes go on from there.
   */
  adopt(cell: YCodeCell): void {
    this.#written = cell.getOutputs().map((each) => ({ ...each, ...(isStreamLike(each) ? { text: textOf(each.text) } : {}) }));
    this.#match();
  }

  /** Takes a cell's outputs as they are as what it should hold, to add to them (a cell another ipython-mcp left). */
  takeOver(cell: YCodeCell): void {
    this.adopt(cell);
    this.#wanted = [...this.#written];
    this.#displayIds = this.#written.map(() => undefined);
  }

  /** Takes each written output that equals the wanted one at its index as that one: it is not written again. */
  #match(): void {
    this.#written = this.#written.map((each, index) => (index < this.#wanted.length && equal(each, this.#wanted[index]) ? this.#wanted[index]! : each));
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a).filter((key) => (a as Record<string, unknown>)[key] !== undefined);
  const other = Object.keys(b).filter((key) => (b as Record<string, unknown>)[key] !== undefined);
  return keys.length === other.length && keys.every((key) => equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function isStreamLike(output: NbOutput): boolean {
  return output.output_type === 'stream';
}

function textOf(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join('') : String(value ?? '');
}
