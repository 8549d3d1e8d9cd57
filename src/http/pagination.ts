import type { FastifyReply, FastifyRequest } from 'fastify';
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
 * Builds the list envelope for `page` and, when there is a next page, a `Link: rel="next"`
 * header pointing at this same request with the new cursor.
 */
export function listReply<Item>(
  request: FastifyRequest,
  reply: FastifyReply,
  page: Page<Item>,
  paging: { list: string; limit: number; cursors: CursorCodec },
) {
  const next = page.nextKey === null ? null : paging.cursors.encode(paging.list, page.nextKey);
  if (next !== null) {
    const url = new URL(request.url, 'http://baud.invalid');
    url.searchParams.set('cursor', next);
    reply.header('link', `<${url.pathname}${url.search}>; rel="next"`);
  }
  return {
    data: [...page.items],
    meta: { count: page.items.length, limit: paging.limit, nextCursor: next },
    pagination: { next },
  };
}

/** The envelope of a list that is never paginated (conferences, areas, nodes, last callers). */
export function wholeListReply<Item>(items: readonly Item[], limit = items.length) {
  return {
    data: [...items],
    meta: { count: items.length, limit, nextCursor: null },
    pagination: { next: null },
  };
}
