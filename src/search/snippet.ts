import { positiveTerms, type SearchQuery, type SearchTerm } from './search-query.js';
import { MAX_TOKEN_LENGTH, searchTokenSpans, type TokenSpan } from './search-text.js';

export const DEFAULT_SNIPPET_LENGTH = 200;
/** Room for both ellipses, both hit markers and one character. */
export const MIN_SNIPPET_LENGTH = 5;
/**
 * How far into a text (UTF-16 units, from its first non-space) a snippet looks for hits. A body
 * may hold 64 KiB; past this, a hit is not looked for and the snippet is the start of the text.
 * A snippet shows a window of a few hundred characters, so a bound here caps the cost of a page
 * of snippets whatever the bodies hold: 20 bodies of `a ` × 32,000 with a 16-term query cost
 * 132 ms a snippet when every token was tried against every term of the whole body.
 */
export const MAX_SNIPPET_SCAN = 8192;

const HIT_START = '«';
const HIT_END = '»';
/**
 * The markers as written in the text itself, shown as single guillemets: a body holding
 * `«injected»` must not look like a hit to a client that splits on the markers. One code point
 * each, so lengths do not change.
 */
const WRITTEN_MARKERS: Readonly<Record<string, string>> = { [HIT_START]: '‹', [HIT_END]: '›' };
const WRITTEN_MARKER = /[«»]/gu;
const CUT = '…';
const COMBINING_MARK = /^\p{M}$/u;
const NOT_SPACE = /\S/u;
/** A UTF-16 unit that can be part of a token (surrogates count: an astral letter is two units). */
const TOKEN_UNIT = /[\p{L}\p{N}\p{M}\uD800-\uDFFF]/u;

/** A stretch of the snippet's characters, as code point indices (end exclusive). */
interface Stretch {
  readonly start: number;
  readonly end: number;
}

/** The part of a text a snippet is cut from, as code points, and whether the text goes on after it. */
interface Scanned {
  readonly characters: readonly string[];
  /** True when text was left out after `characters`: an end there still gets `…`. */
  readonly isCut: boolean;
  /** Every hit in `characters`, in order, none overlapping. */
  readonly hits: readonly Stretch[];
}

/**
 * A plain-text excerpt of `text` (already stripped of ANSI) of at most `maxLength` characters —
 * code points, markers and ellipses included — around the first hit of the query's positive
 * terms, every hit in it wrapped in `«…»` (and only hits: `«` and `»` of the text show as `‹` and `›`). Whitespace runs become one space; cuts fall between
 * words where they can and are marked with `…`. With no hit in the first MAX_SNIPPET_SCAN
 * characters of `text` (the match was in another field, or further on) it is the start of the text.
 * Linear in the scanned part and the number of distinct terms.
 *
 * @example searchSnippet('Selling my US Robotics modem,\n\nbarely used.', parseSearchQuery('modem'))
 * // 'Selling my US Robotics «modem», barely used.'
 */
export function searchSnippet(text: string, query: SearchQuery, maxLength = DEFAULT_SNIPPET_LENGTH): string {
  if (!Number.isInteger(maxLength) || maxLength < MIN_SNIPPET_LENGTH) {
    throw new RangeError(`maxLength must be an integer of at least ${MIN_SNIPPET_LENGTH}.`);
  }
  const trimmed = text.trimStart();
  const cut = trimmed.length > MAX_SNIPPET_SCAN ? scanCut(trimmed) : trimmed.length;
  const scanned = trimmed.slice(0, cut).replace(/\s+/gu, ' ').trimEnd();
  const excerpt: Scanned = {
    characters: Array.from(scanned),
    isCut: NOT_SPACE.test(trimmed.slice(cut)),
    hits: findHits(scanned, distinctTerms(positiveTerms(query))),
  };
  return render(excerpt, chooseWindow(excerpt, maxLength));
}

/**
 * Where to stop scanning a text longer than MAX_SNIPPET_SCAN: never inside a surrogate pair, and
 * before a word the bound would cut (`modem` cut to `mod` would be a hit for `mod`), unless that
 * word is longer than any token is compared (MAX_TOKEN_LENGTH code points, so at most four times
 * as many UTF-16 units with their marks).
 */
function scanCut(text: string): number {
  const bound = isLowSurrogate(text, MAX_SNIPPET_SCAN) ? MAX_SNIPPET_SCAN - 1 : MAX_SNIPPET_SCAN;
  if (!TOKEN_UNIT.test(text.charAt(bound))) return bound;
  for (let cut = bound; cut > bound - 4 * MAX_TOKEN_LENGTH; cut -= 1) {
    if (!TOKEN_UNIT.test(text.charAt(cut - 1))) return cut;
  }
  return bound;
}

