import { afterAll, beforeAll, expect, it } from 'vitest';
import { MESSAGE_READ_CACHE_MAX_AGE_MS } from '../../src/messages/message-read-cache.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import { API, createMessageTestBoard, ESC, type MessageTestBoard, seedMessages, uuidsOf } from './message-fixture.js';

/**
 * A remembered page or message is answered with the body, ETag and cursor made the first time
 * it went out. What differs from one request to the next — the URL in `Link`, `?stripAnsi`,
 * the caller's right to read — must still be each request's own.
 */
describeEachDialect('remembered answers', (dialect) => {
  const clock = fakeClock();
  let board: MessageTestBoard;
  let uuid: string;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect, clock);
    await seedMessages(board, 'general', [
      { subject: `${ESC}[1mBold${ESC}[0m one` },
      { subject: 'Two' },
      { subject: 'Three' },
    ]);
    await seedMessages(board, 'members', [{ subject: 'For members', body: 'zebra crossing' }]);
    await seedMessages(board, 'general', [{ subject: 'Everyone', body: 'zebra stripes' }]);
    [uuid] = (await uuidsOf(board, 'general')) as [string];
  });
  afterAll(async () => {
    await board?.close();
  });

  const get = (url: string, headers: Record<string, string> = board.alice.auth) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers });

  it('sends the same body and ETag for a page asked twice, and 304 for its tag', async () => {
    const first = await get('/messages/areas/general/messages?limit=2');
    const second = await get('/messages/areas/general/messages?limit=2');
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
    const revalidated = await get('/messages/areas/general/messages?limit=2', {
      ...board.alice.auth,
      'if-none-match': String(first.headers.etag),
    });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.body).toBe('');
  });

  it("points Link at each request's own URL when the page is remembered", async () => {
    const plain = await get('/messages/areas/general/messages?limit=2');
    const reordered = await get('/messages/areas/general/messages?stripAnsi=true&limit=2');
    expect(reordered.body).toBe(plain.body);
    const { nextCursor } = plain.json().meta;
    expect(plain.headers.link).toBe(
      `<${API}/messages/areas/general/messages?limit=2&cursor=${encodeURIComponent(nextCursor)}>; rel="next"`,
    );
    expect(reordered.headers.link).toBe(
      `<${API}/messages/areas/general/messages?stripAnsi=true&limit=2&cursor=${encodeURIComponent(nextCursor)}>; rel="next"`,
    );
  });

  it('answers a remembered page and message stripped or as stored, as each request asks', async () => {
    const stripped = await get('/messages/areas/general/messages');
    const raw = await get('/messages/areas/general/messages?stripAnsi=false');
    const strippedAgain = await get('/messages/areas/general/messages?stripAnsi=1');
    expect(stripped.json().data[0].subject).toBe('Bold one');
    expect(raw.json().data[0].subject).toBe(`${ESC}[1mBold${ESC}[0m one`);
    expect(strippedAgain.body).toBe(stripped.body);
    expect(raw.headers.etag).not.toBe(stripped.headers.etag);

    const strippedDetail = await get(`/messages/${uuid}`);
    const rawDetail = await get(`/messages/${uuid}?stripAnsi=false`);
    expect(strippedDetail.json().subject).toBe('Bold one');
    expect(rawDetail.json().subject).toBe(`${ESC}[1mBold${ESC}[0m one`);
    expect((await get(`/messages/${uuid}`)).body).toBe(strippedDetail.body);
  });

  it('still checks who asks before sending a remembered answer', async () => {
    const [membersUuid] = (await uuidsOf(board, 'members')) as [string];
    expect((await get('/messages/areas/members/messages')).statusCode).toBe(200);
    expect((await get(`/messages/${membersUuid}`)).statusCode).toBe(200);
    const anonymousPage = await get('/messages/areas/members/messages', {});
    const anonymousDetail = await get(`/messages/${membersUuid}`, {});
    expect(anonymousPage.statusCode).toBe(401);
    expect(anonymousPage.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(anonymousDetail.statusCode).toBe(401);
  });

  it('answers a search asked again within the second from memory, for each caller from the areas it may read, and shows a post at once', async () => {
    const search = (headers: Record<string, string>) => get('/messages/search?q=zebra', headers);
    const subjects = (response: { json: () => unknown }) =>
      (response.json() as { data: { subject: string }[] }).data.map((found) => found.subject);
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    const searchBytes = () => board.board.messageStore.readCacheBytes().searches;
    expect(searchBytes()).toBe(0);

    const first = await search(board.alice.auth);
    const second = await search(board.alice.auth);
    // Kept from the second asking: the third is answered with the very bytes and tag made then.
    expect(searchBytes()).toBeGreaterThan(0);
    const third = await search(board.alice.auth);
    expect(subjects(first)).toEqual(['Everyone', 'For members']);
    expect([second.body, third.body]).toEqual([first.body, first.body]);
    expect(third.headers.etag).toBe(second.headers.etag);

    // An anonymous caller may not read members: the same search is another page for it.
    for (let asked = 0; asked < 3; asked += 1) expect(subjects(await search({}))).toEqual(['Everyone']);
    expect(subjects(await search(board.alice.auth))).toEqual(['Everyone', 'For members']);

    const posted = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: { ...board.alice.auth, 'content-type': 'application/json' },
      payload: { subject: 'Newcomer', message: 'a zebra arrives' },
    });
    expect(posted.statusCode).toBe(201);
    expect(subjects(await search(board.alice.auth))).toEqual(['Newcomer', 'Everyone', 'For members']);
  });

  it('answers a remembered search while every place of the search budget is taken, and refuses a new one 503', async () => {
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    await get('/messages/search?q=stripes');
    expect((await get('/messages/search?q=stripes')).statusCode).toBe(200);
    const budget = board.board.searchBudget;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { maxRunning, maxWaiting } = budget.limits;
    const holders = Array.from({ length: maxRunning + maxWaiting }, () => budget.run(() => held));
    try {
      const remembered = await get('/messages/search?q=stripes');
      expect(remembered.statusCode).toBe(200);
      expect(remembered.json().data.map((found: { subject: string }) => found.subject)).toEqual(['Everyone']);
      expect((await get('/messages/search?q=crossing')).statusCode).toBe(503);
    } finally {
      release();
      await Promise.all(holders);
    }
  });

  it("answers an area's unread count asked again within the second from memory, each member their own, fresh at once after this node's writes", async () => {
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    const area = async (headers: Record<string, string>) =>
      (await get('/messages/areas/general', headers)).json() as { lastReadMessageId: number; unreadCount: number };
    const ids = (
      await board.board.database.db
        .selectFrom('messages')
        .select('id')
        .where('areaTag', '=', 'general')
        .where('deletedAt', 'is', null)
        .orderBy('id')
        .execute()
    ).map((row) => row.id);
    const [first, second] = ids as [number, number];
    const setPointer = (headers: Record<string, string>, lastReadMessageId: number) =>
      board.app.inject({
        method: 'PUT',
        url: `${API}/messages/areas/general/pointer`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: { lastReadMessageId },
      });
    expect((await setPointer(board.alice.auth, first)).statusCode).toBe(200);
    expect((await setPointer(board.bob.auth, second)).statusCode).toBe(200);
    const unreadBytes = () => board.board.messageStore.readCacheBytes().unread;
    expect(unreadBytes()).toBe(0);
    await area(board.alice.auth);
    expect(await area(board.alice.auth)).toMatchObject({ lastReadMessageId: first, unreadCount: ids.length - 1 });
    expect(unreadBytes()).toBeGreaterThan(0);
    // Bob asks twice too: he gets his own pointer, never Alice's remembered one.
    await area(board.bob.auth);
    expect(await area(board.bob.auth)).toMatchObject({ lastReadMessageId: second, unreadCount: ids.length - 2 });

    // Moved behind this node's back (another node, say): remembered for the rest of the second.
    await board.board.database.db
      .updateTable('messagePointers')
      .set({ lastReadMessageId: second })
      .where('userId', '=', board.alice.userId)
      .execute();
    expect(await area(board.alice.auth)).toMatchObject({ lastReadMessageId: first, unreadCount: ids.length - 1 });
    clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
    expect(await area(board.alice.auth)).toMatchObject({ lastReadMessageId: second, unreadCount: ids.length - 2 });

    // Moved or posted on this node: fresh at once.
    await area(board.alice.auth);
    expect((await setPointer(board.alice.auth, first)).statusCode).toBe(200);
    expect(await area(board.alice.auth)).toMatchObject({ lastReadMessageId: first, unreadCount: ids.length - 1 });
    await area(board.alice.auth);
    const posted = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: { ...board.bob.auth, 'content-type': 'application/json' },
      payload: { subject: 'Unread news', message: 'one more' },
    });
    expect(posted.statusCode).toBe(201);
    expect(await area(board.alice.auth)).toMatchObject({ lastReadMessageId: first, unreadCount: ids.length });
  });
});
