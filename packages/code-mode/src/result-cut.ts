/**
 * The largest result run_code returns: 10 MiB (UTF-8 bytes of its compact JSON), the cap printed output has. The
 * worker stops translating the value where this budget runs out, so a huge result costs no more than this.
 */
export const MAX_RESULT_BYTES = 10 * 1024 * 1024;
/** Containers nested deeper than this come back as the string "…" (and the model is told how many). */
export const MAX_RESULT_DEPTH = 32;

/**
 * What bounding a result dropped, counted exactly where each cut was made (the worker's `result_cut`):
 * `items` list items and dict entries left out (not counting what they contained), `chars` characters cut
 * from the ends of strings, `deep` containers replaced by "…", `size` whether the 10 MiB budget ran out; for a
 * repr result, `reprChars` characters cut from its end (`null`: the rest was never built, so not counted).
 */
export type ResultCut =
  | { kind: 'json'; items: number; chars: number; deep: number; size: boolean }
  | { kind: 'repr'; reprChars: number | null };

/** Reads the worker's `result_cut` (null when nothing was cut); anything malformed counts as no report. */
export function parseResultCut(raw: unknown): ResultCut | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const record = raw as Record<string, unknown>;
  if ('repr_chars' in record) return { kind: 'repr', reprChars: isCount(record.repr_chars) ? record.repr_chars : null };
  const count = (value: unknown): number => (isCount(value) ? value : 0);
  return { kind: 'json', items: count(record.items), chars: count(record.chars), deep: count(record.deep), size: record.size === true };
}

/** The note the model reads about a cut result, with the exact counts; undefined when nothing was cut. */
export function describeResultCut(cut: ResultCut | null): string | undefined {
  if (cut === null) return undefined;
  if (cut.kind === 'repr') {
    const rest = cut.reprChars === null ? 'the rest was dropped' : `${number(cut.reprChars)} more characters were dropped`;
    return `[result cut: its repr is longer than run_code returns, so only its start is shown; ${rest}]`;
  }
  const sentences: string[] = [];
  const dropped = [
    cut.items > 0 ? `${number(cut.items)} more list items or dict entries` : '',
    cut.chars > 0 ? `${number(cut.chars)} characters at the ends of strings` : '',
  ].filter((part) => part !== '');
  if (dropped.length > 0) {
    const why = cut.size ? `it is larger than the ${number(MAX_RESULT_BYTES)} bytes (10 MiB) of JSON run_code returns` : 'it is over the size limits';
    sentences.push(`${why}; dropped: ${dropped.join(' and ')}`);
  }
  if (cut.deep > 0) {
    const containers = cut.deep === 1 ? '1 container nested deeper than' : `${number(cut.deep)} containers nested deeper than`;
    sentences.push(`${containers} ${MAX_RESULT_DEPTH} levels ${cut.deep === 1 ? 'was' : 'were'} replaced with "…"`);
  }
  return `[result cut: ${sentences.join('; ')}. Return a slice, a summary, or the nested part itself to see the rest.]`;
}

function number(value: number): string {
  return value.toLocaleString('en-US');
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
