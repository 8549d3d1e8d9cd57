/**
 * Keyset pagination, database side. A list query fetches `limit + 1` rows past the last key
 * the client saw; the extra row only tells whether a next page exists. Pages never use
 * OFFSET, so page N costs the same as page 1 and concurrent inserts cause no duplicates or gaps.
 */
export interface PageRequest {
  readonly limit: number;
  /** The key of the last item of the previous page, or null for the first page. */
  readonly afterKey: number | null;
  /**
   * For a list whose items are chosen once, on its first page (the candidates a relevance search
   * ranks): the bound they were chosen under, which the first page hands to every later one so
   * that posts made in between cannot change the list. Absent on a first page and other lists.
   */
  readonly bound?: number;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** The key to continue after, or null when this is the last page. */
  readonly nextKey: number | null;
  /** The bound the next page must be asked under (see PageRequest.bound). */
  readonly bound?: number;
}

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

/** The same page with each item turned into another (presentation after the query). */
export function mapPage<Item, Mapped>(page: Page<Item>, toItem: (item: Item) => Mapped): Page<Mapped> {
  return { ...page, items: page.items.map(toItem) };
}
