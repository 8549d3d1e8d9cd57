import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BaudApp } from '../../src/app.js';
import {
  createMessageReadCache,
  MESSAGE_READ_CACHE_BYTES,
  MESSAGE_READ_CACHE_MAX_AGE_MS,
} from '../../src/messages/message-read-cache.js';
import { describeEachDialect, fakeClock, openSecondNode, type SecondNode } from '../support/test-board.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from './message-fixture.js';

/**
 * Each node remembers pages, messages and area counters it read (from the second time it was
 * asked for) for at most MESSAGE_READ_CACHE_MAX_AGE_MS. Two nodes share one database here: a
 * post, a deletion or an import shows at once on the node that made it, and on the other node
 * within the bound.
 */
describeEachDialect('message reads remembered across nodes', (dialect) => {
  const clock = fakeClock();
  let nodeA: MessageTestBoard;
  let second: SecondNode;
  let nodeB: BaudApp;
  beforeAll(async () => {
    nodeA = await createMessageTestBoard(dialect, clock);
    second = await openSecondNode(nodeA, clock);
    nodeB = second.app;
  });
  afterAll(async () => {
    await second?.close();
    await nodeA?.close();
  });

  const headers = () => nodeA.alice.auth;
  const subjects = async (node: BaudApp) =>
    (await node.inject({ method: 'GET', url: `${API}/messages/areas/general/messages`, headers: headers() }))
      .json()
      .data.map((message: { subject: string }) => message.subject);
  const messageCount = async (node: BaudApp) =>
    (await node.inject({ method: 'GET', url: `${API}/messages/areas/general`, headers: headers() })).json()
      .messageCount;
  const detailStatus = async (node: BaudApp, uuid: string) =>
    (await node.inject({ method: 'GET', url: `${API}/messages/${uuid}`, headers: headers() })).statusCode;

  it('shows a post at once where it was made and within the bound elsewhere', async () => {
    expect(await subjects(nodeA.app)).toEqual([]);
    // Asked for twice, so node B remembers both.
    for (let asked = 0; asked < 2; asked += 1) {
      expect(await subjects(nodeB)).toEqual([]);
      expect(await messageCount(nodeB)).toBe(0);
    }
    const posted = await nodeA.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: headers(),
      payload: { subject: 'Fresh', message: 'Hello' },
    });
    expect(posted.statusCode).toBe(201);
    expect(await subjects(nodeA.app)).toEqual(['Fresh']);
    expect(await messageCount(nodeA.app)).toBe(1);
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS - 1);
    expect(await subjects(nodeB)).toEqual([]);
    expect(await messageCount(nodeB)).toBe(0);
    clock.advance(1);
    expect(await subjects(nodeB)).toEqual(['Fresh']);
    expect(await messageCount(nodeB)).toBe(1);
  });

  it('drops a deleted message at once where it was deleted and within the bound elsewhere', async () => {
    const [message] = (
      await nodeA.app.inject({ method: 'GET', url: `${API}/messages/areas/general/messages`, headers: headers() })
    ).json().data;
    expect(await detailStatus(nodeA.app, message.uuid)).toBe(200);
    for (let asked = 0; asked < 2; asked += 1) expect(await detailStatus(nodeB, message.uuid)).toBe(200);
    const deleted = await nodeA.app.inject({
      method: 'DELETE',
      url: `${API}/messages/${message.uuid}`,
      headers: headers(),
    });
    expect(deleted.statusCode).toBe(204);
    expect(await detailStatus(nodeA.app, message.uuid)).toBe(404);
    expect(await subjects(nodeA.app)).toEqual([]);
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS - 1);
    expect(await detailStatus(nodeB, message.uuid)).toBe(200);
    clock.advance(1);
    expect(await detailStatus(nodeB, message.uuid)).toBe(404);
    expect(await subjects(nodeB)).toEqual([]);
  });

  it('shows an import through the board at once', async () => {
    expect(await subjects(nodeA.app)).toEqual([]);
    await seedMessages(nodeA, 'general', [{ subject: 'Imported' }]);
    expect(await subjects(nodeA.app)).toEqual(['Imported']);
  });
});

