import type { CallToolResult, ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import type { OutputResources } from '../resources/index.js';
import { CLIENT_TOKEN_CAP } from '../settings/index.js';
import { CHARS_PER_TOKEN, INLINE_IMAGE_TOKEN_BUDGET, budgetOf, cutLongStrings, imageTokens, prefixWithin, resultTokens } from './result-budget.js';

type Json = Record<string, unknown>;

/** The reference tool-result.ts leaves in the structured content where an image's base64 was. */
const IMAGE_REFERENCE = /^\[image (\d+): ([^,\]]+), (\d+) base64 characters, returned as MCP image content\]$/;

/** Rewrites the references to the images in `moved` (1-based) to name their links instead. */
function retarget(value: unknown, moved: Map<number, string>, depth: number): void {
  if (depth > 8 || value === null || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string') {
      const match = IMAGE_REFERENCE.exec(item);
      const uri = match === null ? undefined : moved.get(Number(match[1]));
      if (match !== null && uri !== undefined) (value as Json)[key] = `[image ${match[1]}: ${match[2]}, ${match[3]} base64 characters, returned as resource link ${uri}]`;
    } else {
      retarget(item, moved, depth + 1);
    }
  }
}

/**
 * Gives a written result its resource links (output-resources.ts), in place: one per image (after the images), one
 * per spill file the structured content names; then holds the result within what a client's tool-result cap allows
 * (result-budget.ts). Images past the inline budget go as links only; if the result still needs more, the whole
 * structured content is kept as a resource and its longest strings are cut, each ending with a note naming it (then,
 * if need be, a value of many small items is cut to a prefix). `text` writes the model's text block from the
 * structured content; `bundles` (the whole display bundles of `_meta`) get the same image references.
 */
export function linkOutputs(result: CallToolResult, structured: Json, text: (structured: Json) => string, outputs: OutputResources, bundles?: unknown[]): void {
  const links: ResourceLink[] = [];
  const kept: CallToolResult['content'] = [];
  const moved = new Map<number, string>();
  const cap = outputs.maxResultTokens;
  const budget = cap === null ? Number.POSITIVE_INFINITY : budgetOf(cap);
  // Images inline take the same share of any cap as of the default one.
  const imageBudget = cap === null ? budget : (INLINE_IMAGE_TOKEN_BUDGET * cap) / CLIENT_TOKEN_CAP;
  let imageNumber = 0;
  let inlineTokens = 0;
  for (const block of result.content) {
    if (block.type !== 'image') {
      kept.push(block);
      continue;
    }
    imageNumber += 1;
    // Decoded once: the kept resource and the token estimate (from its header) read the same bytes.
    const data = Buffer.from(block.data, 'base64');
    const link = outputs.keepImage(block.mimeType, data, imageNumber);
    links.push(link);
    const tokens = imageTokens(data);
    if (inlineTokens + tokens <= imageBudget) {
      inlineTokens += tokens;
      kept.push(block);
    } else {
      moved.set(imageNumber, link.uri);
    }
  }
  for (const stream of ['stdout', 'stderr']) {
    const path = structured[`${stream}_spill`];
    const link = typeof path === 'string' ? outputs.spillLink(path, stream) : undefined;
    if (link !== undefined) links.push(link);
  }
  if (moved.size > 0) {
    retarget(structured, moved, 0);
    if (bundles !== undefined) retarget(bundles, moved, 0);
  }
  result.content = [...kept, ...links];
  const textAt = result.content.findIndex((block) => block.type === 'text');
  const rewrite = (): void => {
    if (textAt >= 0) result.content[textAt] = { type: 'text', text: text(structured) };
  };
  if (moved.size > 0) rewrite();
  if (cap === null) return;
  const over = resultTokens(result, inlineTokens) - budget;
  if (over > 0) fitWithin({ result, structured, rewrite, outputs, imageTokens: inlineTokens, budget }, over);
}

/** What {@link fitWithin} works on: the result, its structured content, how to rewrite its text, and its images' tokens. */
interface Fitting {
  result: CallToolResult;
  structured: Json;
  rewrite: () => void;
  outputs: OutputResources;
  imageTokens: number;
  budget: number;
}

/** Where a result holds a free-form value: execute's `result.value`, call_function's and a dynamic tool's `value`. */
function valueHolder(structured: Json): Json | undefined {
  const result = structured.result;
  if (result !== null && typeof result === 'object' && !Array.isArray(result) && 'value' in result) return result as Json;
  return 'value' in structured ? structured : undefined;
}

/**
 * Cuts long strings until the result is within the budget; the whole structured content is kept as a resource
 * first. Each round cuts the original strings afresh, deeper by what the previous round still overran. A result
 * whose bulk is many small items of a value (a nested list of numbers) then has that value cut to a prefix.
 */
function fitWithin({ result, structured, rewrite, outputs, imageTokens, budget }: Fitting, over: number): void {
  const json = JSON.stringify(structured);
  const whole = outputs.keepResult(json);
  result.content = [...result.content, whole];
  const tail = `cut to fit the client's result cap; whole result: ${whole.uri}]`;
  const note = (omitted: number): string => `…[${omitted} more characters ${tail}`;
  const itemsNote = (omitted: number): string => `…[${omitted} more items ${tail}`;
  let excess = over * CHARS_PER_TOKEN + 512;
  let left = over;
  for (let round = 0; round < 8; round += 1) {
    // The structured content is the result's own object: it is refilled in place from the kept JSON.
    for (const key of Object.keys(structured)) delete structured[key];
    Object.assign(structured, JSON.parse(json) as Json);
    if (!cutLongStrings(structured, excess, note)) break;
    rewrite();
    left = resultTokens(result, imageTokens) - budget;
    if (left <= 0) return;
    excess += left * CHARS_PER_TOKEN + 512;
  }
  const holder = valueHolder(structured);
  if (holder === undefined) return;
  const value = holder.value;
  let allowance = JSON.stringify(value).length;
  for (let round = 0; round < 8 && left > 0 && allowance > 0; round += 1) {
    allowance = Math.max(0, allowance - left * CHARS_PER_TOKEN - 512);
    holder.value = prefixWithin(value, allowance, itemsNote);
    rewrite();
    left = resultTokens(result, imageTokens) - budget;
  }
}
