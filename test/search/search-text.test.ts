import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  foldText,
  indexText,
  MAX_TOKEN_LENGTH,
  searchTokenSpans,
  searchTokens,
  tokenisesAlikeInSqlite,
} from '../../src/search/search-text.js';

/** What `searchTokens` promises: the runs of letters and digits in the folded text, cut at 64. */
function tokensOfFoldedText(text: string): string[] {
  return Array.from(foldText(text).matchAll(/[\p{L}\p{Nd}\p{Nl}]+/gu), ([run]) =>
    Array.from(run).slice(0, MAX_TOKEN_LENGTH).join(''),
  );
}

/** Characters that have tripped folding or tokenising somewhere, for the properties below. */
const AWKWARD_CHARACTERS = [
  ...'aZ09 -_\'".,;:*"()«»…—\t\n\r',
  ...'éÉèçñüÜßẞæÆøØðÐþÞœŒ',
  '\u0301', // combining acute accent
  '\u0345', // combining ypogegrammeni, which case-folds to ι
  '\u200d', // zero-width joiner
  '\u0000',
  '\u001b',
  ...'ſµςΣσϐİıǅﬁŉ',
  ...'ёйЁЙПривет',
  ...'ΆάΐΰΟΔΣ',
  ...'東京한국어',
  ...'٣Ⅻⅻ²½①',
  '😀',
  '👍🏽',
  '𐐀', // Deseret capital, outside the BMP
  '\u{1D400}', // mathematical bold A
];
const awkwardText = fc.array(fc.constantFrom(...AWKWARD_CHARACTERS), { maxLength: 40 }).map((chars) => chars.join(''));
const anyText = fc.oneof(awkwardText, fc.string({ unit: 'binary', maxLength: 40 }));

describe('foldText', () => {
  it.each([
    ['lower case', 'MoDeM', 'modem'],
    ['accents', 'Café CAFE café naïve Ångström', 'cafe cafe cafe naive angstrom'],
    ['decomposed accents', 'cafe\u0301', 'cafe'],
    ['sharp s', 'Straße STRASSE ẞ', 'strasse strasse ss'],
    ['Latin-1 letters NFD does not decompose', 'Æsir Ørsted Ðe Þorn Œuvre', 'aesir orsted de thorn oeuvre'],
    ['letters that fold like their capitals', 'ſ µ ϐ ǅ ﬁle', 's μ β ǆ file'],
    ['dotted and dotless i', 'İstanbul ıi', 'istanbul ii'],
    ['final sigma whatever follows it', 'ΟΔΟΣ οδος ΟΔΟΣⓐ', 'οδοσ οδοσ οδοσⓐ'],
    ['Cyrillic, lower cased, marks dropped', 'ПРИВЕТ Ёлка Йод', 'привет елка иод'],
    ['Greek, lower cased, marks dropped', 'Ἀθῆναι ΆΡΗΣ', 'αθηναι αρησ'],
    ['CJK and Hangul unchanged (Hangul stays composed)', '東京 한국어', '東京 한국어'],
    ['punctuation and emoji unchanged', '«don’t» 😀', '«don’t» 😀'],
  ])('folds %s', (_name, text, folded) => {
    expect(foldText(text)).toBe(folded);
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(foldText(foldText(text))).toBe(foldText(text));
      }),
    );
  });
});

