/**
 * Runs of the notebook's own cells: before the agent's `notebook` tool sends a cell's source to the kernel (through
 * the same execute path as any agent call), it claims that source for the cell; when the kernel side reports the
 * request sent with exactly that code, the mirror writes the run's outputs into that cell rather than a new one.
 * Claims are matched by code, oldest first, and withdrawn when the run did not reach the kernel.
 */

/** Pending runs of existing cells, by the code they send. */
export class CellRunClaims {
  readonly #claims: Array<{ readonly code: string; readonly cellId: string }> = [];

  /** Claims the next request that sends `code` for cell `cellId`; returns the withdrawal (idempotent). */
  claim(cellId: string, code: string): () => void {
    const claim = { code, cellId };
    this.#claims.push(claim);
    return () => {
      const index = this.#claims.indexOf(claim);
      if (index >= 0) this.#claims.splice(index, 1);
    };
  }

  /** The cell claimed for a request sending `code`, taken (undefined: an ordinary agent cell). */
  take(code: string): string | undefined {
    if (this.#claims.length === 0) return undefined;
    const index = this.#claims.findIndex((claim) => claim.code === code);
    if (index < 0) return undefined;
    const [claim] = this.#claims.splice(index, 1);
    return claim!.cellId;
  }
}
