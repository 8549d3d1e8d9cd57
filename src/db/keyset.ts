import type { Page, PageRequest } from '../page.js';

/**
 * Keyset pagination, database side. A list query fetches `limit + 1` rows past the last key
 * the client saw; the extra row only tells whether a next page exists. Pages never use
 * OFFSET, so page N costs the same as page 1 and concurrent inserts cause no duplicates or gaps.
 */

/** How many rows a keyset query should fetch for `request`. */
export function rowsToFetch(request: PageRequest): number {
  return request.limit + 1;
}

/** Cuts the over-fetched rows of a keyset query down to one page and finds the next key. */
export function pageFromRows<Row, Item>(
  rows: readonly Row[],
  request: PageRequest,
  keyOf: (row: Row) => number,
  toItem: (row: Row) => Item,
): Page<Item> {
  const hasNextPage = rows.length > request.limit;
  const pageRows = hasNextPage ? rows.slice(0, request.limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map(toItem),
    nextKey: hasNextPage && last !== undefined ? keyOf(last) : null,
  };
}
