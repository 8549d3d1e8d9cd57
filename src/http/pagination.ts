import type { FastifyReply } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { estimatedBytes, estimatedStringBytes } from '../estimated-bytes.js';
import type { Page, PageRequest } from '../page.js';
import { chargeDerived, isRemembered } from '../recent-cache.js';
import type { CursorCodec } from './cursor-codec.js';
import { type SerializedAnswer, sendSerialized, serializeAnswer } from './serialized-answer.js';

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

/**
 * The response schema of a list of `item`s: `data`, `meta` and `pagination` (both spec variants).
 * Its example is a one-item page of the item's example (what `?limit=1` answers), so a list never
 * needs an example of its own.
 */
export function ListEnvelope<T extends TSchema>(item: T) {
  const NextCursor = Type.Union([Type.String(), Type.Null()]);
  const itemExample: unknown = (item as { examples?: readonly unknown[] }).examples?.[0];
  return Type.Object(
    {
      data: Type.Array(item),
      meta: Type.Object({
        count: Type.Integer({ description: 'Number of items in data (not a total).' }),
        limit: Type.Integer(),
        nextCursor: NextCursor,
      }),
      pagination: Type.Object({ next: NextCursor }),
    },
    itemExample === undefined ? {} : { examples: [listEnvelope([itemExample], 1, null)] },
  );
}

/** Reads `limit` and `cursor` (already schema-validated) into a keyset page request for `list`. */
export function pageRequestFrom(query: ListQuery, list: string, cursors: CursorCodec): PageRequest {
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  if (query.cursor === undefined) return { limit, afterKey: null };
  const { key, bound } = cursors.decode(list, query.cursor);
  return bound === null ? { limit, afterKey: key } : { limit, afterKey: key, bound };
}

/** A page's answer, kept beside the page while the service hands out the same page object. */
interface ListPageAnswer extends SerializedAnswer {
  /** What the answer was built for; the same page object asked for under another is built anew. */
  readonly list: string;
  readonly limit: number;
  readonly next: string | null;
  /** The `Link` header for the last URL this answer went to: clients repeat their URLs. */
  link?: { readonly url: string; readonly header: string };
}

/** Where the next page is: this request's URL with the cursor replaced. */
function nextLink(url: string, next: string): string {
  const nextUrl = new URL(url, 'http://baud.invalid');
  nextUrl.searchParams.set('cursor', next);
  return `<${nextUrl.pathname}${nextUrl.search}>; rel="next"`;
}

/**
 * The one handler every paginated list route shares, one per route: reads `limit` and
 * `cursor` for `list`, lets `load` fetch the page (it gets `?stripAnsi` too), and answers the
 * envelope with, when there is a next page, a `Link: rel="next"` header pointing at this same
 * request with the new cursor.
 *
 * A page the service hands out again (a remembered read, see `createDerivedMemo`) is answered
 * with the body, ETag and cursor made the first time: a busy area's first page is serialised
 * and hashed once per second per node instead of once per request. What is kept counts against
 * the byte budget of the cache holding the page (`chargeDerived`).
 */
export function listPageSender() {
  const answers = new WeakMap<object, ListPageAnswer>();
  return async function sendListPage<Item, Reply extends FastifyReply>(
    request: { readonly url: string; readonly query: ListQuery },
    reply: Reply,
    paging: { readonly list: string; readonly cursors: CursorCodec },
    load: (pageRequest: PageRequest, shouldStrip: boolean) => Promise<Page<Item>>,
  ): Promise<Reply> {
    const { list, cursors } = paging;
    const pageRequest = pageRequestFrom(request.query, list, cursors);
    const page = await load(pageRequest, shouldStripAnsi(request.query));
    let answer = answers.get(page);
    if (answer === undefined || answer.list !== list || answer.limit !== pageRequest.limit) {
      const next = page.nextKey === null ? null : cursors.encode(list, page.nextKey, page.bound);
      const serialized = serializeAnswer(reply, listEnvelope(page.items, pageRequest.limit, next));
      const made: ListPageAnswer = { ...serialized, list, limit: pageRequest.limit, next };
      // Kept only beside a page a cache holds: no other page is handed out again.
      if (isRemembered(page)) {
        answers.set(page, made);
        chargeDerived(page, made, () => estimatedBytes(made));
      }
      answer = made;
    }
    if (answer.next !== null) {
      let link = answer.link;
      if (link?.url !== request.url) {
        const made = { url: request.url, header: nextLink(request.url, answer.next) };
        // Charged each time, though it replaces the last one: over-counting only lets the page go sooner.
        chargeDerived(page, made, () => estimatedStringBytes(made.url) + estimatedStringBytes(made.header));
        link = made;
        answer.link = link;
      }
      reply.header('link', link.header);
    }
    return sendSerialized(reply, answer);
  };
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
