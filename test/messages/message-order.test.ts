import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from './message-fixture.js';

interface ListBody {
  data: { messageId: number; uuid: string; subject: string }[];
  meta: { count: number; limit: number; nextCursor: string | null };
  pagination: { next: string | null };
}

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/**
 * `?order=newest` (beyond-v1.md "Reading: from the newest end"): newest first, paged back in
 * time with the v1 envelope and `Link`; cursors bound to their order; `unread=true` in both.
 */
describeEachDialect('message order', (dialect) => {
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    expect(await seedMessages(board, 'general', 300)).toBe(300);
  });
  afterAll(() => board.close());

  const get = (url: string, headers: Record<string, string> = board.alice.auth) =>
    board.app.inject({ method: 'GET', url, headers });

  /** Follows nextCursor from the first page of `query` to the last, checking each envelope and Link. */
  async function walk(areaTag: string, query: string, between: () => Promise<void> = async () => {}) {
    const seen: ListBody['data'] = [];
    const base = `${API}/messages/areas/${areaTag}/messages`;
    let url: string | null = `${base}?${query}`;
    let pages = 0;
    while (url !== null) {
      const response = await get(url);
      expect(response.statusCode).toBe(200);
      const body = response.json() as ListBody;
      expect(body.meta.count).toBe(body.data.length);
      expect(body.pagination.next).toBe(body.meta.nextCursor);
      seen.push(...body.data);
      pages += 1;
      if (body.meta.nextCursor === null) {
        expect(response.headers.link).toBeUndefined();
        url = null;
      } else {
        const next = `${base}?${query}&cursor=${body.meta.nextCursor}`;
        expect(response.headers.link).toBe(`<${next}>; rel="next"`);
        url = next;
      }
      await between();
    }
    return { seen, pages };
  }

  for (const limit of [1, 7, 25, 100]) {
    it(`walks all 300 messages exactly once, newest first, with limit ${limit}`, async () => {
      const { seen, pages } = await walk('general', `order=newest&limit=${limit}`);
      expect(seen.map((message) => message.subject)).toEqual(Array.from({ length: 300 }, (_, i) => `Seed ${300 - i}`));
      const ids = seen.map((message) => message.messageId);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      expect(pages).toBe(Math.ceil(300 / limit));
    });
  }

  it('answers order=oldest with the bytes and cursors of the v1 default', async () => {
    const v1 = await get(`${API}/messages/areas/general/messages?limit=5`);
    const oldest = await get(`${API}/messages/areas/general/messages?order=oldest&limit=5`);
    expect(oldest.statusCode).toBe(200);
    expect(oldest.body).toBe(v1.body);
    expect(v1.headers.link).toBe(
      `<${API}/messages/areas/general/messages?limit=5&cursor=${v1.json().meta.nextCursor}>; rel="next"`,
    );
  });

  it('answers each order its own first page when both are asked for one after the other', async () => {
    // Within the read cache's second: the newest page must not be the oldest page remembered.
    const oldest = await get(`${API}/messages/areas/general/messages?limit=3`);
    const newest = await get(`${API}/messages/areas/general/messages?order=newest&limit=3`);
    const subjects = (body: ListBody) => body.data.map((message) => message.subject);
    expect(subjects(oldest.json())).toEqual(['Seed 1', 'Seed 2', 'Seed 3']);
    expect(subjects(newest.json())).toEqual(['Seed 300', 'Seed 299', 'Seed 298']);
  });

  it.each([
    ['newest', 'oldest'],
    ['oldest', 'newest'],
  ])('refuses a cursor of order=%s given with order=%s with a 400 problem', async (from, to) => {
    const first = (await get(`${API}/messages/areas/general/messages?order=${from}&limit=100`)).json() as ListBody;
    // Its key (message 100 or 201) would name a page of the other order too: only the order tells them apart.
    const response = await get(`${API}/messages/areas/general/messages?order=${to}&cursor=${first.meta.nextCursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(response.json()).toMatchObject({ type: `${API}/errors/400`, status: 400 });
    expect(response.json().errors).toEqual([
      { pointer: '/query/cursor', message: 'is invalid or belongs to another list' },
    ]);
  });

  it('refuses a newest cursor given without order (the v1 default) with 400', async () => {
    const first = (await get(`${API}/messages/areas/general/messages?order=newest&limit=1`)).json() as ListBody;
    const response = await get(`${API}/messages/areas/general/messages?cursor=${first.meta.nextCursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  });

  it.each(['NEWEST', 'desc', '', 'newest,oldest'])('refuses order=%s with 400 at /query/order', async (order) => {
    const response = await get(`${API}/messages/areas/general/messages?order=${order}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(response.json().errors.map((error: { pointer: string }) => error.pointer)).toContain('/query/order');
  });

  it('lists only the unread messages newest first, down to the pointer, and pages them', async () => {
    await seedMessages(board, 'members', 40);
    const ids = (await walk('members', 'limit=100')).seen.map((message) => message.messageId);
    const pointer = ids[29] as number;
    const moved = await board.app.inject({
      method: 'PUT',
      url: `${API}/messages/areas/members/pointer`,
      headers: board.alice.auth,
      payload: { lastReadMessageId: pointer },
    });
    expect(moved.json()).toMatchObject({ lastReadMessageId: pointer, unreadCount: 10 });
    const { seen, pages } = await walk('members', 'order=newest&unread=true&limit=3');
    expect(seen.map((message) => message.subject)).toEqual(Array.from({ length: 10 }, (_, i) => `Seed ${40 - i}`));
    expect(pages).toBe(4);
    const oldestFirst = await walk('members', 'order=oldest&unread=true&limit=3');
    expect(oldestFirst.seen.map((message) => message.subject)).toEqual(
      Array.from({ length: 10 }, (_, i) => `Seed ${31 + i}`),
    );
  });

  it('has no duplicates or gaps while others post and delete during a newest-first walk', async () => {
    await seedMessages(board, 'chatter', 30);
    const all = (await walk('chatter', 'limit=100')).seen;
    const doomed = all[5];
    if (!doomed) throw new Error('seeded messages missing');
    let step = 0;
    const { seen } = await walk('chatter', 'order=newest&limit=7', async () => {
      step += 1;
      const posted = await board.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/chatter/messages`,
        headers: board.bob.auth,
        payload: { subject: `Live ${step}`, message: 'posted while paging back' },
      });
      expect(posted.statusCode).toBe(201);
      if (step === 1) {
        const deleted = await board.app.inject({
          method: 'DELETE',
          url: `${API}/messages/${doomed.uuid}`,
          headers: board.sysop.auth,
        });
        expect(deleted.statusCode).toBe(204);
      }
    });
    // Posts land above the walk's start, never in it; the deleted message (Seed 6) is not reached yet at step 1.
    const expected = Array.from({ length: 30 }, (_, i) => `Seed ${30 - i}`).filter((subject) => subject !== 'Seed 6');
    expect(seen.map((message) => message.subject)).toEqual(expected);
  });

  it('refuses unread=true with order=newest to an anonymous caller with 401, as in the oldest order', async () => {
    const response = await get(`${API}/messages/areas/general/messages?order=newest&unread=true`, {});
    expect(response.statusCode).toBe(401);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  });
});
