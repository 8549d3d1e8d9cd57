import type { SearchQuery, SearchTerm } from './search-query.js';

/**
 * The share of documents (0 to 1) each word is found in, for the words common enough for the
 * database to keep statistics on; a word it does not list is taken as rare (share 0).
 */
export type WordShares = ReadonlyMap<string, number>;

/**
 * An estimate of the share of documents `query` matches, from the shares of its words: a phrase
 * as its rarest word, a prefix as the words it begins summed, `OR` as a sum, AND and exclusions as
 * if the words were independent. Only used to choose how to look for the matches, never what
 * they are: a wrong estimate costs time, not results.
 *
 * @example estimatedMatchShare(parseSearchQuery('modem -fax'), new Map([['modem', 0.5], ['fax', 0.2]]))
 * // 0.4
 */
export function estimatedMatchShare(query: SearchQuery, shares: WordShares): number {
  const positive = query.groups.reduce(
    (share, group) =>
      share *
      Math.min(
        1,
        group.reduce((sum, term) => sum + termShare(term, shares), 0),
      ),
    1,
  );
  return query.excluded.reduce((share, term) => share * (1 - termShare(term, shares)), positive);
}

function termShare(term: SearchTerm, shares: WordShares): number {
  const last = term.tokens.length - 1;
  return term.tokens.reduce((rarest, token, index) => {
    const share = term.isPrefix && index === last ? prefixShare(token, shares) : (shares.get(token) ?? 0);
    return Math.min(rarest, share);
  }, 1);
}

function prefixShare(prefix: string, shares: WordShares): number {
  let sum = 0;
  for (const [word, share] of shares) if (word.startsWith(prefix)) sum += share;
  return Math.min(1, sum);
}
