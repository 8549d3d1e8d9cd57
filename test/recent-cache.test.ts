import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDerivedMemo } from '../src/derived-memo.js';
import { estimatedBytes, estimatedStringBytes } from '../src/estimated-bytes.js';
import { createRecentCache } from '../src/recent-cache.js';
import { fakeClock } from './support/test-board.js';

const MAX_AGE_MS = 1000;
const VERSION = 0;

/** A cache of `{ text }` values counted by their text alone (plus what the cache adds per entry). */
function textCache(maxBytes: number) {
  const clock = fakeClock();
  const cache = createRecentCache<{ readonly text: string }>({
    maxBytes,
    sizeOf: (_key, value) => value.text.length,
    clock,
  });
  const store = (key: string, text: string, version = VERSION) => {
    const value = { text };
    const loadedAtMs = clock.now().getTime();
    cache.set(key, value, { loadedAtMs, expiresAtMs: loadedAtMs + MAX_AGE_MS }, version);
    return value;
  };
  return { clock, cache, store };
}

/** What the cache counts for an entry of `textBytes`, found by storing one in an empty cache. */
function entryBytes(textBytes: number): number {
  const { cache, store } = textCache(Number.MAX_SAFE_INTEGER);
  store('probe', 'x'.repeat(textBytes));
  return cache.bytes;
}

describe('a recent cache held to a byte budget', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('hands out the same value while it is fresh and at the current version', () => {
    const { clock, cache, store } = textCache(10_000);
    const value = store('page', 'hello');
    expect(cache.get('page', VERSION)).toBe(value);
    clock.advance(MAX_AGE_MS - 1);
    expect(cache.get('page', VERSION)).toBe(value);
    expect(cache.get('page', VERSION + 1)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never holds more bytes than its budget, letting the oldest go first', () => {
    const perEntry = entryBytes(100);
    const { cache, store } = textCache(perEntry * 10);
    for (let index = 0; index < 1000; index += 1) {
      store(`page ${index}`, 'x'.repeat(50 + (index % 7) * 10));
      expect(cache.bytes).toBeLessThanOrEqual(perEntry * 10);
    }
    // Every entry but the newest few has gone; the newest still answer.
    expect(cache.get('page 999', VERSION)?.text).toHaveLength(50 + (999 % 7) * 10);
    expect(cache.get('page 0', VERSION)).toBeUndefined();
    expect(cache.size).toBeGreaterThanOrEqual(10);
    expect(cache.size).toBeLessThan(20);
  });

  it('keeps nothing larger than its whole budget', () => {
    const { cache, store } = textCache(entryBytes(100));
    store('small', 'x'.repeat(100));
    store('huge', 'x'.repeat(101));
    expect(cache.get('huge', VERSION)).toBeUndefined();
    expect(cache.get('small', VERSION)?.text).toHaveLength(100);
    expect(cache.bytes).toBe(entryBytes(100));
  });

  it('drops an expired entry when it is asked for', () => {
    const { clock, cache, store } = textCache(10_000);
    store('page', 'hello');
    clock.advance(MAX_AGE_MS);
    expect(cache.get('page', VERSION)).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });

  it('drops every expired entry when anything is stored', () => {
    const { clock, cache, store } = textCache(1_000_000);
    for (let index = 0; index < 100; index += 1) store(`old ${index}`, 'x'.repeat(100));
    clock.advance(MAX_AGE_MS / 2);
    store('younger', 'x'.repeat(100));
    clock.advance(MAX_AGE_MS / 2);
    store('new', 'x'.repeat(100));
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(2 * entryBytes(100));
    expect(cache.get('younger', VERSION)).toBeDefined();
  });

  it('refuses an entry when the clock went back before it was loaded', () => {
    const { clock, cache, store } = textCache(10_000);
    store('page', 'hello');
    clock.advance(-1);
    expect(cache.get('page', VERSION)).toBeUndefined();
  });

  it('sweeps expired entries on its own once nothing is asked for', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const { clock, cache, store } = textCache(1_000_000);
    for (let index = 0; index < 100; index += 1) store(`page ${index}`, 'x'.repeat(100));
    clock.advance(MAX_AGE_MS - 1);
    await vi.advanceTimersByTimeAsync(MAX_AGE_MS);
    expect(cache.size).toBe(100);
    clock.advance(1);
    await vi.advanceTimersByTimeAsync(MAX_AGE_MS);
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    // Nothing left to sweep: no timer is waiting.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts what is derived from a remembered value against its entry, and lets it go with it', () => {
    const perEntry = entryBytes(100);
    const doubledBytes = estimatedStringBytes('x'.repeat(200));
    const { cache, store } = textCache(2 * perEntry + doubledBytes);
    const doubled = createDerivedMemo((value: { text: string }) => value.text.repeat(2));
    const first = store('first', 'x'.repeat(100));
    const second = store('second', 'x'.repeat(100));
    expect(doubled(first)).toHaveLength(200);
    expect(doubled(first)).toHaveLength(200);
    expect(cache.bytes).toBe(2 * perEntry + doubledBytes);

    // A value derived twice over (an answer serialised from a stripped page) counts too, and
    // takes the budget over: the oldest entry goes, and what was derived from it with it.
    const stripped = createDerivedMemo((value: { text: string }) => ({ text: value.text.replace('x', 'y') }));
    const serialised = createDerivedMemo((value: { text: string }) => JSON.stringify(value));
    const strippedSecond = stripped(second);
    const answer = serialised(strippedSecond);
    expect(cache.get('first', VERSION)).toBeUndefined();
    expect(cache.get('second', VERSION)).toBe(second);
    expect(cache.bytes).toBe(perEntry + estimatedBytes(strippedSecond) + estimatedStringBytes(answer));
    expect(cache.bytes).toBeLessThanOrEqual(2 * perEntry + doubledBytes);
  });

  it('keeps and charges nothing for what is derived from a value no cache holds', () => {
    const { cache, store } = textCache(10_000);
    const held = store('page', 'hello');
    const before = cache.bytes;
    let derivations = 0;
    const repeated = createDerivedMemo((value: { text: string }) => {
      derivations += 1;
      return value.text.repeat(100);
    });
    const elsewhere = { text: 'elsewhere' };
    repeated(elsewhere);
    repeated(elsewhere);
    expect(derivations).toBe(2);
    expect(cache.bytes).toBe(before);
    repeated(held);
    repeated(held);
    expect(derivations).toBe(3);
    expect(cache.bytes).toBe(before + estimatedStringBytes('hello'.repeat(100)));
  });
});
