import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_TOKEN_CAP } from '../settings/index.js';

/**
 * What one tool result may need of a client's tool-result cap. Anthropic's clients cap a result (Claude Code:
 * 25,000 tokens by default) and cut or refuse a longer one. A result is estimated conservatively: the longer of what
 * Claude Code forwards (the JSON of the structured content) and what Codex forwards (the text block), plus any
 * resource links, at {@link CHARS_PER_TOKEN} characters a token (English prose runs near 4, JSON and code nearer 3),
 * and each image by Anthropic's formula ({@link imageTokens}). A result over {@link RESULT_TOKEN_BUDGET} moves the
 * excess behind resource links (tool-result.ts): images past {@link INLINE_IMAGE_TOKEN_BUDGET} go as links only,
 * and long strings are cut, the whole result kept as a resource.
 */

/** What a result may need of a cap: the cap less a margin (12 %) for what the estimate cannot see (the client's own framing). */
export function budgetOf(cap: number): number {
  return Math.floor(cap * 0.88);
}

/** What a result may need at most under the default cap: 22,000 tokens. */
export const RESULT_TOKEN_BUDGET = budgetOf(CLIENT_TOKEN_CAP);

/** Of the default budget, what the images sent inline may take together (seven of the largest; the same share of another cap); later images go as links. */
export const INLINE_IMAGE_TOKEN_BUDGET = 11_200;

/** Characters per token the estimate assumes. */
export const CHARS_PER_TOKEN = 3;

/** Anthropic's ceiling on one image: the API scales a larger one down to about this many tokens. */
export const MAX_IMAGE_TOKENS = 1_600;
const MAX_LONG_EDGE = 1568;

/** An image's width and height from its PNG or JPEG header, or undefined when it cannot tell. */
export function imageSize(raw: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  // PNG: the signature, then IHDR with width and height.
  if (raw.length >= 24 && raw[0] === 0x89 && raw[1] === 0x50 && raw[12] === 0x49 && raw[13] === 0x48) {
    return { width: view.getUint32(16), height: view.getUint32(20) };
  }
  // JPEG: walk the segments to the first start-of-frame.
  if (raw.length >= 4 && raw[0] === 0xff && raw[1] === 0xd8) {
    let at = 2;
    while (at + 9 <= raw.length) {
      if (raw[at] !== 0xff) return undefined;
      const marker = raw[at + 1] as number;
      if (marker === 0xff) {
        at += 1;
        continue;
      }
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
        at += 2;
        continue;
      }
      const length = view.getUint16(at + 2);
      const frame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (frame) return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
      at += 2 + length;
    }
  }
  return undefined;
}

/**
 * Tokens an image costs by Anthropic's formula: width × height / 750, after the long edge is scaled to 1,568 px,
 * and at most {@link MAX_IMAGE_TOKENS}; an image whose size cannot be read counts as the most.
 */
export function imageTokens(raw: Uint8Array): number {
  const size = imageSize(raw);
  if (size === undefined || size.width <= 0 || size.height <= 0) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_LONG_EDGE / Math.max(size.width, size.height));
  return Math.min(MAX_IMAGE_TOKENS, Math.ceil((size.width * scale * (size.height * scale)) / 750));
}

/** Base64 characters of an image decoded to find its size: 64 KiB, past any header a PNG or a camera JPEG has. */
const HEADER_BASE64_CHARS = 87_384;

/** {@link imageTokens} of a base64 image, decoding only its start. */
export function base64ImageTokens(base64: string): number {
  return imageTokens(Buffer.from(base64.slice(0, HEADER_BASE64_CHARS), 'base64'));
}

/**
 * The estimate of what `result` needs of a client's cap (see the module's note). `imageTokenSum`, when the caller
 * has it, saves decoding the image blocks again.
 */
