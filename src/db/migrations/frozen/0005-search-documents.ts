import { indexText, searchTokens, tokenisesAlikeInSqlite } from './0005-search-text.js';
import { stripAnsi } from './0005-strip-ansi.js';

/**
 * FROZEN: a document's entry in 0005-search's index, as src/db/full-text-index.ts encoded it when
 * that migration was made self-contained (sqliteIndexText, postgresTsvector). Never change it and
 * never import it from app code.
 */

/** The text FTS5 indexes: plain ASCII fields as they are (FTS5 splits them as our tokenizer does), else our tokens. */
export function sqliteDocument(fields: readonly string[]): string {
  const texts = fields.map(stripAnsi);
  return texts.every(tokenisesAlikeInSqlite) ? texts.join('\n') : indexText(...texts);
}

/** to_tsvector keeps a word's first 255 positions, and counts positions up to 16,383. */
const MAX_POSITIONS_PER_WORD = 255;
const MAX_POSITION = 16_383;

/**
 * The `tsvector` in PostgreSQL's binary form (what `tsvectorrecv` reads), equal to
 * `to_tsvector('simple', indexText(...fields))` and far cheaper for the server to read: the word
 * count (int32), then per word its UTF-8 bytes and a NUL, its position count (uint16) and its
 * positions (uint16 each, strictly increasing), words in the order they first appear.
 */
export function postgresDocument(fields: readonly string[]): Buffer {
  const words = new Map<string, number[]>();
  let position = 0;
  // An upper bound of the size: 3 UTF-8 bytes at most per UTF-16 unit, the NUL, the count, 2 bytes a position.
  let maxBytes = 4;
  for (const field of fields) {
    for (const word of searchTokens(stripAnsi(field))) {
      position = Math.min(position + 1, MAX_POSITION);
      const positions = words.get(word);
      if (positions === undefined) {
        words.set(word, [position]);
        maxBytes += word.length * 3 + 5;
      } else if (positions.length < MAX_POSITIONS_PER_WORD && positions.at(-1) !== position) {
        positions.push(position);
        maxBytes += 2;
      }
    }
  }
  const out = Buffer.allocUnsafe(maxBytes);
  let offset = out.writeInt32BE(words.size, 0);
  for (const [word, positions] of words) {
    offset += out.write(word, offset, 'utf8');
    offset = out.writeUInt8(0, offset);
    offset = out.writeUInt16BE(positions.length, offset);
    for (const at of positions) offset = out.writeUInt16BE(at, offset);
  }
  return out.subarray(0, offset);
}
