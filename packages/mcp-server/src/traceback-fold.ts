import { resolve, sep } from 'node:path';

/**
 * Tracebacks a model can read. IPython shows every frame with five lines of context, so a `KeyError` from
 * `df['nope']` is 2,000 characters of pandas internals and Cython frames saying "Could not get source". What a
 * model needs is its own line, where the call went, and the exception: so frames of the user's cells, of files under
 * the configured library paths and of any other file of the user's stay whole, while library frames (site-packages,
 * the standard library, Cython sources named by a relative path, `<frozen …>` modules) become one line each
 * (`pandas/core/indexes/base.py:3816 in get_loc`), and a run of more than {@link MAX_RUN} of them shows its first and
 * last frame around a count. Everything that is not a frame (exception lines, "The above exception was the direct
 * cause…", the header of each chained traceback) stays as it is. The input is IPython's text with its banner and
 * colours already removed (compact-result.ts `cleanTraceback`).
 */

/** A run of collapsed library frames longer than this shows only its first and last frame. */
export const MAX_RUN = 3;

/** `File /path/to/module.py:3816, in Index.get_loc(self, key)` (IPython 8+ context and verbose modes). */
const FRAME_HEADER = /^File (.+?):(\d+), in (.+)$/;
/** `Cell In[6], line 1`: the user's own cell. */
const CELL_HEADER = /^Cell In\[\d+\], line \d+/;
/** A source line of a frame: `   3815 try:`, `-> 3816     return …`, `----> 1 df['nope']`. */
const SOURCE_LINE = /^(?:\s*\d+(?:\s|$)|-*>\s*\d+(?:\s|$))/;
/** The library roots whose paths are shown from below them. */
const LIBRARY_ROOT = /[\\/](?:site-packages|dist-packages)(?=[\\/])|[\\/]lib[\\/]python\d+(?:\.\d+)?t?(?=[\\/])/gi;

interface Frame {
  header: string;
  body: string[];
  /** The one-line form, when the frame is a library frame. */
  short?: string;
}

/** The one-line form of a library frame, or undefined for a frame that stays whole. */
function libraryLine(file: string, line: string, where: string, trusted: readonly string[]): string | undefined {
  const absolute = file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file);
  if (absolute && trusted.some((root) => file === root || file.startsWith(root.endsWith(sep) ? root : root + sep))) return undefined;
  let shown: string | undefined;
  // The last library root (`lib/python3.11/site-packages/` holds two): the path is shown from its package on.
  let end = -1;
  for (const root of file.matchAll(LIBRARY_ROOT)) end = root.index + root[0].length + 1;
  if (end >= 0) {
    shown = file.slice(end);
  } else if (file.startsWith('<frozen ') || (!absolute && !file.startsWith('<'))) {
    shown = file; // a frozen stdlib module, or a Cython source (pandas/_libs/index.pyx) named relative to its package
  }
  if (shown === undefined) return undefined;
  const name = where.replace(/\(.*$/s, '').split('.').pop() ?? where;
  return `${shown}:${line} in ${name}`;
}

function parse(lines: readonly string[], trusted: readonly string[]): Array<string | Frame> {
  const parts: Array<string | Frame> = [];
  let frame: Frame | undefined;
  for (const line of lines) {
    const header = FRAME_HEADER.exec(line);
    if (header !== null || CELL_HEADER.test(line)) {
      frame = { header: line, body: [] };
      const short = header === null ? undefined : libraryLine(header[1]!, header[2]!, header[3]!, trusted);
      if (short !== undefined) frame.short = short;
      parts.push(frame);
    } else if (frame !== undefined && SOURCE_LINE.test(line)) {
      frame.body.push(line);
    } else {
      frame = undefined;
      parts.push(line);
    }
  }
  return parts;
}

/**
 * `traceback` with library frames collapsed to one line each and long runs of them folded; the same string when
 * nothing changed. `trustedPaths` are the configured library directories (`IPYTHON_MCP_LIBRARY_PATHS`), whose frames
 * stay whole.
 */
export function foldTraceback(traceback: string, trustedPaths: readonly string[] = []): string {
  const trusted = trustedPaths.map((path) => resolve(path));
  const parts = parse(traceback.split('\n'), trusted);
  if (!parts.some((part) => typeof part !== 'string' && part.short !== undefined)) return traceback;
  const out: string[] = [];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length > MAX_RUN) out.push(run[0]!, `... ${run.length - 2} more library frames ...`, run[run.length - 1]!);
    else out.push(...run);
    run = [];
  };
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index]!;
    if (typeof part === 'string') {
      // The blank line IPython puts after a frame goes with the frame when the frame became one line.
      const previous = parts[index - 1];
      if (part === '' && run.length > 0 && typeof previous !== 'string' && previous?.short !== undefined) continue;
      flush();
      out.push(part);
    } else if (part.short !== undefined) {
      run.push(part.short);
    } else {
      flush();
      out.push(part.header, ...part.body);
    }
  }
  flush();
  return out.join('\n');
}
