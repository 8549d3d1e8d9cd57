import type { Clock } from './clock.js';

/**
 * A memory of recent answers held to a byte budget. Each entry answers until it expires and
 * only while the version it was loaded at is still current. The version is whatever the owner
 * bumps when the answers may have changed (a counter of this node's writes); a node's own
 * writes therefore take effect at once, and another node's when the entry expires.
 *
 * Entries are let go oldest first: when storing one would go over the budget, and as soon as
 * they expire — an expired entry is dropped when it is asked for, when anything is stored, and
 * by a sweep shortly after the oldest entry expires, so a node that goes quiet after a crawl
 * gives its memory back. The sweep's timer is unref'd (it never keeps the process alive) and
 * holds the cache weakly (a closed board's cache is collected, timer or not).
 */
export interface RecentCache<Value> {
  /** The entry's value while it is fresh and was loaded at `version`; else undefined (and a stale entry is dropped). */
  get(key: string, version: number): Value | undefined;
  /**
   * Remembers `value` from `loadedAtMs` (taken before loading, so the age counts the load)
   * until `expiresAtMs`. A value larger than the whole budget is not kept.
   */
  set(
    key: string,
    value: Value,
    times: { readonly loadedAtMs: number; readonly expiresAtMs: number },
    version: number,
  ): void;
  /** When the value `get` answers for `key` was loaded (its `loadedAtMs`); undefined when nothing is held. */
  loadedAtMs(key: string): number | undefined;
  /** Bytes held now, by the entries' estimates and what was derived from their values (`chargeDerived`). */
  readonly bytes: number;
  readonly size: number;
}

export interface RecentCacheOptions<Value> {
  /** The most bytes the entries may hold at once. */
  readonly maxBytes: number;
  /** The bytes an entry holds, key included (see estimated-bytes.ts). */
  readonly sizeOf: (key: string, value: Value) => number;
  readonly clock: Clock;
}

interface Entry<Value> {
  readonly key: string;
  readonly value: Value;
  readonly loadedAtMs: number;
  readonly expiresAtMs: number;
  readonly version: number;
  bytes: number;
}

/** The entry a remembered object belongs to, so what is derived from it is charged there. */
const holders = new WeakMap<object, (bytes: number) => void>();

/**
 * Charges `bytes` — what `derived` holds, made from `source` — to the cache entry that holds
 * `source`, if one does: a serialised answer or a stripped copy kept beside a remembered page
 * (see `createDerivedMemo`) lives as long as the page, so it counts against the page's budget.
 * What is derived from `derived` in turn is charged to the same entry. A source no cache holds
 * (any more) is charged nothing.
 */
export function chargeDerived(source: object, derived: unknown, bytes: () => number): void {
  const charge = holders.get(source);
  if (charge === undefined) return;
  if (typeof derived === 'object' && derived !== null) holders.set(derived, charge);
  charge(bytes());
}

/**
 * Whether a cache holds `source` (or a value derived from one it holds): only then is keeping
 * what is derived from it worth anything, since only then is it handed out again.
 */
export function isRemembered(source: object): boolean {
  return holders.has(source);
}

/** Whether the entry still answers at `nowMs`; a clock that went back cannot vouch for it either. */
function isFresh(entry: Entry<unknown>, nowMs: number): boolean {
  return nowMs >= entry.loadedAtMs && nowMs < entry.expiresAtMs;
}

/** What the cache itself spends on an entry: the entry, its slot in the map, its holder closure. */
const ENTRY_BYTES = 160;

/** How long the sweep waits at least, so entries expiring together go in one sweep. */
const MIN_SWEEP_DELAY_MS = 50;

export function createRecentCache<Value>(options: RecentCacheOptions<Value>): RecentCache<Value> {
  const { maxBytes, sizeOf, clock } = options;
  const entries = new Map<string, Entry<Value>>();
  let bytes = 0;
  let isSweepScheduled = false;

  function drop(entry: Entry<Value>): void {
    entries.delete(entry.key);
    bytes -= entry.bytes;
  }

  /** Lets go of the oldest entries while they are expired or the total is over budget. */
  function trim(nowMs: number): void {
    for (const entry of entries.values()) {
      // Entries are kept in the order they were stored, which is (near enough) the order they
      // expire in: the first fresh one ends the walk once the budget holds.
      if (isFresh(entry, nowMs) && bytes <= maxBytes) return;
      drop(entry);
    }
  }

  function charge(entry: Entry<Value>, extra: number): void {
    if (entries.get(entry.key) !== entry) return;
    entry.bytes += extra;
    bytes += extra;
    trim(clock.now().getTime());
  }

  const cache = {
    get(key: string, version: number): Value | undefined {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.version === version && isFresh(entry, clock.now().getTime())) return entry.value;
      drop(entry);
      return undefined;
    },
    set(key: string, value: Value, times: { loadedAtMs: number; expiresAtMs: number }, version: number): void {
      const previous = entries.get(key);
      if (previous !== undefined) drop(previous);
      const entry: Entry<Value> = { key, value, ...times, version, bytes: ENTRY_BYTES + sizeOf(key, value) };
      if (entry.bytes > maxBytes) return;
      entries.set(key, entry);
      bytes += entry.bytes;
      if (typeof value === 'object' && value !== null) holders.set(value, (extra) => charge(entry, extra));
      trim(clock.now().getTime());
      scheduleSweep();
    },
    loadedAtMs(key: string): number | undefined {
      return entries.get(key)?.loadedAtMs;
    },
    sweep(): void {
      isSweepScheduled = false;
      trim(clock.now().getTime());
      scheduleSweep();
    },
    get bytes() {
      return bytes;
    },
    get size() {
      return entries.size;
    },
  };

  function scheduleSweep(): void {
    const oldest = entries.values().next().value;
    if (isSweepScheduled || oldest === undefined || oldest.expiresAtMs === Number.POSITIVE_INFINITY) return;
    isSweepScheduled = true;
    const delayMs = Math.min(
      MAX_TIMER_DELAY_MS,
      Math.max(MIN_SWEEP_DELAY_MS, oldest.expiresAtMs - clock.now().getTime()),
    );
    sweepLater(new WeakRef(cache), delayMs);
  }

  return cache;
}

/** setTimeout's longest delay; a longer one fires at once. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Outside `createRecentCache` on purpose: a closure made in there would hold the cache through
 * its scope, and the timer would keep a closed board's cache alive until it fired.
 */
function sweepLater(cache: WeakRef<{ sweep(): void }>, delayMs: number): void {
  setTimeout(() => cache.deref()?.sweep(), delayMs).unref();
}
