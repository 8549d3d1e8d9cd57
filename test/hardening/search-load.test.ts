import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_RANKED_MATCHES } from '../../src/search/relevance.js';
import { SEARCH_BUDGET } from '../../src/search/search-budget.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from '../messages/message-fixture.js';
import { describeEachDialect } from '../support/test-board.js';

/**
 * Twenty anonymous clients running a 16-prefix `sort=relevance` search on a 20,000-message board
 * pushed `/system/info` to a p50 of half a second: every match was scored on every request, and
 * searches had the node to themselves. Relevance now ranks a bounded number of matches, and a
 * node runs a bounded number of searches at once.
 */
describeEachDialect('search load', (dialect) => {
  let board: MessageTestBoard;

  const get = (url: string) => board.app.inject({ method: 'GET', url: `${API}${url}` });

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    // Bodies "Body 1" … : every one matches `body`, and `body 7*` a few.
    await seedMessages(board, 'general', MAX_RANKED_MATCHES + 1);
  });
  afterAll(() => board.close());

  it(`refuses to rank more than ${MAX_RANKED_MATCHES} matches with 400, and still ranks fewer`, async () => {
    const tooMany = await get('/messages/search?q=body&sort=relevance');
    expect(tooMany.statusCode).toBe(400);
    const message = `matches more than ${MAX_RANKED_MATCHES} items, too many to sort by relevance: narrow the search or sort by newest`;
    expect(tooMany.json()).toEqual({
      type: `${API}/errors/400`,
      title: 'Bad Request',
      status: 400,
      detail: `sort=relevance: q ${message}.`,
      errors: [{ pointer: '/query/sort', message }],
    });
    const prefixes = Array.from({ length: 16 }, (_, index) => `bo${'d'.repeat(index % 2)}*`).join(' OR ');
    expect((await get(`/messages/search?q=${encodeURIComponent(prefixes)}&sort=relevance`)).statusCode).toBe(400);

    const newest = await get('/messages/search?q=body&limit=2');
    expect(newest.statusCode).toBe(200);
    expect((newest.json() as { data: { subject: string }[] }).data.map((found) => found.subject)).toEqual([
      `Seed ${MAX_RANKED_MATCHES + 1}`,
      `Seed ${MAX_RANKED_MATCHES}`,
    ]);
    const narrow = await get('/messages/search?q=body+1000&sort=relevance');
    expect(narrow.statusCode).toBe(200);
    expect((narrow.json() as { data: { subject: string }[] }).data.map((found) => found.subject)).toEqual([
      'Seed 1000',
    ]);
  });

  it('answers a search beyond the node budget 503 with Retry-After while the rest of the API answers', async () => {
    const budget = board.board.searchBudget;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Fill every running and waiting place with searches that last until released.
    const holders = Array.from({ length: SEARCH_BUDGET.maxRunning + SEARCH_BUDGET.maxWaiting }, () =>
      budget.run(() => held),
    );
    expect([budget.running, budget.waiting]).toEqual([SEARCH_BUDGET.maxRunning, SEARCH_BUDGET.maxWaiting]);

    const refused = await get('/messages/search?q=body+1000');
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.connection).not.toBe('close');
    expect(refused.json()).toEqual({
      type: `${API}/errors/503`,
      title: 'Service Unavailable',
      status: 503,
      detail: 'Too many searches are running on this node; try again shortly.',
    });
    expect((await get('/files/search?q=body')).statusCode).toBe(503);
    expect((await get('/system/info')).statusCode).toBe(200);

    release();
    await Promise.all(holders);
    const answered = await get('/messages/search?q=body+1000');
    expect(answered.statusCode).toBe(200);
    expect([budget.running, budget.waiting]).toEqual([0, 0]);
  });
});
