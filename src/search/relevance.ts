import type { SearchTerm } from './search-query.js';

/**
 * At most this many matches are ranked in one `sort=relevance` search: the newest ones, chosen on
 * its first page (see findMessages). Every candidate is scored on every page (a score is computed,
 * not stored), so ranking every match of a word in a whole 20,000-message board held the SQLite
 * node for hundreds of milliseconds per request.
 */
export const MAX_RANKED_MATCHES = 1000;

/**
 * Relevance scores are integers in [0, RELEVANCE_SCALE): quantised, so that the same document and
 * query always give the same score, and so that (score, id) packs into one safe integer sort key.
 */
export const RELEVANCE_SCALE = 1_000_000;

/** Ids are below 2^32: a relevance sort key is score × 2^32 + id (see relevanceSortKey), one safe integer. */
export const ID_SPAN = 2 ** 32;

/**
 * How well a document's tokens answer the query's terms, from the document and the query only —
 * never from statistics of the whole index, which change with every post and would move a
 * document across a page boundary between two pages of one search.
 *
 * Each term adds tf / (tf + 1) for its number of occurrences tf (the first occurrence counts
 * most, later ones less and less), averaged over the terms, then gently lowered for long
 * documents so that a short message about the words outranks a long one that mentions them once.
 */
export function relevanceScore(tokens: readonly string[], terms: readonly SearchTerm[]): number {
  if (terms.length === 0 || tokens.length === 0) return 0;
  let saturation = 0;
  for (const term of terms) {
    const occurrences = occurrencesOf(term, tokens);
    saturation += occurrences / (occurrences + 1);
  }
  const lengthFactor = 1 + Math.log1p(tokens.length / 500);
  return Math.floor((saturation / terms.length / lengthFactor) * RELEVANCE_SCALE);
}

/** How many times the term's tokens appear adjacent and in order (the last one as a prefix when it is one). */
function occurrencesOf(term: SearchTerm, tokens: readonly string[]): number {
  const last = term.tokens.length - 1;
  let count = 0;
  for (let start = 0; start + last < tokens.length; start += 1) {
    let index = 0;
    while (index <= last) {
      const token = tokens[start + index] ?? '';
      const wanted = term.tokens[index] ?? '';
      const matches = term.isPrefix && index === last ? token.startsWith(wanted) : token === wanted;
      if (!matches) break;
      index += 1;
    }
    if (index > last) count += 1;
  }
  return count;
}
