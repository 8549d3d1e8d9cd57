import { BadRequestError, BaudError, type ErrorCodeOf } from '../errors.js';
import { searchTokenSpans, searchTokens } from './search-text.js';

/**
 * The public search language, parsed once here and translated for each database, so SQLite and
 * PostgreSQL answer the same query the same way:
 *
 * - `modem bbs`      both words (AND)
 * - `"hayes modem"`  a phrase: these tokens, adjacent, in this order
 * - `mod*`           a prefix (at least 2 letters)
 * - `-word`, `-"a phrase"`, `-mod*`  exclude
 * - `a OR b`         either; binds tighter than AND (`a b OR c` = a AND (b OR c))
 *
 * Every other character separates words, so nothing a client types is a syntax error except the
 * few rules above; `foo-bar` or `don't` is a phrase of its tokens.
 */

/** `q` may hold at most this many characters (code points). */
export const MAX_QUERY_LENGTH = 256;
/** At most this many words, phrases and prefixes, excluded ones included. */
export const MAX_QUERY_TERMS = 16;
/** A prefix shorter than this (after folding) would match most of the index. */
export const MIN_PREFIX_LENGTH = 2;

/** One word, phrase or prefix. */
export interface SearchTerm {
  /** Folded tokens that must appear adjacent and in this order: one for a word, several for a phrase. */
  readonly tokens: readonly string[];
  /** The last token matches every token it begins (`mod*` matches `modem`). */
  readonly isPrefix: boolean;
}

/** The orders a search can answer in: newest first (the default), or most relevant first. */
export const SEARCH_ORDERS = ['newest', 'relevance'] as const;
export type SearchOrder = (typeof SEARCH_ORDERS)[number];

export interface SearchQuery {
  /** Every group must match; a group matches when any of its terms does (`a b OR c` → `[[a], [b, c]]`). */
  readonly groups: readonly (readonly SearchTerm[])[];
  /** No excluded term may match. */
  readonly excluded: readonly SearchTerm[];
}

export type SearchQueryErrorCode = Extract<ErrorCodeOf<400>, `search.${string}`>;

/** A query the language cannot run; `message` is meant for the client (the HTTP layer answers 400). */
export class SearchQueryError extends BaudError<SearchQueryErrorCode> {
  override readonly name = 'SearchQueryError';
}

/** A quoted phrase (its closing quote may be missing at the end of `q`), or a run of anything else but spaces. */
const QUERY_PART = /-?"([^"]*)"?|[^\s"]+/gu;

const TRAILING_STARS = /\*+$/;

type QueryPart =
  | { readonly kind: 'or' }
  | { readonly kind: 'term'; readonly term: SearchTerm; readonly isExcluded: boolean };

/**
 * Parses `q` from `GET …/search?q=`. Throws `SearchQueryError` when it is empty, too long, has
 * too many terms, a too short prefix, a misplaced `OR`, or nothing but exclusions.
 *
 * @example parseSearchQuery('modem -"fax modem" v32 OR v34')
 * // { groups: [[modem], [v32, v34]], excluded: [fax modem] }
 */
export function parseSearchQuery(q: string): SearchQuery {
  if (Array.from(q).length > MAX_QUERY_LENGTH) {
    throw new SearchQueryError('search.query-too-long', `q is longer than ${MAX_QUERY_LENGTH} characters.`);
  }
  if (q.trim() === '') throw new SearchQueryError('search.query-empty', 'q is empty.');

  const query = groupParts(Array.from(q.matchAll(QUERY_PART), ([part, phrase]) => readPart(part, phrase)).flat());

  const termCount = query.groups.flat().length + query.excluded.length;
  if (termCount > MAX_QUERY_TERMS) {
    throw new SearchQueryError(
      'search.too-many-terms',
      `q has ${termCount} terms; at most ${MAX_QUERY_TERMS} are allowed.`,
    );
  }
  if (query.groups.length === 0)
    throw new SearchQueryError('search.nothing-to-search-for', 'q has no words to search for.');
  return query;
}

