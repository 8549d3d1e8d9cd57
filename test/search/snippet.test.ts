import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSearchQuery, positiveTerms, type SearchTerm } from '../../src/search/search-query.js';
import { searchTokens } from '../../src/search/search-text.js';
import { MAX_SNIPPET_SCAN, searchSnippet } from '../../src/search/snippet.js';

const snippet = (text: string, q: string, maxLength?: number) => searchSnippet(text, parseSearchQuery(q), maxLength);
const codePoints = (text: string) => Array.from(text).length;

function isTermAt(tokens: readonly string[], first: number, term: SearchTerm): boolean {
  return term.tokens.every((token, index) => {
    const written = tokens[first + index];
    if (written === undefined) return false;
    return term.isPrefix && index === term.tokens.length - 1 ? written.startsWith(token) : written === token;
  });
}

const HISTORY =
  'The Hayes Smartmodem was the first modem to be controlled by software commands. Before it, most modems ' +
  'were set with switches on the front panel; afterwards every BBS sysop learned the AT command set by heart, ' +
  'and a US Robotics Courier became the board to own.';

describe('searchSnippet', () => {
  it.each([
    [
      'a word',
      'Selling my US Robotics modem,\n\nbarely used.',
      'modem',
      'Selling my US Robotics «modem», barely used.',
    ],
    [
      'every hit, whatever its case and accents',
      'Meet at the CAFÉ on Straße 5',
      'cafe strasse',
      'Meet at the «CAFÉ» on «Straße» 5',
    ],
    ['a decomposed accent inside the markers', 'cafe\u0301 au lait', 'café', '«cafe\u0301» au lait'],
    ['a phrase as one hit', 'a fax modem is not a data modem', '"data modem"', 'a fax modem is not a «data modem»'],
    [
      'overlapping hits as one',
      'a fax modem is not a data modem',
      '"data modem" modem',
      'a fax «modem» is not a «data modem»',
    ],
    [
      'a prefix matching whole tokens only',
      'Smartmodems, modems and modulators',
      'mod*',
      'Smartmodems, «modems» and «modulators»',
    ],
    ['a phrase ending in a prefix', 'e-mail me, e-mails welcome', 'e-mai*', '«e-mail» me, «e-mails» welcome'],
    ['both sides of OR', 'no fax, but data', 'fax OR data', 'no «fax», but «data»'],
    ['no excluded term', 'fax modem', 'modem -fax', 'fax «modem»'],
    ['a word inside punctuation', "it's (modem)-ready", 'modem', "it's («modem»)-ready"],
    ['whitespace collapsed and trimmed', '  hello\n\n\t world  ', 'world', 'hello «world»'],
    ['the text when nothing in it matches', 'Just the body.', 'subject', 'Just the body.'],
    [
      'only hits, never markers written in the text',
      'Ask «injected» and «help» for help»',
      'help',
      'Ask ‹injected› and ‹«help»› for «help»›',
    ],
    ['nothing for an empty text', ' \n ', 'modem', ''],
  ])('highlights %s', (_name, text, q, expected) => {
    expect(snippet(text, q)).toBe(expected);
  });

  it.each([
    [
      'from the start when the first hit is near it',
      'hayes',
      80,
      'The «Hayes» Smartmodem was the first modem to be controlled by software…',
    ],
    [
      'from a word shortly before a later hit',
      'switches',
      80,
      '…were set with «switches» on the front panel; afterwards every BBS sysop…',
    ],
    [
      'back from the end to fill the length',
      'courier',
      80,
      '…AT command set by heart, and a US Robotics «Courier» became the board to own.',
    ],
    ['around a phrase', '"AT command set"', 60, '…learned the «AT command set» by heart, and a US Robotics…'],
    [
      'the start of the text when nothing matches',
      'zzz',
      80,
      'The Hayes Smartmodem was the first modem to be controlled by software commands.…',
    ],
    ['short', 'sysop', 30, '…BBS «sysop» learned the AT…'],
  ])('cuts a long text at words, %s', (_name, q, maxLength, expected) => {
    const cut = snippet(HISTORY, q, maxLength);
    expect(cut).toBe(expected);
    expect(codePoints(cut)).toBeLessThanOrEqual(maxLength);
  });

  it('is 200 characters at most by default', () => {
    const cut = snippet(HISTORY, 'courier');
    expect(cut).toBe(
      '…commands. Before it, most modems were set with switches on the front panel; afterwards every BBS sysop ' +
        'learned the AT command set by heart, and a US Robotics «Courier» became the board to own.',
    );
    expect(codePoints(cut)).toBe(193);
  });

  it('cuts inside a word only when no word fits, never inside a surrogate pair or before a combining mark', () => {
    expect(snippet('𐐀'.repeat(100), 'x', 10)).toBe(`${'𐐀'.repeat(9)}…`);
    expect(snippet('e\u0301'.repeat(50), 'x', 10)).toBe(`${'e\u0301'.repeat(4)}…`);
    expect(snippet(`foo-modem-${'z'.repeat(100)}`, 'modem', 20)).toBe('foo-«modem»-zzzzzzz…');
    expect(snippet(`${'x'.repeat(300)} modem ${'y'.repeat(300)}`, 'modem', 20)).toBe('…«modem»…');
  });

  it('counts emoji and markers as one character each', () => {
    expect(snippet(`${'😀 '.repeat(50)}modem`, 'modem', 20)).toBe('…😀 😀 😀 😀 😀 😀 «modem»');
  });

  it('shows part of a hit longer than the snippet', () => {
    expect(snippet('aaa modem', 'modem', 5)).toBe('…«m»…');
  });

  it('rejects a maxLength below 5', () => {
    expect(() => snippet('modem', 'modem', 4)).toThrow(RangeError);
    expect(() => snippet('modem', 'modem', 10.5)).toThrow(RangeError);
  });

  it('looks for hits only in the first MAX_SNIPPET_SCAN characters, so a snippet costs the same whatever the body holds', () => {
    // A poster's `a ` × 32,000 searched with 16 terms took over 100 ms a snippet, 20 on a page.
    const filler = 'a '.repeat(32_000);
    const terms = Array.from({ length: 16 }, () => 'a').join(' OR ');
    expect(snippet(filler, terms)).toBe(`${'«a» '.repeat(49)}«a»…`);
    // A hit beyond the bound is not looked for: the snippet is the start of the text, cut.
    const late = `${'x '.repeat(MAX_SNIPPET_SCAN / 2)}modem`;
    expect(snippet(late, 'modem', 20)).toBe(`${'x '.repeat(9)}x…`);
    // Ending at the bound, it is found.
    expect(snippet(`${'x '.repeat(MAX_SNIPPET_SCAN / 2 - 3)}modem`, 'modem', 20)).toBe(`…${'x '.repeat(6)}«modem»`);
  });

  it('never lets the scan bound cut a word into a shorter hit', () => {
    const straddling = `${'x'.repeat(MAX_SNIPPET_SCAN - 4)} modems`;
    expect(snippet(straddling, 'modem', 10)).toBe('xxxxxxxxx…');
    expect(snippet(straddling, 'modem*', 10)).toBe('xxxxxxxxx…');
    expect(snippet(`${'x'.repeat(MAX_SNIPPET_SCAN - 5)} mode`, 'mode', 10)).toBe('…«mode»');
  });

  it('fits the length, keeps the text whole and shows the first hit, for any text', () => {
    const words = [
      'modem',
      'MODEMS',
      'café',
      'cafe\u0301',
      'bbs',
      'e-mail',
      '𐐀𐐀',
      '😀',
      'x'.repeat(30),
      'sysop',
      '«',
      '»',
    ];
    const text = fc
      .array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(' ', '  ', '\n', ', ', '-', '')), { maxLength: 60 })
      .map((parts) => parts.flat().join(''));
    const q = fc.constantFrom('modem', 'cafe', 'mo*', '"bbs modem"', 'e-mail', 'sysop OR bbs', 'zzz');
    fc.assert(
      fc.property(text, q, fc.integer({ min: 5, max: 300 }), (body, query, maxLength) => {
        const cut = snippet(body, query, maxLength);
        expect(codePoints(cut)).toBeLessThanOrEqual(maxLength);
        expect(cut).not.toMatch(/\p{Cs}/u);
        expect(snippet(body, query, maxLength)).toBe(cut);
        expect(body.replace(/\s+/g, ' ').trim().replace(/«/g, '‹').replace(/»/g, '›')).toContain(
          cut.replace(/[«»]/g, '').replace(/^…|…$/g, ''),
        );
        const tokens = searchTokens(body);
        const hasHit = positiveTerms(parseSearchQuery(query)).some((term) =>
          tokens.some((_, first) => isTermAt(tokens, first, term)),
        );
        expect(cut.includes('«')).toBe(hasHit);
        // Markers pair up, each pair around a hit: nothing in the text can open or close one.
        expect(cut.replace(/«[^«»]+»/g, '')).not.toMatch(/[«»]/);
      }),
    );
  });
});
