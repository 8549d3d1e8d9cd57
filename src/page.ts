/**
 * A page of a list and how to ask for one: what every list of a service takes and returns, and
 * what the HTTP edge turns into cursors and envelopes. Pages are keyset pages (see
 * src/db/keyset.ts): a page continues after the key of the last item of the one before.
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

/** The same page with each item turned into another (presentation after the query). */
export function mapPage<Item, Mapped>(page: Page<Item>, toItem: (item: Item) => Mapped): Page<Mapped> {
  return { ...page, items: page.items.map(toItem) };
}