/** One matched `QUERY_PART`; none when it holds no letters or digits (`:`, `😀`, `""`, a lone `*`). */
function readPart(part: string, phrase: string | undefined): QueryPart[] {
  if (phrase !== undefined) {
    const tokens = searchTokens(phrase);
    return tokens.length === 0
      ? []
      : [{ kind: 'term', term: { tokens, isPrefix: false }, isExcluded: part.startsWith('-') }];
  }
  // Only the uppercase word: `or` and `Or` are searched for like any word.
  if (part === 'OR') return [{ kind: 'or' }];

  const isExcluded = part.startsWith('-');
  const word = isExcluded ? part.slice(1) : part;
  const spans = searchTokenSpans(word);
  if (spans.length === 0) return [];
  // A prefix when the word ends in `*` right after its last token: in `mod-*` it follows `-`.
  const stars = TRAILING_STARS.exec(word);
  const isPrefix = stars !== null && spans[spans.length - 1]?.end === stars.index;
  const tokens = spans.map((span) => span.token);
  const lastToken = tokens[tokens.length - 1] ?? '';
  if (isPrefix && Array.from(lastToken).length < MIN_PREFIX_LENGTH) {
    throw new SearchQueryError(
      'search.prefix-too-short',
      `a prefix needs at least ${MIN_PREFIX_LENGTH} letters before "*".`,
    );
  }
  return [{ kind: 'term', term: { tokens, isPrefix }, isExcluded }];
}

/** Joins the terms around each `OR` into one group; every other positive term is a group of its own. */
function groupParts(parts: readonly QueryPart[]): SearchQuery {
  const groups: SearchTerm[][] = [];
  const excluded: SearchTerm[] = [];
  parts.forEach((part, index) => {
    if (part.kind === 'or') {
      const before = parts[index - 1];
      const after = parts[index + 1];
      if (before?.kind !== 'term' || after?.kind !== 'term') {
        throw new SearchQueryError('search.misplaced-or', 'OR needs a word or phrase on each side.');
      }
      if (before.isExcluded || after.isExcluded) {
        throw new SearchQueryError('search.misplaced-or', 'OR cannot join an excluded word or phrase.');
      }
    } else if (part.isExcluded) {
      excluded.push(part.term);
    } else {
      const previousGroup = groups[groups.length - 1];
      if (parts[index - 1]?.kind === 'or' && previousGroup) previousGroup.push(part.term);
      else groups.push([part.term]);
    }
  });
  return { groups, excluded };
}

/** Every term a matching row contains at least one of: what a snippet highlights. */
export function positiveTerms(query: SearchQuery): readonly SearchTerm[] {
  return query.groups.flat();
}

/**
 * The query as an FTS5 MATCH expression, for a table whose column holds `indexText` output. Keep
 * a row's fields in that one column: FTS5 never matches a phrase across two columns, but
 * PostgreSQL's one tsvector of `indexText(subject, body)` does.
 *
 * @example toFts5Match(parseSearchQuery('modem -"fax modem" v32 OR v3*'))
 * // ("modem" AND ("v32" OR "v3" *)) NOT "fax modem"
 */
export function toFts5Match(query: SearchQuery): string {
  const positive = query.groups.map((group) => joinGrouped(group.map(fts5Term), ' OR ')).join(' AND ');
  if (query.excluded.length === 0) return positive;
  return [`(${positive})`, ...query.excluded.map(fts5Term)].join(' NOT ');
}

/** An FTS5 string (a phrase when it holds several tokens); `*` after it makes its last token a prefix. */
function fts5Term(term: SearchTerm): string {
  // Tokens are letters and digits only; doubling quotes keeps the expression whole if that ever changes.
  const phrase = `"${term.tokens.join(' ').replaceAll('"', '""')}"`;
  return term.isPrefix ? `${phrase} *` : phrase;
}

/**
 * The query as text for `to_tsquery('simple', $1)`, matched against
 * `to_tsvector('simple', indexText(…))`.
 *
 * @example toPostgresTsquery(parseSearchQuery('modem -"fax modem" v32 OR v3*'))
 * // modem & (v32 | v3:*) & !(fax <-> modem)
 */
export function toPostgresTsquery(query: SearchQuery): string {
  const positive = query.groups.map((group) => joinGrouped(group.map(postgresTerm), ' | '));
  return [...positive, ...query.excluded.map((term) => `!${postgresTerm(term)}`)].join(' & ');
}

/** Tokens go in as they are: letters and digits need no quoting in tsquery syntax. */
function postgresTerm(term: SearchTerm): string {
  const lastIndex = term.tokens.length - 1;
  const lexemes = term.tokens.map((token, index) => (term.isPrefix && index === lastIndex ? `${token}:*` : token));
  return joinGrouped(lexemes, ' <-> ');
}

/** The parts joined by `operator`, in parentheses when there are several. */
function joinGrouped(parts: readonly string[], operator: string): string {
  const joined = parts.join(operator);
  return parts.length > 1 ? `(${joined})` : joined;
}

/** The query of an endpoint's `q` parameter, or a 400 problem that says what is wrong with it. */
export function parseQueryParameter(q: string): SearchQuery {
  try {
    return parseSearchQuery(q);
  } catch (error) {
    if (!(error instanceof SearchQueryError)) throw error;
    throw new BadRequestError(error.code, error.message, [{ pointer: '/query/q', message: error.message }]);
  }
}