describe('searchTokens', () => {
  it.each([
    ['words', 'Hello, World!', ['hello', 'world']],
    ['accented words', 'Café CAFE Straße', ['cafe', 'cafe', 'strasse']],
    ['punctuation inside words', "don't e-mail foo_bar a.b/c", ['don', 't', 'e', 'mail', 'foo', 'bar', 'a', 'b', 'c']],
    ['emoji', 'modem😀bbs 👍🏽', ['modem', 'bbs']],
    ['NUL and control characters', 'a\u0000b\u0007c\td', ['a', 'b', 'c', 'd']],
    ['ANSI escapes (callers strip them first)', '\u001b[1;31mred\u001b[0m', ['1', '31mred', '0m']],
    ['digits and letters together', '2400 baud v32bis 007 ١٢٣ Ⅻ', ['2400', 'baud', 'v32bis', '007', '١٢٣', 'ⅻ']],
    ['numbers that are not digits as separators', 'm² ½ ①x', ['m', 'x']],
    ['combining marks joining their letters', 'e\u0301te\u0301', ['ete']],
    ['a combining mark after a separator', '-\u0301a', ['a']],
    ['ypogegrammeni as the letter it folds to', 'ᾳ α\u0345', ['αι', 'αι']],
    ['a zero-width joiner as a separator', 'ab\u200dcd', ['ab', 'cd']],
    ['Cyrillic and CJK', 'Привет, 東京!', ['привет', '東京']],
    ['nothing to search for', ' ,.;:*"() 😀 ', []],
    ['an empty text', '', []],
  ])('splits %s', (_name, text, tokens) => {
    expect(searchTokens(text)).toEqual(tokens);
  });

  it('cuts a token at 64 code points', () => {
    expect(searchTokens('x'.repeat(64))).toEqual(['x'.repeat(64)]);
    expect(searchTokens(`${'x'.repeat(64)}y more`)).toEqual(['x'.repeat(64), 'more']);
    expect(searchTokens('X'.repeat(1000))).toEqual(['x'.repeat(64)]);
    // 64 code points, not 64 UTF-16 units: the Deseret letters are surrogate pairs.
    expect(searchTokens('𐐀'.repeat(70))).toEqual(['𐐨'.repeat(64)]);
    // Folding comes first: 63 letters and ß make 65 characters, cut to 64.
    expect(searchTokens(`${'a'.repeat(63)}ß`)).toEqual([`${'a'.repeat(63)}s`]);
  });

  it('gives the runs of letters and digits of the folded text', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(searchTokens(text)).toEqual(tokensOfFoldedText(text));
      }),
    );
  });

  it('tokenises every assigned code point between two letters as its folding says', () => {
    const disagreements: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
      const character = String.fromCodePoint(codePoint);
      // Unassigned, private-use and lone surrogate code points are separators by any reckoning.
      if (/[\p{Cn}\p{Co}\p{Cs}]/u.test(character)) continue;
      const text = `a${character}b`;
      if (searchTokens(text).join(' ') !== tokensOfFoldedText(text).join(' ')) {
        disagreements.push(`U+${codePoint.toString(16).toUpperCase()}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe('searchTokenSpans', () => {
  it('gives each token with its place in the text, trailing combining marks included', () => {
    const text = 'Cafe\u0301 — 𐐀𐐀x, don’t';
    expect(searchTokenSpans(text)).toEqual([
      { token: 'cafe', start: 0, end: 5 },
      { token: '𐐨𐐨x', start: 8, end: 13 },
      { token: 'don', start: 15, end: 18 },
      { token: 't', start: 19, end: 20 },
    ]);
    expect(text.slice(8, 13)).toBe('𐐀𐐀x');
  });

  it('gives the tokens of searchTokens, each folded from its own text', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const spans = searchTokenSpans(text);
        expect(spans.map((span) => span.token)).toEqual(searchTokens(text));
        for (const span of spans) expect(searchTokens(text.slice(span.start, span.end))).toEqual([span.token]);
      }),
    );
  });
});

describe('indexText', () => {
  it('joins the tokens of every field with single spaces', () => {
    expect(indexText('Re: Café', '', '  US Robotics\n\n2400 baud!  ')).toBe('re cafe us robotics 2400 baud');
    expect(indexText()).toBe('');
    expect(indexText('😀', '...')).toBe('');
  });

  it('is only letters and digits between single spaces, and tokenises back to the same tokens', () => {
    fc.assert(
      fc.property(fc.array(anyText, { maxLength: 3 }), (fields) => {
        const indexed = indexText(...fields);
        expect(indexed).toMatch(/^(?:[\p{L}\p{Nd}\p{Nl}]+(?: [\p{L}\p{Nd}\p{Nl}]+)*)?$/u);
        expect(searchTokens(indexed)).toEqual(fields.flatMap(searchTokens));
      }),
    );
  });
});

describe('tokenisesAlikeInSqlite', () => {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'unicode61 remove_diacritics 0')");
  db.exec("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')");
  const tokensOfSqlite = (text: string) => {
    db.exec('DELETE FROM t');
    db.prepare('INSERT INTO t (rowid, text) VALUES (1, ?)').run(text);
    return (db.prepare('SELECT term FROM v ORDER BY offset').all() as { term: string }[]).map((row) => row.term);
  };

  it('holds only where FTS5 splits and folds the text exactly as searchTokens does', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'Z', '9', ' ', '-', "'", '_', '\n', '\t', '.', 'é', '\u001b') }),
        (text) => {
          if (tokenisesAlikeInSqlite(text)) expect(tokensOfSqlite(text)).toEqual(searchTokens(text));
        },
      ),
    );
  });

  it('answers as its definition does: ASCII, and no run of letters and digits over the length limit', () => {
    const definition = (text: string) =>
      /^[^\u0080-\uffff]*$/.test(text) &&
      (text.match(/[A-Za-z0-9]+/g) ?? []).every((run) => run.length <= MAX_TOKEN_LENGTH);
    // Runs around the limit, at every offset from the places the check probes.
    const word = fc.integer({ min: 0, max: 2 * MAX_TOKEN_LENGTH + 3 }).map((length) => 'w'.repeat(length));
    const separator = fc.constantFrom(' ', '.', '\n', '_', '\u007f', '\u0080', 'é', '\ud800', '😀');
    const text = fc
      .array(fc.oneof(word, separator, fc.string({ maxLength: 3 })), { maxLength: 12 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (sample) => {
        expect(tokenisesAlikeInSqlite(sample)).toBe(definition(sample));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses non-ASCII text and tokens over the length limit', () => {
    expect(tokenisesAlikeInSqlite('Café')).toBe(false);
    expect(tokenisesAlikeInSqlite('x'.repeat(MAX_TOKEN_LENGTH))).toBe(true);
    expect(tokenisesAlikeInSqlite('x'.repeat(MAX_TOKEN_LENGTH + 1))).toBe(false);
    expect(tokenisesAlikeInSqlite(`${'. '.repeat(40)}${'x'.repeat(MAX_TOKEN_LENGTH + 1)}!`)).toBe(false);
    expect(tokenisesAlikeInSqlite(`a${'x'.repeat(MAX_TOKEN_LENGTH - 1)} ${'y'.repeat(MAX_TOKEN_LENGTH)}`)).toBe(true);
    expect(tokenisesAlikeInSqlite('lone \ud800 surrogate')).toBe(false);
    expect(tokenisesAlikeInSqlite("Don't PANIC, it's 2400 baud_rate!")).toBe(true);
  });
});
