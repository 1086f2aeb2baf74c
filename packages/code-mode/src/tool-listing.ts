import type { ToolFunction } from './tool-functions.js';

/** A group of functions in run_code's description (an MCP server, say), in the order the groups are given. */
export interface FunctionGroup {
  /** Matches {@link ToolDefinition.group} of the functions it holds. */
  name: string;
  /** One status line, such as `ready, 8 tools` or `NOT AVAILABLE (...)`; shown after the name. */
  status?: string | undefined;
}

/** The longest summary line a function gets in the compact listing; the rest of its docstring is one help() away. */
export const MAX_SUMMARY_CHARS = 120;

/**
 * The first sentence of a tool's description, on one line and at most {@link MAX_SUMMARY_CHARS} characters (cut
 * at a word, with an ellipsis). A sentence ends at `.`, `!` or `?` followed by white space, or at a blank line.
 */
export function summaryOf(description: string | undefined, maxChars = MAX_SUMMARY_CHARS): string {
  const text = (description ?? '').trim();
  if (text === '') return '';
  const paragraph = text.split(/\n\s*\n/, 1)[0] ?? '';
  const end = /[.!?](?=\s|$)/.exec(paragraph);
  const sentence = (end === null ? paragraph : paragraph.slice(0, end.index + 1)).replace(/\s+/g, ' ').trim();
  if (sentence.length <= maxChars) return sentence;
  const cut = sentence.slice(0, maxChars - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}…`;
}

/** One function as a one-line stub: its whole signature and the summary of its docstring. */
export function renderCompactStub(tool: ToolFunction): string {
  const summary = summaryOf(tool.definition.description).replaceAll('\\', '\\\\').replaceAll('"""', '\\"\\"\\"');
  const head = `def ${tool.pythonName}${tool.signature}:`;
  return summary === '' ? `${head} ...` : `${head}\n    """${summary}"""`;
}

/** The functions split into their groups: ungrouped ones first, then each group in the given order. */
export function groupFunctions(
  functions: readonly ToolFunction[],
  groups: readonly FunctionGroup[],
): Array<{ group: FunctionGroup | undefined; functions: ToolFunction[] }> {
  const ungrouped = functions.filter((tool) => tool.definition.group === undefined);
  const named = [...groups];
  for (const tool of functions) {
    const name = tool.definition.group;
    if (name !== undefined && !named.some((group) => group.name === name)) named.push({ name });
  }
  const sections: Array<{ group: FunctionGroup | undefined; functions: ToolFunction[] }> = [];
  if (ungrouped.length > 0) sections.push({ group: undefined, functions: ungrouped });
  for (const group of named) sections.push({ group, functions: functions.filter((tool) => tool.definition.group === group.name) });
  return sections;
}

/**
 * The listing of every function: with `namesOnly`, each group's function names on one line; otherwise a Python
 * block of compact stubs per group. Each group opens with its status line (`- name: status`).
 */
export function renderListing(functions: readonly ToolFunction[], groups: readonly FunctionGroup[], namesOnly: boolean): string {
  return groupFunctions(functions, groups)
    .map(({ group, functions: members }) => {
      const lines: string[] = [];
      if (group !== undefined) lines.push(`- ${group.name}${group.status === undefined ? '' : `: ${group.status}`}`);
      if (members.length === 0) return lines.join('\n');
      if (namesOnly) {
        lines.push(`${group === undefined ? '' : '  '}${members.map((tool) => tool.pythonName).join(', ')}`);
      } else {
        lines.push(`\`\`\`python\n${members.map(renderCompactStub).join('\n')}\n\`\`\``);
      }
      return lines.join('\n');
    })
    .join('\n');
}
