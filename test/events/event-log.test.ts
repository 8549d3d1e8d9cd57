import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEventHub } from '../../src/events/event-hub.js';
import type { BoardEvent } from '../../src/events/event-log.js';
import { API, MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { openSse } from '../support/sse-client.js';
import {
  createTestBoard,
  describeEachDialect,
  describeOnPostgres,
  fakeClock,
  openSecondNode,
  type TestBoard,
} from '../support/test-board.js';

/** beyond-v1.md "Events": the durable log behind streams and webhooks. */
describeEachDialect('event log', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  let auth: { authorization: string };
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: { ...MESSAGE_TEST_CONFIG, events: { maxEvents: 100, retentionDays: 1, pollIntervalMs: 50 } },
    });
    auth = (await board.userWithToken('alice')).auth;
  });
  afterAll(() => board.close());

  const post = (subject: string) =>
    board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: auth,
      payload: { subject, message: 'text' },
    });

  it('hands a reader every event of racing posts once, in strictly increasing id order', async () => {
    const seen: BoardEvent[] = [];
    const hub = createEventHub({
      log: board.board.events,
      database: board.board.database,
      pollIntervalMs: 20,
      onError: (error) => {
        throw error;
      },
    });
    await hub.start();
    hub.subscribe((events) => seen.push(...events));
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => post(`Race ${index}`)));
      expect(answers.every((answer) => answer.statusCode === 201)).toBe(true);
      const stored = (await board.board.events.readAfter(0, 10_000)).filter(
        (event) => event.type === 'message.created',
      );
      await expect.poll(() => seen.filter((event) => event.type === 'message.created').length).toBe(40);
      const ids = seen.map((event) => event.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      expect(seen.filter((event) => event.type === 'message.created').map((event) => event.id)).toEqual(
        stored.map((event) => event.id),
      );
    } finally {
      await hub.close();
    }
  });

  it('prunes by count and by age, and remembers how far it pruned', async () => {
    for (let index = 0; index < 80; index += 1) expect((await post(`Fill ${index}`)).statusCode).toBe(201);
    const latest = await board.board.events.latestId();
    expect(latest).toBeGreaterThan(100);
    await board.board.events.prune();
    const kept = await board.board.events.readAfter(0, 10_000);
    expect(kept[0]?.id).toBe(latest - 99);
    expect(kept).toHaveLength(100);
    expect(await board.board.events.prunedThrough()).toBe(latest - 100);

    clock.advance(2 * 86_400_000);
    auth = (await board.userWithToken('later')).auth;
    expect((await post('Fresh')).statusCode).toBe(201);
    await board.board.events.prune();
    const left = await board.board.events.readAfter(0, 10_000);
    expect(left.map((event) => event.data.subject)).toEqual(['Fresh']);
    expect(await board.board.events.prunedThrough()).toBe(latest);
  });
});

describeOnPostgres('events across nodes', () => {
  let board: TestBoard;
  let second: Awaited<ReturnType<typeof openSecondNode>>;
  beforeAll(async () => {
    board = await createTestBoard('postgres', { config: MESSAGE_TEST_CONFIG });
    second = await openSecondNode(board);
    await second.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await second.close();
    await board.close();
  });

  it('brings a post on one node to a stream on another within a second (LISTEN/NOTIFY)', async () => {
    const port = (second.app.server.address() as AddressInfo).port;
    const stream = await openSse(`http://127.0.0.1:${port}${API}/events?types=message.created`);
    try {
      await stream.next((frame) => frame.retry === 3000);
      const { auth } = await board.userWithToken('alice');
      const started = performance.now();
      const posted = await board.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/general/messages`,
        headers: auth,
        payload: { subject: 'Across', message: 'from node 1' },
      });
      expect(posted.statusCode).toBe(201);
      const frame = await stream.next((candidate) => candidate.event === 'message.created', { timeoutMs: 1000 });
      expect(frame.data).toMatchObject({ subject: 'Across' });
      // Woken by NOTIFY, not found by the once-a-second poll.
      expect(performance.now() - started).toBeLessThan(900);
    } finally {
      stream.close();
    }
  });
});
