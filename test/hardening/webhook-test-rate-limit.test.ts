import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createTestBoard,
  describeEachDialect,
  fakeClock,
  openSecondNode,
  type TestBoard,
} from '../support/test-board.js';
import { startReceiver } from '../support/webhook-receiver.js';

const API = '/_baud/api/v1';

/**
 * Issue 29, item 13: `POST /webhooks/{id}/test` had no limit, so 50 parallel calls sent 50 POSTs
 * in 173 ms. Five per webhook per minute now, counted in the database across nodes.
 */
describeEachDialect('test deliveries are rate limited per webhook', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let alice: { authorization: string };

  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock, config: { webhooks: { allowPrivateTargets: true } } });
    alice = (await board.userWithToken('alice')).auth;
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await board.close();
    await receiver.close();
  });

  const createWebhook = async () => {
    const created = await board.app.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      headers: alice,
      payload: { url: receiver.url, events: ['message.created'] },
    });
    return (created.json() as { id: number }).id;
  };

  it('sends 5 of 50 parallel tests and answers the rest 429 with Retry-After, on every node alike', async () => {
    const id = await createWebhook();
    const other = await createWebhook();
    const second = await openSecondNode(board, clock);
    try {
      const test = (app = board.app, webhookId = id) =>
        app.inject({ method: 'POST', url: `${API}/webhooks/${webhookId}/test`, headers: alice });
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, index) => test(index % 2 === 0 ? board.app : second.app)),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([
        ...Array(5).fill(200),
        ...Array(45).fill(429),
      ]);
      expect(receiver.received).toHaveLength(5);
      const refused = answers.find((answer) => answer.statusCode === 429);
      expect(refused?.headers['retry-after']).toBe('60');
      expect(refused?.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(refused?.json()).toEqual({
        type: `${API}/errors/429`,
        title: 'Too Many Requests',
        status: 429,
        detail: `Webhook ${id} has had 5 test deliveries in 60 seconds: wait for the next.`,
        code: 'rate-limit.exceeded',
      });

      // Each webhook has its own window.
      expect((await test(second.app, other)).statusCode).toBe(200);

      clock.advance(45_000);
      const later = await test();
      expect(later.statusCode).toBe(429);
      expect(later.headers['retry-after']).toBe('15');
      clock.advance(15_000);
      expect((await test(second.app)).statusCode).toBe(200);
      expect(receiver.received).toHaveLength(7);
    } finally {
      await second.close();
    }
  });
});
