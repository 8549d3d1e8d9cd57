import type { FastifyReply } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import type { CursorCodec } from '../db/cursor-codec.js';
import type { Page, PageRequest } from '../db/keyset.js';

export const DEFAULT_PAGE_LIMIT = 25;
export const MAX_PAGE_LIMIT = 100;

const StripAnsiParam = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')], {
  description: 'Strip ANSI escape sequences and pipe colour codes from text fields (default true).',
});

/** `?stripAnsi=` alone, for detail endpoints that return text but are not lists. */
export const StripAnsiQuery = Type.Object({ stripAnsi: Type.Optional(StripAnsiParam) });

/** Query string of every paginated list: `limit`, `cursor`, `stripAnsi`. */
export const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT, description: 'Page size.' }),
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'Opaque cursor from the previous page.' }),
  ),
  stripAnsi: Type.Optional(StripAnsiParam),
});
export type ListQuery = Static<typeof ListQuery>;

/** `stripAnsi` is on unless the client sent `false` or `0`. */
export function shouldStripAnsi(query: { stripAnsi?: string | undefined }): boolean {
  return query.stripAnsi !== 'false' && query.stripAnsi !== '0';
}

/** The response schema of a list of `item`s: `data`, `meta` and `pagination` (both spec variants). */
export function ListEnvelope<T extends TSchema>(item: T) {
  const NextCursor = Type.Union([Type.String(), Type.Null()]);
  return Type.Object({
    data: Type.Array(item),
    meta: Type.Object({
      count: Type.Integer({ description: 'Number of items in data (not a total).' }),
      limit: Type.Integer(),
      nextCursor: NextCursor,
    }),
    pagination: Type.Object({ next: NextCursor }),
  });
}

/** Reads `limit` and `cursor` (already schema-validated) into a keyset page request for `list`. */
export function pageRequestFrom(query: ListQuery, list: string, cursors: CursorCodec): PageRequest {
  return {
    limit: query.limit ?? DEFAULT_PAGE_LIMIT,
    afterKey: query.cursor === undefined ? null : cursors.decode(list, query.cursor),
  };
}

/**
 * Answers one page of a paginated list (the one handler every such route shares): reads
 * `limit` and `cursor` for `list`, lets `load` fetch the page (it gets `?stripAnsi` too), and
 * builds the envelope with, when there is a next page, a `Link: rel="next"` header pointing at
 * this same request with the new cursor.
 */
export async function sendListPage<Item>(
  request: { readonly url: string; readonly query: ListQuery },
  reply: FastifyReply,
  paging: { readonly list: string; readonly cursors: CursorCodec },
  load: (pageRequest: PageRequest, shouldStrip: boolean) => Promise<Page<Item>>,
) {
  const { list, cursors } = paging;
  const pageRequest = pageRequestFrom(request.query, list, cursors);
  const page = await load(pageRequest, shouldStripAnsi(request.query));
  const next = page.nextKey === null ? null : cursors.encode(list, page.nextKey);
  if (next !== null) {
    const url = new URL(request.url, 'http://baud.invalid');
    url.searchParams.set('cursor', next);
    reply.header('link', `<${url.pathname}${url.search}>; rel="next"`);
  }
  return listEnvelope(page.items, pageRequest.limit, next);
}

/** The envelope of a list that is never paginated (conferences, areas, nodes, last callers). */
export function wholeListReply<Item>(items: readonly Item[], limit = items.length) {
  return listEnvelope(items, limit, null);
}

/** `data`, `meta` and `pagination`: the spec's two ways of saying where the next page is. */
function listEnvelope<Item>(items: readonly Item[], limit: number, next: string | null) {
  return {
    data: [...items],
    meta: { count: items.length, limit, nextCursor: next },
    pagination: { next },
  };
}
