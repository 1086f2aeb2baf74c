/**
 * The UTF-16 index of code point `points` of `text`: the worker counts code points (Python `str` indices), JavaScript
 * strings count UTF-16 units. Where a head-and-tail stream was cut (`<stream>_omitted_at`) is such a count; the
 * journal's stream output and the server's result text both find the cut with this one function.
 */
export function codePointIndex(text: string, points: number): number {
  let index = 0;
  for (let seen = 0; seen < points && index < text.length; seen += 1) {
    const unit = text.charCodeAt(index);
    const low = index + 1 < text.length ? text.charCodeAt(index + 1) : 0;
    index += unit >= 0xd800 && unit <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
  }
  return index;
}
