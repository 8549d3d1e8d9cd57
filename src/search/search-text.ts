/**
 * The one folding and tokenising of searchable text. SQLite (FTS5) and PostgreSQL (tsvector)
 * index and query only what these functions produce — folded letters and digits separated by
 * single spaces — so the two tokenisers have nothing left to disagree about.
 */

/** The longest token, in code points. */
export const MAX_TOKEN_LENGTH = 64;

/**
 * A token as written: a letter or digit, then letters, digits and combining marks (which fold to
 * nothing, so they join what surrounds them). U+0345 COMBINING GREEK YPOGEGRAMMENI is the one mark
 * that folds to a letter (ι), so it may start a token too. Numbers that are not digits (\p{No}:
 * ², ½, ①) separate tokens: PostgreSQL's parser in a C.UTF-8 database does not count them as word
 * characters, so `m²` would be one token for SQLite and `m` for PostgreSQL.
 */
const WRITTEN_TOKEN = /(?:[\p{L}\p{Nd}\p{Nl}]|\u0345)[\p{L}\p{Nd}\p{Nl}\p{M}]*/gu;

const COMBINING_MARKS = /\p{M}/gu;

/**
 * Letters that NFD does not decompose, folded by hand. ẞ lowercases to ß, hence ß after casing.
 * ς too: JavaScript lowercases Σ to ς or σ depending on the next character, and a token's folding
 * must not depend on its neighbours.
 */
const HAND_FOLDS: Readonly<Record<string, string>> = { ß: 'ss', æ: 'ae', ø: 'o', ð: 'd', þ: 'th', œ: 'oe', ς: 'σ' };
const HAND_FOLDED_LETTER = /[ßæøðþœς]/gu;

const ASCII_WORD = /^[A-Za-z0-9]+$/;
/** In ASCII text, what WRITTEN_TOKEN matches once lowercased. */
const ASCII_TOKEN = /[a-z0-9]+/g;

/**
 * Folds text for searching: case-insensitive, accent-insensitive (`Café` → `cafe`,
 * `Straße` → `strasse`, `Ærø` → `aero`). Other scripts are case-folded and lose their combining
 * marks the same way (`ё` → `е`, `й` → `и`, `ά` → `α`); a query is folded the same way, so this only widens
 * what matches.
 */
export function foldText(text: string): string {
  // Upper case first: ſ, µ, ϐ and their like then fold as their capitals do (s, μ, β), as SQLite's
  // unicode61 tokenizer folds them; lowercasing alone left 10 letters that SQLite merged with
  // another and PostgreSQL did not.
  return (
    text
      .toUpperCase()
      .toLowerCase()
      .normalize('NFD')
      .replace(COMBINING_MARKS, '')
      .replace(HAND_FOLDED_LETTER, (letter) => HAND_FOLDS[letter] ?? letter)
      // Composed again, so Hangul syllables (which NFD splits into jamo) are indexed whole.
      .normalize('NFC')
  );
}

/** Where a token stands in the text it came from. */
export interface TokenSpan {
  /** The folded token, as `searchTokens` gives it. */
  readonly token: string;
  /** UTF-16 offsets: `text.slice(start, end)` is the token as written, its combining marks included. */
  readonly start: number;
  readonly end: number;
}

/**
 * The tokens of `text` with their places in it, for highlighting. The tokens are exactly
 * `searchTokens(text)`.
 */
export function searchTokenSpans(text: string): TokenSpan[] {
  return Array.from(text.matchAll(WRITTEN_TOKEN), (match) => ({
    token: foldToken(match[0]),
    start: match.index,
    end: match.index + match[0].length,
  }));
}

/**
 * The folded text cut into tokens: maximal runs of letters and digits; everything else
 * (punctuation, spaces, emoji, control characters) separates them.
 *
 * @example searchTokens("Don't PANIC — café²") // ['don', 't', 'panic', 'cafe']
 */
