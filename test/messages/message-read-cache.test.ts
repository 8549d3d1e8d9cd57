import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BaudApp } from '../../src/app.js';
import { MESSAGE_READ_CACHE_BYTES, MESSAGE_READ_CACHE_MAX_AGE_MS } from '../../src/messages/message-read-cache.js';
import { describeEachDialect, fakeClock, openSecondNode, type SecondNode } from '../support/test-board.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from './message-fixture.js';

/**
 * Each node remembers pages, messages and area counters it read for at most
 * MESSAGE_READ_CACHE_MAX_AGE_MS. Two nodes share one database here: a post, a deletion or an
 * import shows at once on the node that made it, and on the other node within the bound.
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
    expect(await subjects(nodeB)).toEqual([]);
    expect(await messageCount(nodeB)).toBe(0);
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
    expect(await detailStatus(nodeB, message.uuid)).toBe(200);
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
 * One client walking a whole area, 100 messages a page, must not leave the pages behind: each
 * expires after MESSAGE_READ_CACHE_MAX_AGE_MS and is let go, with the answers kept beside it,
 * while a page asked for again within the bound is still answered from memory.
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

  const page = (cursor: string | null) =>
    board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/general/messages?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      headers: board.alice.auth,
    });
  const cachedPageBytes = () => board.board.messageStore.readCacheBytes().pages;

  it('lets the pages of a walk go once they expire, answers and all', async () => {
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    const first = await page(null);
    expect(first.statusCode).toBe(200);
    const firstPageBytes = cachedPageBytes();
    expect(firstPageBytes).toBeGreaterThan(0);
    let cursor: string | null = first.json().meta.nextCursor;
    let pages = 1;
    while (cursor !== null) {
      const next = await page(cursor);
      expect(next.statusCode).toBe(200);
      cursor = next.json().meta.nextCursor;
      pages += 1;
    }
    expect(pages).toBe(5);
    expect(cachedPageBytes()).toBeGreaterThan(4 * firstPageBytes);
    expect(cachedPageBytes()).toBeLessThanOrEqual(MESSAGE_READ_CACHE_BYTES.pages);

    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    expect((await page(null)).body).toBe(first.body);
    // The walk's pages have gone; the first page is remembered again, as much as the first time.
    expect(cachedPageBytes()).toBe(firstPageBytes);
  });

  it('still answers a page asked for again within the bound from memory', async () => {
    const store = board.board.messageStore;
    const request = { afterKey: null, limit: 100 };
    const remembered = await store.listAreaMessages('general', request);
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS - 1);
    expect(await store.listAreaMessages('general', request)).toBe(remembered);
    clock.advance(1);
    expect(await store.listAreaMessages('general', request)).not.toBe(remembered);
  });
});
