/**
 * FROZEN: the folding and tokenising of searchable text as src/search/search-text.ts did it when
 * 0005-search was made self-contained: 0005 indexes a board's existing messages and files with
 * exactly these tokens, on every upgrade, whatever the app's tokenizer has become since (an app
 * that tokenises differently must rebuild the index in a migration of its own). Never change it
 * and never import it from app code.
 */

/** The longest token, in code points. */
const MAX_TOKEN_LENGTH = 64;

/**
 * A token as written: a letter or digit, then letters, digits and combining marks; U+0345 (which
 * folds to ι) may start one too. Other numbers (², ½) separate tokens.
 */
const WRITTEN_TOKEN = /(?:[\p{L}\p{Nd}\p{Nl}]|\u0345)[\p{L}\p{Nd}\p{Nl}\p{M}]*/gu;

const COMBINING_MARKS = /\p{M}/gu;

/** Letters that NFD does not decompose, folded by hand (ς too: Σ lowercases to ς or σ by context). */
const HAND_FOLDS: Readonly<Record<string, string>> = { ß: 'ss', æ: 'ae', ø: 'o', ð: 'd', þ: 'th', œ: 'oe', ς: 'σ' };
const HAND_FOLDED_LETTER = /[ßæøðþœς]/gu;

const ASCII_WORD = /^[A-Za-z0-9]+$/;
/** In ASCII text, what WRITTEN_TOKEN matches once lowercased. */
const ASCII_TOKEN = /[a-z0-9]+/g;

/** The folded tokens of `text`: maximal runs of letters and digits, case- and accent-insensitive. */
export function searchTokens(text: string): string[] {
  if (tokenisesAlikeInSqlite(text)) return text.toLowerCase().match(ASCII_TOKEN) ?? [];
  return Array.from(text.matchAll(WRITTEN_TOKEN), (match) => foldToken(match[0]));
}

/** The tokens of every field, joined by single spaces. */
export function indexText(...fields: readonly string[]): string {
  return fields.flatMap((field) => searchTokens(field)).join(' ');
}

/**
 * Whether `text` is ASCII with no run of letters and digits longer than MAX_TOKEN_LENGTH: then
 * SQLite's unicode61 tokenizer makes exactly `searchTokens` of it.
 */
export function tokenisesAlikeInSqlite(text: string): boolean {
  let run = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code > 0x7f) return false;
    const isWordCharacter = (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
    run = isWordCharacter ? run + 1 : 0;
    if (run > MAX_TOKEN_LENGTH) return false;
  }
  return true;
}

function foldToken(written: string): string {
  const folded = ASCII_WORD.test(written) ? written.toLowerCase() : foldText(written);
  // A string of at most MAX_TOKEN_LENGTH UTF-16 units has at most that many code points.
  return folded.length <= MAX_TOKEN_LENGTH ? folded : Array.from(folded).slice(0, MAX_TOKEN_LENGTH).join('');
}

function foldText(text: string): string {
  // Upper case first, so ſ, µ, ϐ and their like fold as their capitals do.
  return text
    .toUpperCase()
    .toLowerCase()
    .normalize('NFD')
    .replace(COMBINING_MARKS, '')
    .replace(HAND_FOLDED_LETTER, (letter) => HAND_FOLDS[letter] ?? letter)
    .normalize('NFC');
}
