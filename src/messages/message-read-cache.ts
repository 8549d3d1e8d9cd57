import type { Clock } from '../clock.js';
import { estimatedBytes, estimatedStringBytes } from '../estimated-bytes.js';
import type { Page } from '../page.js';
import { createRecentCache, type RecentCache } from '../recent-cache.js';
import type { AreaCounters, MessageDetailRow, MessageSummary, PointerWithUnread } from './message-reads.js';
import type { SearchHit } from './message-search-store.js';

/**
 * How long a node reuses a page of an area, a message or an area's counters it read. The
 * node's own posts, deletions and imports take effect at once; another node's (or another
 * process's, such as `baud message import`) within this bound.
 */
export const MESSAGE_READ_CACHE_MAX_AGE_MS = 1000;

/**
 * A remembered read asked for this long after it was loaded is loaded again in the background,
 * and the answer held goes on answering until the new one is in (never past its age). Without
 * it a busy read is loaded again only once it has expired, and every reader asking while that
 * load is under way waits for it: the slow tail of a busy search (see docs/PERFORMANCE.md). A
 * busy read is then loaded about every 750 ms instead of every second; one asked for only early
 * in its age just expires.
 */
const REFRESH_AHEAD_AFTER_MS = (MESSAGE_READ_CACHE_MAX_AGE_MS * 3) / 4;

const MiB = 1024 * 1024;

/**
 * The byte budgets of the read caches, counted with estimated-bytes.ts: each entry's
 * rows and everything kept beside them — the ANSI-stripped copy and the serialised answers
 * with their ETags (see `chargeDerived`). Measured: a first page of 25 messages with its
 * answer counts ~29 KB (~36 KB once also asked for with `?stripAnsi=false`), a 100-message
 * page ~116 KB, a message with a ~400-byte body and its answer ~3 KB. The pages' budget
 * holds the ~550 busiest first pages, the messages' ~2,700 messages — and since an entry
 * answers for a second only, they are what a node reads within one second. Constants, not
 * settings: together 25 MiB, a small share of a node's memory, and a node that runs out of
 * them reads from the database as it would without a cache. Search pages (with each found
 * message's body, for its snippet) have 4 MiB more: ~130 pages of 25 messages of ~400 bytes —
 * the same search asked for again within the second (a linked search, a bot polling for a
 * word) is answered from memory; any other search is read as before. A member's pointer with
 * its unread count in one area (~240 bytes) has 1 MiB: ~4,300 member-areas, the area pages
 * and reader home pages asked for again within the second (each is one database round trip
 * otherwise, which on PostgreSQL costs twice a remembered page 1).
 */
export const MESSAGE_READ_CACHE_BYTES = {
  pages: 16 * MiB,
  messages: 8 * MiB,
  counters: 1 * MiB,
  searches: 4 * MiB,
  unread: 1 * MiB,
} as const;

/**
 * The bytes of the reads asked for once in the last MESSAGE_READ_CACHE_MAX_AGE_MS (a key and
 * its keeping, ~230 bytes): ~4,500 keys a second.
 */
export const MESSAGE_READ_SIGHTING_BYTES = 1 * MiB;

/**
 * The message base's remembered reads: pages, messages, single-area counters, search pages and single-area unread counts
 * read outside a transaction are kept for MESSAGE_READ_CACHE_MAX_AGE_MS (a busy area's first page is asked
 * for far more often than it changes), each kind in its own byte budget.
 *
 * A read is kept from the second time it is asked for within that second, not the first: one
 * client walking an area asks for each page once, and keeping each of those pages for a second
 * makes V8 move it to the old generation, where it lies as garbage until a full collection.
 * Walking 100,000 messages took a node from 118 to 177 MiB with the byte budgets alone, to
 * 162 MiB keeping only what is asked for twice, and to 147 MiB with no read cache at all (one
 * run each, bench/ scenario "memory after a crawl"). Read once, a page dies young and cheaply;
 * a busy page costs one more database read a second.
 */