function isLowSurrogate(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The terms without repeats: `a OR a OR a` looks for `a` once. */
function distinctTerms(terms: readonly SearchTerm[]): SearchTerm[] {
  const byKey = new Map(terms.map((term) => [`${term.isPrefix ? '*' : '='}${term.tokens.join(' ')}`, term]));
  return [...byKey.values()];
}

/**
 * Every place a term matches, as code point stretches of `plain`, overlapping ones merged, in
 * order: one pass over the tokens, each tried against every distinct term.
 */
function findHits(plain: string, terms: readonly SearchTerm[]): Stretch[] {
  const spans = codePointSpans(plain);
  const merged: Stretch[] = [];
  spans.forEach((span, first) => {
    let end = -1;
    for (const term of terms) {
      const last = spans[first + term.tokens.length - 1];
      if (last && last.end > end && isTermAt(spans, first, term)) end = last.end;
    }
    if (end < 0) return;
    // Hits are found in order of their start, so only the previous one can overlap this one.
    const previous = merged[merged.length - 1];
    if (previous && span.start < previous.end) {
      merged[merged.length - 1] = { start: previous.start, end: Math.max(previous.end, end) };
    } else {
      merged.push({ start: span.start, end });
    }
  });
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
function chooseWindow(excerpt: Scanned, maxLength: number): Stretch {
  const { characters, hits } = excerpt;
  const firstHit = hits[0];
  const endFromTop = fitEnd(excerpt, 0, maxLength, firstHit?.end ?? 0);
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
  const end = fitEnd(excerpt, start, maxLength, firstHit.end);
  if (end < characters.length) return { start, end };

  for (let candidate = start - 1; candidate >= Math.max(0, end - maxLength); candidate -= 1) {
    if (candidate > 0 && characters[candidate - 1] !== ' ') continue;
    if (renderedLength(excerpt, { start: candidate, end }) > maxLength) break;
    start = candidate;
  }
  return { start, end };
}

/**
 * The furthest end from `start` that fits: the last word boundary that fits, unless that would
 * hide part of the first hit (before `mustReach`) or show nothing — then a cut inside a word,
 * never between a letter and its combining marks when it can help it.
 */
function fitEnd(excerpt: Scanned, start: number, maxLength: number, mustReach: number): number {
  const { characters } = excerpt;
  const limit = Math.min(characters.length, start + maxLength);
  let wordEnd = start;
  for (let end = start + 1; end <= limit; end += 1) {
    if (end < characters.length && characters[end] !== ' ') continue;
    // The length only grows with `end`, so the first boundary that does not fit ends the search.
    if (renderedLength(excerpt, { start, end }) > maxLength) break;
    wordEnd = end;
  }
  if (wordEnd > start && wordEnd >= mustReach) return wordEnd;

  let end = start;
  while (end < limit && renderedLength(excerpt, { start, end: end + 1 }) <= maxLength) end += 1;
  while (end > start + 1 && COMBINING_MARK.test(characters[end] ?? '')) end -= 1;
  return end;
}

/** Whether a window ending at `end` leaves text out after it (and so ends in `…`). */
function isCutAt(excerpt: Scanned, end: number): boolean {
  return end < excerpt.characters.length || excerpt.isCut;
}

/** The window's length once rendered: its characters, its ellipses and the markers of the hits it shows. */
function renderedLength(excerpt: Scanned, window: Stretch): number {
  let length = window.end - window.start;
  if (window.start > 0) length += CUT.length;
  if (isCutAt(excerpt, window.end)) length += CUT.length;
  // Hits are in order and disjoint, so the ones the window shows are a run found by two binary searches.
  const shown =
    firstIndexWhere(excerpt.hits, (hit) => hit.start >= window.end) -
    firstIndexWhere(excerpt.hits, (hit) => hit.end > window.start);
  return length + Math.max(0, shown) * (HIT_START.length + HIT_END.length);
}

/** The first index whose hit passes `test`, for a test that fails on a prefix of `hits` and passes on the rest. */
function firstIndexWhere(hits: readonly Stretch[], test: (hit: Stretch) => boolean): number {
  let low = 0;
  let high = hits.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const hit = hits[middle];
    if (hit !== undefined && test(hit)) high = middle;
    else low = middle + 1;
  }
  return low;
}

function render(excerpt: Scanned, window: Stretch): string {
  const { characters, hits } = excerpt;
  const pieces = [window.start > 0 ? CUT : ''];
  let position = window.start;
  for (let index = firstIndexWhere(hits, (hit) => hit.end > window.start); index < hits.length; index += 1) {
    const hit = hits[index];
    if (hit === undefined || hit.start >= window.end) break;
    const hitStart = Math.max(hit.start, window.start);
    const hitEnd = Math.min(hit.end, window.end);
    pieces.push(textOf(characters, position, hitStart), HIT_START, textOf(characters, hitStart, hitEnd), HIT_END);
    position = hitEnd;
  }
  pieces.push(textOf(characters, position, window.end), isCutAt(excerpt, window.end) ? CUT : '');
  return pieces.join('');
}

/** The characters from `start` to `end` as text, with the hit markers it holds made harmless. */
function textOf(characters: readonly string[], start: number, end: number): string {
  return characters
    .slice(start, end)
    .join('')
    .replace(WRITTEN_MARKER, (marker) => WRITTEN_MARKERS[marker] ?? marker);
}