export function resultTokens(result: CallToolResult, imageTokenSum?: number): number {
  let text = 0;
  let links = 0;
  let images = 0;
  for (const block of result.content) {
    if (block.type === 'text') text += block.text.length;
    else if (block.type === 'image') images += imageTokenSum === undefined ? base64ImageTokens(block.data) : 0;
    else links += JSON.stringify(block).length;
  }
  images += imageTokenSum ?? 0;
  const structured = result.isError !== true && result.structuredContent !== undefined ? JSON.stringify(result.structuredContent).length : 0;
  return Math.ceil((Math.max(text, structured) + links) / CHARS_PER_TOKEN) + images;
}

/** Strings no longer than this (JSON characters) are never cut. */
const MIN_KEPT_CHARS = 240;

interface Place {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  value: string;
  weight: number;
}

function longStrings(value: unknown, found: Place[], depth: number): void {
  if (depth > 64 || value === null || typeof value !== 'object') return;
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof item === 'string') {
      const weight = JSON.stringify(item).length;
      if (weight > MIN_KEPT_CHARS) found.push({ holder: value as Place['holder'], key, value: item, weight });
    } else {
      longStrings(item, found, depth + 1);
    }
  }
}

/**
 * Cuts the longest strings in `structured` (in place) so that together they lose at least `excess` JSON characters:
 * every string above a waterline is cut to it, `note(omitted)` included at its end (the line never goes below
 * {@link MIN_KEPT_CHARS}).
 * Returns whether anything was cut.
 */
export function cutLongStrings(structured: Record<string, unknown>, excess: number, note: (omitted: number) => string): boolean {
  const found: Place[] = [];
  longStrings(structured, found, 0);
  if (found.length === 0) return false;
  found.sort((a, b) => b.weight - a.weight);
  let line = MIN_KEPT_CHARS;
  let sum = 0;
  for (let index = 0; index < found.length; index += 1) {
    sum += (found[index] as Place).weight;
    const level = Math.floor((sum - excess) / (index + 1));
    const next = found[index + 1]?.weight ?? 0;
    if (level >= next) {
      line = Math.max(MIN_KEPT_CHARS, level);
      break;
    }
  }
  let cut = false;
  for (const place of found) {
    if (place.weight <= line) continue;
    // Characters kept in proportion to JSON weight (escapes make a character weigh more than one), the note
    // included in the line.
    const room = Math.max(0, line - note(place.value.length).length);
    const kept = Math.floor((place.value.length * room) / place.weight);
    const shown = place.value.slice(0, kept);
    (place.holder as Record<string | number, unknown>)[place.key] = `${shown}${note(place.value.length - shown.length)}`;
    cut = true;
  }
  return cut;
}

/** A JSON value that holds at most about `allowance` JSON characters: see {@link prefixWithin}. */
interface Allowance {
  left: number;
}

function within(value: unknown, allowance: Allowance, note: (omittedItems: number) => string, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 64) {
    allowance.left -= value === undefined ? 0 : JSON.stringify(value).length + 1;
    return value;
  }
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (let index = 0; index < value.length; index += 1) {
      if (allowance.left <= 0) {
        kept.push(note(value.length - index));
        break;
      }
      kept.push(within(value[index], allowance, note, depth + 1));
    }
    return kept;
  }
  const entries = Object.entries(value);
  const kept: Record<string, unknown> = {};
  for (let index = 0; index < entries.length; index += 1) {
    const [key, item] = entries[index] as [string, unknown];
    if (allowance.left <= 0) {
      kept['…'] = note(entries.length - index);
      break;
    }
    allowance.left -= key.length + 3;
    kept[key] = within(item, allowance, note, depth + 1);
  }
  return kept;
}

/**
 * The longest prefix of a free-form JSON value (depth first) that takes about `allowance` JSON characters: each
 * list or mapping cut short ends with `note(items left out)` (a last item, or a `"…"` key). For values only (their
 * schema is any JSON), where a result's bulk is many small items rather than long strings.
 */
export function prefixWithin(value: unknown, allowance: number, note: (omittedItems: number) => string): unknown {
  return within(value, { left: allowance }, note, 0);
}
