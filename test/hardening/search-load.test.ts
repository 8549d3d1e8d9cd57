import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_RANKED_MATCHES } from '../../src/search/relevance.js';
import { MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
import { API, createFileTestBoard } from '../support/file-board.js';
import { describeEachDialect, type TestBoard } from '../support/test-board.js';

/**
 * Twenty anonymous clients running a 16-prefix `sort=relevance` search on a 20,000-message board
 * pushed `/system/info` to a p50 of half a second: every match was scored on every request, and
 * searches had the node to themselves. Relevance now ranks a bounded number of matches, and a
 * node runs a bounded number of searches at once.
 */
describeEachDialect('search load', (dialect) => {
  let board: TestBoard;

  const get = (url: string) => board.app.inject({ method: 'GET', url: `${API}${url}` });

  beforeAll(async () => {
    // File areas too: a file search asks the database only when the caller may browse an area.
    board = await createFileTestBoard(dialect, { config: MESSAGE_TEST_CONFIG });
    // Bodies "Body 1" … : every one matches `body`, and `body 7*` a few.
    await seedMessages(board, 'general', MAX_RANKED_MATCHES + 1);
  });
  afterAll(() => board.close());

  it(`ranks the newest ${MAX_RANKED_MATCHES} of more matches, pinned by the first page while others are posted`, async () => {
    type Found = { data: { subject: string }[]; meta: { nextCursor: string | null } };
    const walk = async (q: string, onPage: (page: number) => Promise<void>) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let page = 0;
      do {
        const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const response = await get(`/messages/search?q=${encodeURIComponent(q)}&sort=relevance&limit=100${after}`);
        expect(response.statusCode, response.body).toBe(200);
        const found = response.json() as Found;
        seen.push(...found.data.map((message) => message.subject));
        cursor = found.meta.nextCursor;
        page += 1;
        await onPage(page);
      } while (cursor !== null);
      return seen;
    };
    // Every body is "Body n": all score alike, so the ranking is newest first among equals.
    const newest = Array.from({ length: MAX_RANKED_MATCHES }, (_, index) => `Seed ${MAX_RANKED_MATCHES + 1 - index}`);
    let posted = 0;
    const seen = await walk('body', async (page) => {
      // Matches that would outrank every candidate, posted between pages: none may join this walk.
      if (page <= 2) posted += await seedMessages(board, 'general', [{ subject: `Late ${page}`, body: 'body body' }]);
    });
    expect(posted).toBe(2);
    expect(seen).toEqual(newest);

    // A new search ranks the newcomers; 16 prefixes over the same matches are ranked alike.
    const again = await walk('body', async () => {});
    expect(again.slice(0, 2)).toEqual(['Late 2', 'Late 1']);
    expect(again).toHaveLength(MAX_RANKED_MATCHES);
    const prefixes = Array.from({ length: 16 }, (_, index) => `bo${'d'.repeat(index % 2)}*`).join(' OR ');
    expect(await walk(prefixes, async () => {})).toEqual(again);

    const narrow = await get('/messages/search?q=body+1000&sort=relevance');
    expect(narrow.statusCode).toBe(200);
    expect((narrow.json() as Found).data.map((found) => found.subject)).toEqual(['Seed 1000']);
  });

  it('lets 50 searches at once wait their turn rather than refusing 40 of them', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => get('/messages/search?q=body+1000')));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array.from({ length: 50 }, () => 200));
  });

  it('answers a new search beyond the node budget 503 with Retry-After while remembered searches and the rest of the API answer', async () => {
    const budget = board.board.searchBudget;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Fill every running and waiting place with searches that last until released.
    const { maxRunning, maxWaiting } = budget.limits;
    const holders = Array.from({ length: maxRunning + maxWaiting }, () => budget.run(() => held));
    expect([budget.running, budget.waiting]).toEqual([maxRunning, maxWaiting]);

    // A search asked a moment ago is answered from memory, without a place; a new one is refused.
    expect((await get('/messages/search?q=body+1000')).statusCode).toBe(200);
    const refused = await get('/messages/search?q=body+999');
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.connection).not.toBe('close');
    expect(refused.json()).toEqual({
      type: `${API}/errors/503`,
      title: 'Service Unavailable',
      status: 503,
      detail: 'Too many searches are running on this node; try again shortly.',
      code: 'search.busy',
    });
    expect((await get('/files/search?q=body')).statusCode).toBe(503);
    expect((await get('/system/info')).statusCode).toBe(200);

    release();
    await Promise.all(holders);
    const answered = await get('/messages/search?q=body+999');
    expect(answered.statusCode).toBe(200);
    expect([budget.running, budget.waiting]).toEqual([0, 0]);
  });
});