export interface MessageReadCache {
  /** `load`'s page from memory while it is fresh; `key` names the area and the page asked for. */
  page(key: string, load: () => Promise<Page<MessageSummary>>): Promise<Page<MessageSummary>>;
  message(uuid: string, load: () => Promise<MessageDetailRow | undefined>): Promise<MessageDetailRow | undefined>;
  counters(areaTag: string, load: () => Promise<Map<string, AreaCounters>>): Promise<Map<string, AreaCounters>>;
  /** `load`'s page of search hits; `key` names everything that shapes the page (see `searchPageCacheKey`). */
  search(key: string, load: () => Promise<Page<SearchHit>>): Promise<Page<SearchHit>>;
  /**
   * A member's pointer in one area with the live messages after it; `key` names the member and
   * the area. Stale after any write to the message base and after any pointer moves on this node.
   */
  unread(key: string, load: () => Promise<Map<string, PointerWithUnread>>): Promise<Map<string, PointerWithUnread>>;
  /** A write to the message base: every remembered read is stale from now on. */
  written(): void;
  /**
   * A new-scan pointer moved: remembered unread counts are stale, pages and messages are not
   * (a member reading through an area moves a pointer with each message, and must not empty
   * everyone's remembered pages as they go).
   */
  pointerMoved(): void;
  /** Bytes each cache holds now (tests and metrics). */
  bytes(): {
    readonly pages: number;
    readonly messages: number;
    readonly counters: number;
    readonly searches: number;
    readonly unread: number;
  };
}

/** Whether a read was asked for before does not depend on what was written since. */
const ANY_VERSION = 0;

const sizeOf = (key: string, value: unknown) => estimatedStringBytes(key) + estimatedBytes(value);

