import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { postgresTsvector } from '../../src/search/full-text-index.js';
import { searchTokens } from '../../src/search/search-text.js';
import { stripAnsi } from '../../src/text/strip-ansi.js';

/**
 * The binary `tsvector` by its plain definition: every token of every field (ANSI stripped) in
 * order, position n for the n-th token (at most 16,383), each word's first 255 distinct
 * positions, the words in the order they first appear. PostgreSQL's own `to_tsvector` is the
 * judge of that definition (message-search.test.ts, on PostgreSQL); this holds the encoder to it.
 */
function tsvectorByDefinition(fields: readonly string[]): Buffer {
  const words = new Map<string, number[]>();
  let position = 0;
  for (const field of fields) {
    for (const word of searchTokens(stripAnsi(field))) {
      position = Math.min(position + 1, 16_383);
      const positions = words.get(word) ?? [];
      if (positions.length < 255 && positions.at(-1) !== position) positions.push(position);
      words.set(word, positions);
    }
  }
  const parts = [Buffer.alloc(4)];
  parts[0]?.writeInt32BE(words.size, 0);
  for (const [word, positions] of words) {
    const head = Buffer.alloc(3);
    head.writeUInt16BE(positions.length, 1);
    const tail = Buffer.alloc(2 * positions.length);
    for (const [index, at] of positions.entries()) tail.writeUInt16BE(at, 2 * index);
    parts.push(Buffer.from(word, 'utf8'), head, tail);
  }
  return Buffer.concat(parts);
}

const ESC = '\u001b';
const piece = fc.oneof(
  fc.constantFrom('modem', 'MODEM', 'Modem', 'baud', '2400', 'x', 'x2', 'the', 'The', 'café', 'Straße', 'ДОМ', 'дом'),
  fc.constantFrom(' ', '  ', '.', ', ', '\n', '-', "'", '_', `${ESC}[1;31m`, `${ESC}[0m`, '|07', '½', '²', '😀'),
  fc.stringMatching(/^[A-Za-z0-9]{1,8}$/),
  fc.integer({ min: 60, max: 70 }).map((length) => 'L'.repeat(length)),
  fc.string({ maxLength: 6 }),
);
const field = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));

describe('postgresTsvector', () => {
  it('encodes what the definition says, for any fields', () => {
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 3 }), (fields) => {
        expect(postgresTsvector(fields).equals(tsvectorByDefinition(fields))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('encodes big documents as the definition says: thousands of words, capped positions, a word in both kinds of text', () => {
    const documents = [
      ['Repeats', 'echo '.repeat(300)],
      ['Long', Array.from({ length: 17_000 }, (_, index) => `w${index % 50}`).join(' ')],
      ['Many', Array.from({ length: 5_000 }, (_, index) => `word${index}`).join(' ')],
      ['Ünïcode modem Baud', 'plain ascii modem BAUD text, then modem again'],
      ['', ''],
    ];
    for (const fields of documents) expect(postgresTsvector(fields).equals(tsvectorByDefinition(fields))).toBe(true);
  });
});
