import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ID_SPAN, RELEVANCE_SCALE, relevanceScore } from '../../src/search/relevance.js';
import { parseSearchQuery, positiveTerms } from '../../src/search/search-query.js';
import { searchTokens } from '../../src/search/search-text.js';

/** The sort key the databases compute (relevanceSortKey). */
const relevanceKey = (score: number, id: number) => score * ID_SPAN + id;
const score = (text: string, q: string) => relevanceScore(searchTokens(text), positiveTerms(parseSearchQuery(q)));

describe('relevanceScore', () => {
  it('ranks more occurrences higher, and a short text above a long one with as many', () => {
    expect(score('modem modem modem', 'modem')).toBeGreaterThan(score('modem modem', 'modem'));
    expect(score('modem modem', 'modem')).toBeGreaterThan(score('a modem', 'modem'));
    const long = `a modem ${'word '.repeat(2000)}`;
    expect(score('a modem', 'modem')).toBeGreaterThan(score(long, 'modem'));
  });

  it('counts phrases, prefixes and every term of the query', () => {
    expect(score('fax modem here', '"fax modem"')).toBeGreaterThan(0);
    expect(score('modem fax here', '"fax modem"')).toBe(0);
    expect(score('modems and modular', 'mod*')).toBe(score('modem and modem', 'modem'));
    expect(score('fax modem', 'fax modem')).toBeGreaterThan(score('fax fax', 'fax modem'));
    expect(score('anything', 'modem')).toBe(0);
    expect(score('', 'modem')).toBe(0);
  });

  it('is an integer below the scale, and packs with an id into one safe, ordered key', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.integer({ min: 1, max: ID_SPAN - 1 }), (text, id) => {
        const value = score(`${text} modem`, 'modem');
        expect(Number.isInteger(value)).toBe(true);
        expect(value).toBeGreaterThan(0);
        expect(value).toBeLessThan(RELEVANCE_SCALE);
        const key = relevanceKey(value, id);
        expect(Number.isSafeInteger(key)).toBe(true);
        expect(relevanceKey(value, id - 1)).toBeLessThan(key);
        expect(relevanceKey(value + 1, 0)).toBeGreaterThan(key);
      }),
    );
  });
});