export function createMessageReadCache(clock: Clock): MessageReadCache {
  /** This node's writes to the message base, counted: any write makes every remembered read stale. */
  let version = 0;
  /** This node's pointer moves, counted; an unread count is fresh while neither count moved. */
  let pointerVersion = 0;
  const pages = createRecentCache<Page<MessageSummary>>({ maxBytes: MESSAGE_READ_CACHE_BYTES.pages, sizeOf, clock });
  const messages = createRecentCache<MessageDetailRow>({ maxBytes: MESSAGE_READ_CACHE_BYTES.messages, sizeOf, clock });
  const counters = createRecentCache<Map<string, AreaCounters>>({
    maxBytes: MESSAGE_READ_CACHE_BYTES.counters,
    sizeOf,
    clock,
  });

  const searches = createRecentCache<Page<SearchHit>>({
    maxBytes: MESSAGE_READ_CACHE_BYTES.searches,
    sizeOf,
    clock,
  });

  const unread = createRecentCache<Map<string, PointerWithUnread>>({
    maxBytes: MESSAGE_READ_CACHE_BYTES.unread,
    sizeOf,
    clock,
  });

  /** The reads asked for once lately, by kind and key: the second asking keeps the answer. */
  const sightings = createRecentCache<true>({
    maxBytes: MESSAGE_READ_SIGHTING_BYTES,
    sizeOf: (key) => estimatedStringBytes(key),
    clock,
  });

  /**
   * Loads under way, by the version they began in and the read: the same read asked for while it
   * loads waits for that load instead of starting its own. When a busy page or search expires,
   * the readers asking in the next moment would otherwise all go to the database at once (on
   * PostgreSQL each taking a connection, and for a search a place in the budget). A read asked
   * for after a write begins in a newer version, so it never waits for a load begun before it.
   * Someone waiting makes it a read asked for twice: its answer is kept.
   */
  const loading = new Map<string, { readonly answer: Promise<unknown>; isAskedAgain: boolean }>();

  /**
   * `load`'s answer from `cache` while it is fresh; else loaded (or the load under way awaited),
   * and kept if it was asked for once already within the bound. A miss (undefined) is never
   * remembered. A remembered answer asked for in the last quarter of its age is loaded again in
   * the background (see REFRESH_AHEAD_AFTER_MS) while it goes on answering.
   */
  async function remembered<T, Loaded extends T | undefined>(
    cache: RecentCache<T>,
    sighting: string,
    key: string,
    load: () => Promise<Loaded>,
    currentVersion: () => number = () => version,
  ): Promise<Loaded> {
    const atVersion = currentVersion();
    const known = cache.get(key, atVersion);
    if (known === undefined) return loadOnce(cache, sighting, key, load, currentVersion, false);
    const loadedAtMs = cache.loadedAtMs(key) ?? Number.POSITIVE_INFINITY;
    const isDue = clock.now().getTime() - loadedAtMs >= REFRESH_AHEAD_AFTER_MS;
    if (isDue && !loading.has(flightKeyOf(atVersion, sighting))) {
      // Nobody waits for it: if it fails, the answer held goes on until it expires, and the
      // first read after that loads again and meets the failure itself.
      loadOnce(cache, sighting, key, load, currentVersion, true).catch(() => {});
    }
    // What the cache holds was loaded by the same `load`: a T that is not undefined.
    return known as Loaded;
  }

  const flightKeyOf = (atVersion: number, sighting: string) => `${atVersion} ${sighting}`;

  /**
   * Loads `key` unless a load of it begun in the current version is under way (then awaits that
   * one), and keeps the answer if it is busy — known to be (`isBusy`, a refresh ahead of a
   * remembered answer), asked for while it loaded, or asked for once already within the bound —
   * and nothing was written while it loaded (it would be stale already, and could push out an
   * answer loaded since).
   */
  async function loadOnce<T, Loaded extends T | undefined>(
    cache: RecentCache<T>,
    sighting: string,
    key: string,
    load: () => Promise<Loaded>,
    currentVersion: () => number,
    isBusy: boolean,
  ): Promise<Loaded> {
    const atVersion = currentVersion();
    const flightKey = flightKeyOf(atVersion, sighting);
    const underWay = loading.get(flightKey);
    if (underWay !== undefined) {
      underWay.isAskedAgain = true;
      // Begun by the same `load` for the same read: its answer is a Loaded.
      return underWay.answer as Promise<Loaded>;
    }
    const loadedAtMs = clock.now().getTime();
    const flight = { answer: load(), isAskedAgain: isBusy };
    loading.set(flightKey, flight);
    try {
      const value = await flight.answer;
      const times = { loadedAtMs, expiresAtMs: loadedAtMs + MESSAGE_READ_CACHE_MAX_AGE_MS };
      const isSeenBefore = flight.isAskedAgain || sightings.get(sighting, ANY_VERSION) !== undefined;
      if (!isSeenBefore) sightings.set(sighting, true, times, ANY_VERSION);
      else if (value !== undefined && currentVersion() === atVersion) cache.set(key, value, times, atVersion);
      return value;
    } finally {
      loading.delete(flightKey);
    }
  }

  return {
    page: (key, load) => remembered(pages, `page ${key}`, key, load),
    message: (uuid, load) => remembered(messages, `message ${uuid}`, uuid, load),
    counters: (areaTag, load) => remembered(counters, `counters ${areaTag}`, areaTag, load),
    search: (key, load) => remembered(searches, `search ${key}`, key, load),
    // Both counts only grow, so their sum is unchanged exactly while neither moved.
    unread: (key, load) => remembered(unread, `unread ${key}`, key, load, () => version + pointerVersion),
    written: () => {
      version += 1;
    },
    pointerMoved: () => {
      pointerVersion += 1;
    },
    bytes: () => ({
      pages: pages.bytes,
      messages: messages.bytes,
      counters: counters.bytes,
      searches: searches.bytes,
      unread: unread.bytes,
    }),
  };
}