export function searchTokens(text: string): string[] {
  // Most messages are plain ASCII: lowercasing is then their whole folding (imports index every message).
  if (tokenisesAlikeInSqlite(text)) return text.toLowerCase().match(ASCII_TOKEN) ?? [];
  return Array.from(text.matchAll(WRITTEN_TOKEN), (match) => foldToken(match[0]));
}

/**
 * The text to index for a row: the tokens of every field, joined by single spaces. It is what
 * goes into the FTS5 table and into `to_tsvector('simple', …)`; being nothing but letters, digits
 * and spaces, both databases split it back into exactly these tokens.
 */
export function indexText(...fields: readonly string[]): string {
  return fields.flatMap((field) => searchTokens(field)).join(' ');
}

/**
 * Whether `text` is ASCII with no run of letters and digits longer than MAX_TOKEN_LENGTH: then
 * SQLite's unicode61 tokenizer splits and folds it exactly as `searchTokens` does (ASCII letters
 * and digits are its only token characters, lower-cased), so SQLite may be handed the text
 * itself and spared the work in JavaScript — what keeps bulk imports fast.
 *
 * Asked of every message an import indexes, so it reads as few characters as it can: UTF-8 spends
 * one byte on an ASCII character and more on any other, and Node counts the bytes natively (about
 * 50 times faster than a loop over the characters here, which was 4% of a 1,000,000-message import).
 */
export function tokenisesAlikeInSqlite(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') === text.length && !hasOverlongWord(text);
}

/** ASCII letters and digits, by character code: what a token of ASCII text is made of. */
const IS_ASCII_WORD_CHARACTER = Uint8Array.from({ length: 128 }, (_, code) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ? 1 : 0,
);

/**
 * Whether the character code is an ASCII letter or digit: in a text `tokenisesAlikeInSqlite`
 * accepts, its tokens are exactly the runs of these, lowercased (what `searchTokens` returns,
 * for a reader that walks the text itself instead of taking the token strings).
 */
export function isAsciiWordCode(code: number): boolean {
  return IS_ASCII_WORD_CHARACTER[code] === 1;
}

/**
 * Whether ASCII `text` holds a run of more than MAX_TOKEN_LENGTH letters and digits. Such a run
 * covers MAX_TOKEN_LENGTH + 1 consecutive places, one of which is a multiple of that stride (less
 * one): only the runs through those places are measured, so each character is read at most once
 * and most not at all.
 */
function hasOverlongWord(text: string): boolean {
  const stride = MAX_TOKEN_LENGTH + 1;
  const isWordAt = (index: number) => isAsciiWordCode(text.charCodeAt(index));
  for (let probe = stride - 1; probe < text.length; probe += stride) {
    if (!isWordAt(probe)) continue;
    let start = probe;
    while (start > 0 && isWordAt(start - 1)) start -= 1;
    let end = probe + 1;
    while (end < text.length && isWordAt(end)) end += 1;
    if (end - start > MAX_TOKEN_LENGTH) return true;
  }
  return false;
}

/** Folds one written token (see `WRITTEN_TOKEN`), which folds to a single run of letters and digits. */
function foldToken(written: string): string {
  // Most text is ASCII: lowercasing is its whole folding, at a fraction of the cost.
  const folded = ASCII_WORD.test(written) ? written.toLowerCase() : foldText(written);
  return capTokenLength(folded);
}

/**
 * Keeps the first MAX_TOKEN_LENGTH code points. A longer run is a pasted hash or base64 block, not
 * a word anyone types: indexing it whole only bloats the index, and PostgreSQL
 * refuses a lexeme of 2 KB or more ("word is too long to be indexed") — it would silently drop
 * the token that SQLite keeps. A query's token is cut the same way, so a long word still matches.
 */
function capTokenLength(token: string): string {
  // A string of at most MAX_TOKEN_LENGTH UTF-16 units has at most that many code points.
  if (token.length <= MAX_TOKEN_LENGTH) return token;
  return Array.from(token).slice(0, MAX_TOKEN_LENGTH).join('');
}
