import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { MessageArea, MessageSummary } from '../api-types.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { body } from '../ui.js';

export const AREA_PAGE_SIZE = 25;

/** The API's own cap on a page: the unread messages of an entry page are counted in one. */
const MAX_PAGE_SIZE = 100;

type Order = 'oldest' | 'newest';

/**
 * Where in an area the address says the reader is. Without `order` it is the area's entry
 * (the caller's first unread message, else the newest page); with it, the page after
 * `cursor` in that order (no cursor: that order's first page, the oldest or the newest).
 */
export interface AreaPosition {
  readonly order: Order | null;
  readonly cursor: string | null;
  readonly onlyUnread: boolean;
}

export function areaPositionOf(query: URLSearchParams, isLoggedIn: boolean): AreaPosition {
  const order = query.get('order');
  return {
    order: order === 'oldest' || order === 'newest' ? order : null,
    cursor: query.get('cursor') || null,
    onlyUnread: query.get('unread') === '1' && isLoggedIn,
  };
}

/** The address of a page of the area. */
export function areaPageAddress(areaTag: string, order: Order, cursor: string | null, onlyUnread: boolean): string {
  return href('area', { areaTag }, { order, cursor, unread: onlyUnread ? 1 : undefined });
}

/** One page as the reader shows it: oldest at the top, whichever order it was fetched in. */
export interface ShownAreaPage {
  readonly messages: readonly MessageSummary[];
  /** Addresses of the neighbouring pages; null at the area's end (or where the way is unknown). */
  readonly older: string | null;
  readonly newer: string | null;
  /** Messages above this id are unread (the caller's pointer); null for guests. */
  readonly readUpTo: number | null;
}

function fetchPage(areaTag: string, order: Order, cursor: string | null, onlyUnread: boolean, limit = AREA_PAGE_SIZE) {
  return client.api
    .GET(`${API_PREFIX}/messages/areas/{areaTag}/messages`, {
      params: {
        path: { areaTag },
        query: { limit, order, ...(cursor ? { cursor } : {}), ...(onlyUnread ? { unread: 'true' } : {}) },
      },
    })
    .then(body);
}

/**
 * Loads the page `position` names. The API's cursors lead one way each — newest-first
 * cursors back in time, oldest-first ones forward — so the link against a page's own order is
 * the page it was reached from (remembered for this tab, see page-trail.ts); a bookmark
 * opened fresh has no trail, and that link is then the area's end in its direction.
 */
export async function loadAreaPage(
  areaTag: string,
  position: AreaPosition,
  address: string,
  area: MessageArea,
): Promise<ShownAreaPage> {
  const { onlyUnread } = position;
  const readUpTo = area.unreadCount === undefined ? null : (area.lastReadMessageId ?? 0);
  const trail = `area:${areaTag}`;
  const forward = (order: Order, next: string | null) => {
    if (next === null) return null;
    const to = areaPageAddress(areaTag, order, next, onlyUnread);
    rememberStep(trail, address, to);
    return to;
  };
  /** The page this one was reached from; for a bookmark, the first page of `order` instead. */
  const back = (cursor: string | null, order: Order) =>
    cursor === null ? null : stepBack(trail, address) || areaPageAddress(areaTag, order, null, onlyUnread);

  const newestFirst = async (cursor: string | null): Promise<ShownAreaPage> => {
    const page = await fetchPage(areaTag, 'newest', cursor, onlyUnread);
    return {
      messages: [...page.data].reverse(),
      older: forward('newest', page.meta.nextCursor),
      newer: back(cursor, 'newest'),
      readUpTo,
    };
  };
  const oldestFirst = async (cursor: string | null, unread = onlyUnread): Promise<ShownAreaPage> => {
    const page = await fetchPage(areaTag, 'oldest', cursor, unread);
    return {
      messages: page.data,
      older: back(cursor, 'oldest'),
      newer: forward('oldest', page.meta.nextCursor),
      readUpTo,
    };
  };

  if (position.order === 'newest') return newestFirst(position.cursor);
  if (position.order === 'oldest' || onlyUnread) return oldestFirst(position.cursor);
  const unread = area.unreadCount ?? 0;
  // Nothing unread, or a guest: the newest page. Nothing read yet: the area's first page.
  if (unread === 0 || readUpTo === null) return newestFirst(null);
  if (readUpTo === 0) return oldestFirst(null);
  // Every unread message on the newest page: that page shows the read ones before them too.
  if (unread <= AREA_PAGE_SIZE) return newestFirst(null);
  const fromFirstUnread = await oldestFirst(null, true);
  // The way back from the first unread message is a newest-first cursor that ends right
  // before it: the last of the `unread` newest messages, one page of the API away at most.
  const olderCursor =
    unread <= MAX_PAGE_SIZE ? (await fetchPage(areaTag, 'newest', null, false, unread)).meta.nextCursor : null;
  return { ...fromFirstUnread, older: forward('newest', olderCursor) };
}
