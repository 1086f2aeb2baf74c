import type { ToolFunction } from './tool-functions.js';
import { renderListing, type FunctionGroup } from './tool-listing.js';

/** The limits the description states. */
export interface DescriptionLimits {
  /** Calls one run_code call may make. */
  maxToolCalls: number;
  /** Milliseconds one run_code call may run outside tool calls; null for none. */
  timeoutMs: number | null;
}

/**
 * How the functions are listed. By default every function is shown with its signature and the first sentence of
 * its docstring; with `finder` set, only names are listed and the code looks stubs up with that function.
 */
export interface DescriptionLayout {
  /** The groups functions are listed under, with their status lines (see `ToolDefinition.group`). */
  groups?: readonly FunctionGroup[] | undefined;
  /** A paragraph about where the functions come from, placed before the listing. */
  note?: string | undefined;
  /** The Python name of the lookup function; when set, the listing has names only. */
  finder?: string | undefined;
}

/** Describes the `code` input. */
export const CODE_INPUT_DESCRIPTION =
  'Python source to run as one IPython cell. The value of its last expression is returned; use print() for anything else you want to see.';

/** Describes the `restart` input. */
export const RESTART_INPUT_DESCRIPTION =
  'Start a fresh kernel before running the code, discarding every variable, import and definition. Use it only to recover from a broken state.';

/**
 * run_code's description: what the kernel is, how values come back, the limits, and every tool function, grouped,
 * either as a one-line stub (whole signature, first sentence of the docstring) or, with `layout.finder`, by name.
 * The whole docstring stays on the function in the kernel, where help() shows it.
 */
export function renderRunCodeDescription(functions: readonly ToolFunction[], limits: DescriptionLimits, layout: DescriptionLayout = {}): string {
  const timeout =
    limits.timeoutMs === null
      ? 'There is no time limit.'
      : `Each call may run for ${formatSeconds(limits.timeoutMs)}, not counting time spent in tool calls; code still running then is interrupted with KeyboardInterrupt, and code that ignores that for 5 more seconds loses its kernel.`;
  const sections = [
    'Run Python code in a persistent IPython kernel.',
    'Variables, imports, functions and loaded data stay defined from one call to the next. It is full CPython with ' +
      'the packages installed in its environment, and IPython syntax works: magics such as %timeit or %%time, ' +
      '`!` shell escapes such as !ls, and top-level await.',
    'What comes back: the value of the last expression, without print(). A value with a JSON form comes back as ' +
      "data; any other value as its repr, the text IPython would show (a DataFrame comes back as its table). " +
      'Printed output (stdout, stderr and the text of displayed objects, in order) comes back as {"output": ...}, ' +
      'with the value as {"output": ..., "result": ...}; no output and no value gives {}. Images - a PIL image, ' +
      'IPython.display.Image, a displayed matplotlib figure or plt.show() - come back as images you can see. ' +
      'Printed output is capped at 10 MiB per call; the rest is dropped and counted.',
    `If the code raises, you get its printed output and the traceback; what ran before the error is kept. ${timeout} ` +
      'If the kernel process dies, its state is gone and the next call starts a fresh kernel. Pass restart: true to ' +
      'start fresh yourself. input() returns an empty string.',
  ];
  const groups = layout.groups ?? [];
  if (functions.length > 0 || groups.length > 0) {
    const finder = layout.finder;
    sections.push(
      'These functions are defined in the kernel. They are synchronous: call them with keyword arguments and use ' +
        `their return values directly, one call at a time. One run_code call may make at most ${limits.maxToolCalls} ` +
        'calls. A call that fails raises ToolCallError with the tool\'s message; catch it to handle the failure in code.',
    );
    if (layout.note !== undefined) sections.push(layout.note);
    sections.push(
      finder === undefined
        ? 'Each is shown with its signature and the first sentence of its docstring; help(name) or name? shows the ' +
            'whole docstring (every argument and its format).'
        : `Only their names are listed. Look a function up before calling it: print(${finder}(query="a name or words")) ` +
            'prints the signature and whole docstring of the best matches (a lookup counts as a call); help(name) shows one.',
      renderListing(functions, groups, finder !== undefined),
    );
  }
  return sections.join('\n\n');
}

function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  const text = Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
  return `${text} second${seconds === 1 ? '' : 's'}`;
}
