import { positiveTerms, type SearchQuery, type SearchTerm } from './search-query.js';
import { searchTokenSpans, type TokenSpan } from './search-text.js';

export const DEFAULT_SNIPPET_LENGTH = 200;
/** Room for both ellipses, both hit markers and one character. */
export const MIN_SNIPPET_LENGTH = 5;

const HIT_START = '«';
const HIT_END = '»';
const CUT = '…';
const COMBINING_MARK = /^\p{M}$/u;

/** A stretch of the snippet's characters, as code point indices (end exclusive). */
interface Stretch {
  readonly start: number;
  readonly end: number;
}

/**
 * A plain-text excerpt of `text` (already stripped of ANSI) of at most `maxLength` characters —
 * code points, markers and ellipses included — around the first hit of the query's positive
 * terms, every hit in it wrapped in `«…»`. Whitespace runs become one space; cuts fall between
 * words where they can and are marked with `…`. With no hit in `text` (the match was in another
 * field) it is the start of the text.
 *
 * @example searchSnippet('Selling my US Robotics modem,\n\nbarely used.', parseSearchQuery('modem'))
 * // 'Selling my US Robotics «modem», barely used.'
 */
export function searchSnippet(text: string, query: SearchQuery, maxLength = DEFAULT_SNIPPET_LENGTH): string {
  if (!Number.isInteger(maxLength) || maxLength < MIN_SNIPPET_LENGTH) {
    throw new RangeError(`maxLength must be an integer of at least ${MIN_SNIPPET_LENGTH}.`);
  }
  const plain = text.replace(/\s+/gu, ' ').trim();
  const characters = Array.from(plain);
  const hits = findHits(plain, positiveTerms(query));
  return render(characters, hits, chooseWindow(characters, hits, maxLength));
}

/** Every place a term matches, as code point stretches of `plain`, overlapping ones merged, in order. */
function findHits(plain: string, terms: readonly SearchTerm[]): Stretch[] {
  const spans = codePointSpans(plain);
  const found: Stretch[] = [];
  for (const [first, span] of spans.entries()) {
    for (const term of terms) {
      const last = spans[first + term.tokens.length - 1];
      if (last && isTermAt(spans, first, term)) found.push({ start: span.start, end: last.end });
    }
  }
  found.sort((a, b) => a.start - b.start || a.end - b.end);

  const merged: Stretch[] = [];
  for (const hit of found) {
    const previous = merged[merged.length - 1];
    if (previous && hit.start < previous.end) {
      merged[merged.length - 1] = { start: previous.start, end: Math.max(previous.end, hit.end) };
    } else {
      merged.push(hit);
    }
  }
  return merged;
}

function isTermAt(spans: readonly TokenSpan[], first: number, term: SearchTerm): boolean {
  const lastIndex = term.tokens.length - 1;
  return term.tokens.every((token, index) => {
    const written = spans[first + index]?.token ?? '';
    return term.isPrefix && index === lastIndex ? written.startsWith(token) : written === token;
  });
}

/** `searchTokenSpans(plain)` with code point offsets instead of UTF-16 ones. */
function codePointSpans(plain: string): TokenSpan[] {
  let offset = 0;
  let codePoints = 0;
  const advanceTo = (target: number): number => {
    for (; offset < target; codePoints += 1) offset += (plain.codePointAt(offset) ?? 0) > 0xffff ? 2 : 1;
    return codePoints;
  };
  return searchTokenSpans(plain).map(({ token, start, end }) => ({
    token,
    start: advanceTo(start),
    end: advanceTo(end),
  }));
}

/**
 * Where the snippet starts and ends: from the start of the text when that shows the whole first
 * hit, else from a word a little before the hit (a quarter of the length at most), then as far as
 * fits. A window that reaches the end of the text is moved back to use the room left.
 */
function chooseWindow(characters: readonly string[], hits: readonly Stretch[], maxLength: number): Stretch {
  const firstHit = hits[0];
  const endFromTop = fitEnd(characters, hits, 0, maxLength, firstHit?.end ?? 0);
  if (!firstHit || endFromTop >= firstHit.end) return { start: 0, end: endFromTop };

  // The lead before the hit leaves room for the hit itself, both markers and both ellipses.
  const hitLength = firstHit.end - firstHit.start;
  const lead = Math.max(0, Math.min(Math.floor(maxLength / 4), maxLength - 4 - hitLength));
  let start = firstHit.start;
  for (let candidate = Math.max(1, firstHit.start - lead); candidate < firstHit.start; candidate += 1) {
    if (characters[candidate - 1] === ' ') {
      start = candidate;
      break;
    }
  }
  const end = fitEnd(characters, hits, start, maxLength, firstHit.end);
  if (end < characters.length) return { start, end };

  for (let candidate = start - 1; candidate >= Math.max(0, end - maxLength); candidate -= 1) {
    if (candidate > 0 && characters[candidate - 1] !== ' ') continue;
    if (renderedLength(characters, hits, { start: candidate, end }) > maxLength) break;
    start = candidate;
  }
  return { start, end };
}

/**
 * The furthest end from `start` that fits: the last word boundary that fits, unless that would
 * hide part of the first hit (before `mustReach`) or show nothing — then a cut inside a word,
 * never between a letter and its combining marks when it can help it.
 */
function fitEnd(
  characters: readonly string[],
  hits: readonly Stretch[],
  start: number,
  maxLength: number,
  mustReach: number,
): number {
  const limit = Math.min(characters.length, start + maxLength);
  let wordEnd = start;
  for (let end = start + 1; end <= limit; end += 1) {
    if (end < characters.length && characters[end] !== ' ') continue;
    // The length only grows with `end`, so the first boundary that does not fit ends the search.
    if (renderedLength(characters, hits, { start, end }) > maxLength) break;
    wordEnd = end;
  }
  if (wordEnd > start && wordEnd >= mustReach) return wordEnd;

  let end = start;
  while (end < limit && renderedLength(characters, hits, { start, end: end + 1 }) <= maxLength) end += 1;
  while (end > start + 1 && COMBINING_MARK.test(characters[end] ?? '')) end -= 1;
  return end;
}

function renderedLength(characters: readonly string[], hits: readonly Stretch[], window: Stretch): number {
  let length = window.end - window.start;
  if (window.start > 0) length += CUT.length;
  if (window.end < characters.length) length += CUT.length;
  for (const hit of hits) {
    if (hit.start >= window.end) break;
    if (hit.end > window.start) length += HIT_START.length + HIT_END.length;
  }
  return length;
}

function render(characters: readonly string[], hits: readonly Stretch[], window: Stretch): string {
  const pieces = [window.start > 0 ? CUT : ''];
  let position = window.start;
  for (const hit of hits) {
    if (hit.start >= window.end) break;
    if (hit.end <= window.start) continue;
    const hitStart = Math.max(hit.start, window.start);
    const hitEnd = Math.min(hit.end, window.end);
    pieces.push(
      characters.slice(position, hitStart).join(''),
      HIT_START,
      characters.slice(hitStart, hitEnd).join(''),
      HIT_END,
    );
    position = hitEnd;
  }
  pieces.push(characters.slice(position, window.end).join(''), window.end < characters.length ? CUT : '');
  return pieces.join('');
}
