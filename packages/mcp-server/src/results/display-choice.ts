import { convert, type HtmlToTextOptions } from 'html-to-text';
import { IMAGE_MIME_TYPES } from '@ipython-mcp/protocol';

/**
 * One representation per display for the model. A display bundle carries the same content several times
 * (`display(df)`: `text/plain` and a 1,400-character `text/html` table); a model needs one. The chosen one, in
 * order: an image (PNG/JPEG, sent as MCP image content); else `text/plain` when it says more than a default repr
 * (`<IPython.core.display.HTML object>` does not); else `text/markdown`; else `text/html` turned into text (tables
 * stay tables); else whatever `text/plain` there is. `omitted` names the MIME types left out; the whole bundle
 * stays in the result's `_meta["ipython-mcp/displays"]` for programs.
 */

type Json = Record<string, unknown>;

/** The `_meta` key under which an execute result with displays carries every display's whole bundle. */
export const DISPLAYS_META_KEY = 'ipython-mcp/displays';

/**
 * html-to-text (MIT, htmlparser2-based, no DOM): chosen because it renders tables as aligned text tables rather than
 * flattening them into lines of cells, and drops `<style>`/`<script>` content; turndown would need a DOM
 * implementation and gives Markdown, which is longer for a table. No wrapping: a model reads long lines fine.
 */
const HTML_TO_TEXT: HtmlToTextOptions = {
  wordwrap: false,
  selectors: [
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 60 } },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true, ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
};

/** `<IPython.core.display.HTML object>`, `<__main__.Thing object at 0x7f…>`: a default repr that names only a type. */
const DEFAULT_REPR = /^<[^<>\n]* object(?: at 0x[0-9a-fA-F]+)?>$/;

function informative(text: unknown): text is string {
  return typeof text === 'string' && text.trim().length > 0 && !DEFAULT_REPR.test(text.trim());
}

/** HTML as readable text; the HTML itself when the converter fails (it should not, but a display is never lost). */
export function htmlAsText(html: string): string {
  try {
    // Blank lines around go; leading spaces stay (a table whose first header cell is empty starts with them).
    return convert(html, HTML_TO_TEXT).replace(/^(?:[ \t]*\n)+/, '').trimEnd();
  } catch {
    return html;
  }
}

/** The MIME type a model reads of `data`, and the text to show for it when that is converted HTML. */
function choose(data: Json): { mime: string; text?: string } | undefined {
  for (const mime of IMAGE_MIME_TYPES) if (typeof data[mime] === 'string') return { mime };
  const plain = data['text/plain'];
  if (informative(plain)) return { mime: 'text/plain' };
  if (typeof data['text/markdown'] === 'string') return { mime: 'text/markdown' };
  const html = data['text/html'];
  if (typeof html === 'string' && html.trim().length > 0) return { mime: 'text/html', text: htmlAsText(html) };
  if (typeof plain === 'string') return { mime: 'text/plain' };
  return undefined;
}

/**
 * The display a model reads: `data` holds one representation, `omitted` lists the MIME types left out and
 * `text_from: "text/html"` says that `data["text/plain"]` is the HTML converted to text. A display with nothing to
 * leave out or convert (or nothing this can choose from) is returned as it is.
 */
export function modelDisplay(display: Json): Json {
  const data = display.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return display;
  const mimes = Object.keys(data);
  const chosen = choose(data as Json);
  if (chosen === undefined) return display;
  const omitted = mimes.filter((mime) => mime !== chosen.mime);
  if (omitted.length === 0 && chosen.text === undefined) return display;
  const shown: Json = { ...display };
  if (chosen.text === undefined) {
    shown.data = { [chosen.mime]: (data as Json)[chosen.mime] };
  } else {
    shown.data = { 'text/plain': chosen.text };
    shown.text_from = chosen.mime;
  }
  if (omitted.length > 0) shown.omitted = omitted;
  return shown;
}
