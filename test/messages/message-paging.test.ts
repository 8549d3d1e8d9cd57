import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from './message-fixture.js';

interface ListBody {
  data: { messageId: number; uuid: string; subject: string; areaTag: string }[];
  meta: { count: number; limit: number; nextCursor: string | null };
  pagination: { next: string | null };
}

describeEachDialect('message paging', (dialect) => {
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    expect(await seedMessages(board, 'general', 1000)).toBe(1000);
  });
  afterAll(() => board.close());

  /** Follows nextCursor from the first page to the last; `between` runs after each page. */
  async function walk(areaTag: string, limit: number, between: () => Promise<void> = async () => {}) {
    const seen: ListBody['data'] = [];
    let url: string | null = `${API}/messages/areas/${areaTag}/messages?limit=${limit}`;
    let pages = 0;
    while (url !== null) {
      const response = await board.app.inject({ method: 'GET', url, headers: board.alice.auth });
      expect(response.statusCode).toBe(200);
      const body = response.json() as ListBody;
      expect(body.meta.count).toBe(body.data.length);
      expect(body.meta.limit).toBe(limit);
      expect(body.pagination.next).toBe(body.meta.nextCursor);
      seen.push(...body.data);
      pages += 1;
      if (body.meta.nextCursor === null) {
        expect(response.headers.link).toBeUndefined();
        url = null;
      } else {
        expect(body.data.length).toBe(limit);
        const next = `/_baud/api/v1/messages/areas/${areaTag}/messages?limit=${limit}&cursor=${body.meta.nextCursor}`;
        expect(response.headers.link).toBe(`<${next}>; rel="next"`);
        url = next;
      }
      await between();
    }
    return { seen, pages };
  }

  for (const limit of [1, 7, 25, 100]) {
    it(`walks all 1,000 messages exactly once, oldest first, with limit ${limit}`, async () => {
      const { seen, pages } = await walk('general', limit);
      expect(seen.map((message) => message.subject)).toEqual(Array.from({ length: 1000 }, (_, i) => `Seed ${i + 1}`));
      const ids = seen.map((message) => message.messageId);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(seen.map((message) => message.uuid)).size).toBe(1000);
      // limit + 1 rows are fetched, so an exact multiple ends without an empty trailing page.
      expect(pages).toBe(Math.ceil(1000 / limit));
    });
  }

  it('defaults to 25 per page', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/messages/areas/general/messages` });
    expect(response.json().meta).toMatchObject({ count: 25, limit: 25 });
  });

  it('has no duplicates or gaps while others post and delete during paging', async () => {
    await seedMessages(board, 'members', 30);
    const post = (subject: string) =>
      board.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/members/messages`,
        headers: board.bob.auth,
        payload: { subject, message: 'posted while paging' },
      });
    let posted = 0;
    const { seen } = await walk('members', 7, async () => {
      posted += 1;
      expect((await post(`Live ${posted}`)).statusCode).toBe(201);
    });
    const subjects = seen.map((message) => message.subject);
    // Every message posted before the walk reached the end shows up once, after the seeded ones.
    const expectedLive = Array.from({ length: posted - 1 }, (_, i) => `Live ${i + 1}`);
    expect(subjects).toEqual([...Array.from({ length: 30 }, (_, i) => `Seed ${i + 1}`), ...expectedLive]);
    const ids = seen.map((message) => message.messageId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('skips deleted messages', async () => {
    await seedMessages(board, 'readonly', 5);
    const first = (
      await board.app.inject({
        method: 'GET',
        url: `${API}/messages/areas/readonly/messages`,
        headers: board.sysop.auth,
      })
    ).json() as ListBody;
    const third = first.data[2];
    if (!third) throw new Error('seeded messages missing');
    const deleted = await board.app.inject({
      method: 'DELETE',
      url: `${API}/messages/${third.uuid}`,
      headers: board.sysop.auth,
    });
    expect(deleted.statusCode).toBe(204);
    const { seen } = await walk('readonly', 2);
    expect(seen.map((message) => message.subject)).toEqual(['Seed 1', 'Seed 2', 'Seed 4', 'Seed 5']);
  });

  for (const [query, pointer] of [
    ['limit=0', '/query/limit'],
    ['limit=101', '/query/limit'],
    ['limit=abc', '/query/limit'],
    ['limit=2.5', '/query/limit'],
    ['cursor=garbage', '/query/cursor'],
    ['cursor=', '/query/cursor'],
    ['stripAnsi=maybe', '/query/stripAnsi'],
  ]) {
    it(`rejects ${query} with 400`, async () => {
      const response = await board.app.inject({
        method: 'GET',
        url: `${API}/messages/areas/general/messages?${query}`,
      });
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      const body = response.json();
      expect(body).toMatchObject({ type: `${API}/errors/400`, title: 'Bad Request', status: 400 });
      expect(body.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    });
  }

  it('rejects a cursor from another area with 400', async () => {
    const general = (
      await board.app.inject({
        method: 'GET',
        url: `${API}/messages/areas/general/messages?limit=1`,
        headers: board.alice.auth,
      })
    ).json() as ListBody;
    const response = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/members/messages?cursor=${general.meta.nextCursor}`,
      headers: board.alice.auth,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([
      { pointer: '/query/cursor', message: 'is invalid or belongs to another list' },
    ]);
  });

  it('rejects a tampered cursor with 400', async () => {
    const general = (
      await board.app.inject({ method: 'GET', url: `${API}/messages/areas/general/messages?limit=1` })
    ).json() as ListBody;
    const [, mac] = (general.meta.nextCursor ?? '').split('.');
    const forged = `${Buffer.from('500').toString('base64url')}.${mac}`;
    const response = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/general/messages?cursor=${forged}`,
    });
    expect(response.statusCode).toBe(400);
  });
});
