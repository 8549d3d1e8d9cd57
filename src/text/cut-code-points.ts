/**
 * The first `maxCodePoints` code points of `text` (all of it when shorter), never half of a
 * surrogate pair. Walks only as far as it keeps, so cutting a long text costs the part kept.
 *
 * @example cutToCodePoints('a😀b', 2) // 'a😀'
 */
export function cutToCodePoints(text: string, maxCodePoints: number): string {
  // UTF-16 units are never fewer than code points.
  if (text.length <= maxCodePoints) return text;
  let end = 0;
  for (let kept = 0; kept < maxCodePoints && end < text.length; kept++) {
    end += (text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  }
  return text.slice(0, end);
}
