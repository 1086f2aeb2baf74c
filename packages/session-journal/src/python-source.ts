// JSON values as Python source, so a call_function or dynamic tool call reads (and re-runs) as the call it stands
// for. For the values JSON has, the text equals Python's repr (strings quoted as repr quotes them).

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_DEPTH = 64;

/**
 * A Python string literal, quoted and escaped the way `repr(str)` does it. The one copy in the workspace: the
 * server's result text and Code Mode's generated stubs import it from here, as DESIGN.md lets both import this
 * package and lets this one import nothing of ours.
 * `escapedAlready`: text the value contract already escaped (`encoded` kind `text`: lone surrogates written as
 * `\\udcXX`, its own backslashes doubled), whose backslashes are written as they are.
 */
export function pythonString(text: string, escapedAlready = false): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\\') out += escapedAlready ? '\\' : '\\\\';
    else if (char === quote) out += `\\${quote}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0xd800 && code <= 0xdfff) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return out + quote;
}

/** A JSON value as a Python literal: `null` -> `None`, `true` -> `True`, objects -> dicts. */
export function pythonLiteral(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) return '...';
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return "float('nan')";
    if (!Number.isFinite(value)) return value > 0 ? "float('inf')" : "-float('inf')";
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return pythonString(value);
  if (Array.isArray(value)) return `[${value.map((item) => pythonLiteral(item, depth + 1)).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(([key, item]) => `${pythonString(key)}: ${pythonLiteral(item, depth + 1)}`);
    return `{${entries.join(', ')}}`;
  }
  return pythonString(String(value));
}

/**
 * A call as Python source: `name(a=1, b='x')`. Keys that are not identifiers are passed as `**{...}`, which
 * is how Python spells them.
 */
export function pythonCall(callee: string, args: Record<string, unknown>): string {
  const keywords: string[] = [];
  const others: Record<string, unknown> = {};
  let hasOthers = false;
  for (const [key, value] of Object.entries(args)) {
    if (IDENTIFIER.test(key)) keywords.push(`${key}=${pythonLiteral(value)}`);
    else {
      others[key] = value;
      hasOthers = true;
    }
  }
  if (hasOthers) keywords.push(`**${pythonLiteral(others)}`);
  return `${callee}(${keywords.join(', ')})`;
}
