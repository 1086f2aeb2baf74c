/** Python's keywords: never usable as names. */
const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for from global if ' +
    'import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
);

/** Names a tool function must not take: builtins, IPython's own bindings, and what Code Mode binds itself. */
const RESERVED_FUNCTION_NAMES = new Set([
  ...KEYWORDS,
  ...(
    'ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError BrokenPipeError ' +
    'BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError ' +
    'ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception ExceptionGroup ' +
    'FileExistsError FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning ' +
    'IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError ' +
    'ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError OverflowError ' +
    'PendingDeprecationWarning PermissionError ProcessLookupError RecursionError ReferenceError ResourceWarning ' +
    'RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError SystemExit ' +
    'TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError ' +
    'UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning ZeroDivisionError abs aiter all anext any ' +
    'ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits delattr dict ' +
    'dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input ' +
    'int isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow print ' +
    'property quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip ' +
    'In Out get_ipython display ToolCallError'
  ).split(' '),
]);

/**
 * A Python identifier for `name`: every run of characters outside `[A-Za-z0-9_]` becomes one `_`
 * (`get-weather` → `get_weather`), a leading digit gets a `tool_` prefix, an empty result becomes `tool`, and a
 * keyword or (for functions) a builtin or reserved name gets a trailing `_` (`print` → `print_`).
 */
export function toPythonIdentifier(name: string, kind: 'function' | 'parameter' = 'function'): string {
  let identifier = name.replace(/[^A-Za-z0-9_]+/g, '_');
  if (identifier === '' || identifier === '_') identifier = kind === 'function' ? 'tool' : 'value';
  if (/^[0-9]/.test(identifier)) identifier = `${kind === 'function' ? 'tool' : 'arg'}_${identifier}`;
  const reserved = kind === 'function' ? RESERVED_FUNCTION_NAMES : KEYWORDS;
  if (reserved.has(identifier)) identifier = `${identifier}_`;
  return identifier;
}

/** Whether `name` is a Python identifier Code Mode may bind as a function (ASCII only, not reserved). */
export function isUsablePythonName(name: string, kind: 'function' | 'parameter' = 'function'): boolean {
  return toPythonIdentifier(name, kind) === name;
}

/**
 * Assigns each name a distinct Python identifier, independent of input order: names that are already usable
 * keep themselves; the others, in sorted order, take their {@link toPythonIdentifier} form, or that form with
 * `_2`, `_3`, ... when it is taken. Returns original name → identifier. `names` must be distinct.
 */
export function assignPythonNames(names: readonly string[], kind: 'function' | 'parameter' = 'function'): Map<string, string> {
  const assigned = new Map<string, string>();
  const taken = new Set<string>();
  for (const name of names) {
    if (isUsablePythonName(name, kind)) {
      assigned.set(name, name);
      taken.add(name);
    }
  }
  const renamed = names.filter((name) => !assigned.has(name)).sort(compareCodeUnits);
  for (const name of renamed) {
    const base = toPythonIdentifier(name, kind);
    let candidate = base;
    for (let suffix = 2; taken.has(candidate); suffix += 1) candidate = `${base}_${suffix}`;
    assigned.set(name, candidate);
    taken.add(candidate);
  }
  return assigned;
}

function compareCodeUnits(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