/**
 * One client walking a whole area, 100 messages a page, asks for each page once: none is kept,
 * so the walk leaves nothing behind. A page asked for again within the bound is kept, with the
 * answers made for it, and let go once it expires.
 */
describeEachDialect('message reads remembered during a crawl', (dialect) => {
  const clock = fakeClock();
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect, clock);
    await seedMessages(board, 'general', 450);
  });
  afterAll(async () => {
    await board?.close();
  });

  const page = async (cursor: string | null) => {
    const response = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/general/messages?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      headers: board.alice.auth,
    });
    expect(response.statusCode).toBe(200);
    return { body: response.body, next: response.json().meta.nextCursor as string | null };
  };
  const cachedPageBytes = () => board.board.messageStore.readCacheBytes().pages;

  it('keeps none of the pages of a walk, and lets a page asked for again go once it expires', async () => {
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    const first = await page(null);
    const secondCursor = first.next;
    let cursor = first.next;
    let pages = 1;
    while (cursor !== null) {
      cursor = (await page(cursor)).next;
      pages += 1;
    }
    expect(pages).toBe(5);
    expect(cachedPageBytes()).toBe(0);

    expect((await page(null)).body).toBe(first.body);
    const firstPageBytes = cachedPageBytes();
    expect(firstPageBytes).toBeGreaterThan(0);
    await page(secondCursor);
    const bothPagesBytes = cachedPageBytes();
    expect(bothPagesBytes).toBeGreaterThan(firstPageBytes);
    expect(bothPagesBytes).toBeLessThanOrEqual(MESSAGE_READ_CACHE_BYTES.pages);

    // Both expire; the second page, asked for twice again, is all that is held.
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    await page(secondCursor);
    await page(secondCursor);
    expect(cachedPageBytes()).toBe(bothPagesBytes - firstPageBytes);
  });

  it('answers a page asked for a third time within the bound from memory', async () => {
    const store = board.board.messageStore;
    const request = { afterKey: null, limit: 100, order: 'oldest', aboveId: 0 } as const;
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    const once = await store.listAreaMessages('general', request);
    const twice = await store.listAreaMessages('general', request);
    expect(twice).not.toBe(once);
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS - 1);
    expect(await store.listAreaMessages('general', request)).toBe(twice);
    clock.advance(1);
    expect(await store.listAreaMessages('general', request)).not.toBe(twice);
  });
});

describe('loads of one read under way', () => {
  const page = (subject: string) => ({ items: [{ subject }], nextKey: null }) as never;
  function deferred() {
    let resolve: (value: never) => void = () => {};
    let reject: (error: Error) => void = () => {};
    const promise = new Promise<never>((onValue, onError) => {
      resolve = onValue;
      reject = onError;
    });
    return { promise, resolve, reject };
  }

  it('lets a read asked for while it loads wait for that load, but never across a write', async () => {
    const cache = createMessageReadCache(fakeClock());
    const first = deferred();
    const load = vi.fn(() => first.promise);
    const asked = Array.from({ length: 5 }, () => cache.page('general 1', load));
    expect(load).toHaveBeenCalledTimes(1);
    first.resolve(page('one'));
    expect(await Promise.all(asked)).toEqual(Array.from({ length: 5 }, () => page('one')));
    // Asked for five times at once is asked for again: the answer is kept.
    expect(await cache.page('general 1', load)).toEqual(page('one'));
    expect(load).toHaveBeenCalledTimes(1);

    // A write while a load is under way: a read asked for after it loads again.
    cache.written();
    const before = deferred();
    const after = deferred();
    const loads = [before, after];
    const loadInTurn = vi.fn(() => (loads.shift() ?? deferred()).promise);
    const early = cache.page('general 1', loadInTurn);
    cache.written();
    const late = cache.page('general 1', loadInTurn);
    expect(loadInTurn).toHaveBeenCalledTimes(2);
    before.resolve(page('stale'));
    after.resolve(page('fresh'));
    expect([await early, await late]).toEqual([page('stale'), page('fresh')]);
  });

  it('hands a failed load to everyone who waited for it, and loads again when asked next', async () => {
    const cache = createMessageReadCache(fakeClock());
    const failing = deferred();
    const load = vi.fn(() => failing.promise);
    const asked = [cache.search('modem', load), cache.search('modem', load)];
    failing.reject(new Error('database gone'));
    await expect(Promise.all(asked)).rejects.toThrow('database gone');
    await expect(asked[1]).rejects.toThrow('database gone');
    const retried = cache.search('modem', async () => page('back'));
    expect(await retried).toEqual(page('back'));
    expect(load).toHaveBeenCalledTimes(1);
  });

  /** A page asked for twice at the clock's time, so it is kept from then. */
  async function keptPage(cache: ReturnType<typeof createMessageReadCache>, subject: string) {
    for (let asked = 0; asked < 2; asked += 1) await cache.page('general 1', async () => page(subject));
  }

  it('loads a busy read again in its last quarter and answers with the one held meanwhile, never past its age', async () => {
    const clock = fakeClock();
    const cache = createMessageReadCache(clock);
    await keptPage(cache, 'one');
    const notCalled = vi.fn(() => deferred().promise);
    clock.advance(749);
    expect(await cache.page('general 1', notCalled)).toEqual(page('one'));
    expect(notCalled).not.toHaveBeenCalled();

    clock.advance(1);
    const second = deferred();
    const refresh = vi.fn(() => second.promise);
    expect(await cache.page('general 1', refresh)).toEqual(page('one'));
    expect(await cache.page('general 1', refresh)).toEqual(page('one'));
    expect(refresh).toHaveBeenCalledTimes(1);
    second.resolve(page('two'));
    // The refresh awaited this promise first, so it has kept its answer by now.
    await second.promise;
    expect(await cache.page('general 1', notCalled)).toEqual(page('two'));
    expect(notCalled).not.toHaveBeenCalled();

    // 'two' was loaded from 750 ms: its refresh begins at 1,500 ms, and at 1,750 ms it has
    // expired, so a read then waits for that refresh rather than take 'two'.
    clock.advance(749);
    expect(await cache.page('general 1', notCalled)).toEqual(page('two'));
    clock.advance(1);
    const third = deferred();
    expect(await cache.page('general 1', () => third.promise)).toEqual(page('two'));
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS - 750);
    const waiting = cache.page('general 1', notCalled);
    third.resolve(page('three'));
    expect(await waiting).toEqual(page('three'));
    expect(notCalled).not.toHaveBeenCalled();
  });

  it('goes on answering when a refresh fails, and lets the first read after expiry meet the failure', async () => {
    const clock = fakeClock();
    const cache = createMessageReadCache(clock);
    await keptPage(cache, 'one');
    clock.advance(800);
    const failing = vi.fn(async () => {
      throw new Error('database gone');
    });
    expect(await cache.page('general 1', failing)).toEqual(page('one'));
    expect(failing).toHaveBeenCalled();
    expect(await cache.page('general 1', failing)).toEqual(page('one'));
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS - 800);
    await expect(cache.page('general 1', failing)).rejects.toThrow('database gone');
  });

  it('keeps no load that a write overtook, so it cannot push out what was loaded after the write', async () => {
    const cache = createMessageReadCache(fakeClock());
    await keptPage(cache, 'one');
    cache.written();
    const overtaken = deferred();
    const early = cache.page('general 1', () => overtaken.promise);
    cache.written();
    await keptPage(cache, 'after the write');
    overtaken.resolve(page('before the write'));
    expect(await early).toEqual(page('before the write'));
    expect(await cache.page('general 1', async () => page('loaded again'))).toEqual(page('after the write'));
  });
});
