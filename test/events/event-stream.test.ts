import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { CONSOLE } from '../../src/admin/desk-service.js';
import { API, MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { openSse, type SseClient, type SseFrame } from '../support/sse-client.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

type Auth = { authorization: string };

/** beyond-v1.md "Events: a live stream": GET /events over a real listening server. */
describeEachDialect('event stream', (dialect) => {
  let board: TestBoard;
  let base: string;
  let alice: { userId: number; auth: Auth };
  let bob: { userId: number; auth: Auth };
  const open: SseClient[] = [];

  const follow = async (query = '', headers: Record<string, string> = {}) => {
    const client = await openSse(`${base}/events${query}`, headers);
    open.push(client);
    return client;
  };
  const post = async (areaTag: string, subject: string, auth: Auth, extra: Record<string, unknown> = {}) =>
    board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/${areaTag}/messages`,
      headers: auth,
      payload: { subject, message: `Text of ${subject}`, ...extra },
    });
  const created = (subject: string) => (frame: SseFrame) =>
    frame.event === 'message.created' && (frame.data as { subject?: string }).subject === subject;

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        ...MESSAGE_TEST_CONFIG,
        events: { heartbeatSeconds: 0.3, maxStreamsPerUser: 3, pollIntervalMs: 200 },
      },
    });
    alice = await board.userWithToken('alice');
    bob = await board.userWithToken('bob');
    await board.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(board.app.server.address() as AddressInfo).port}${API}`;
  });
  /** Connections to the board's server: a closed stream gives its place back when its connection closes. */
  const openConnections = () =>
    new Promise<number>((resolve, reject) =>
      board.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  // Each test's streams go with it: anonymous ones all count against 127.0.0.1's limit.
  afterEach(async () => {
    for (const client of open.splice(0)) client.close();
    await expect.poll(openConnections).toBe(0);
  });
  afterAll(() => board.close());

  it('streams a new message within a second to an anonymous follower of its public area, and nothing of the others', async () => {
    const stream = await follow();
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-store');
    await stream.next((frame) => frame.retry === 3000);
    expect((await post('members', 'Members only', alice.auth)).statusCode).toBe(201);
    const response = await post('general', 'Hello world', alice.auth);
    expect(response.statusCode).toBe(201);
    // Within a second of the acknowledgement (SQLite: in-process wake-up; PostgreSQL: NOTIFY).
    const frame = await stream.next(created('Hello world'), { timeoutMs: 1000 });
    const message = response.json() as { messageId: number; uuid: string };
    expect(frame.data).toEqual({
      messageId: message.messageId,
      uuid: message.uuid,
      areaTag: 'general',
      confTag: 'main',
      replyToMessageId: null,
      toUserName: 'All',
      fromUserName: 'alice',
      subject: 'Hello world',
      timestamp: expect.any(String),
    });
    expect(typeof frame.id).toBe('number');
    expect(stream.frames.some(created('Members only'))).toBe(false);
  });

  it('shows a member what ACS allows, with strictly increasing ids, and a deletion', async () => {
    const stream = await follow('', alice.auth);
    await stream.next((frame) => frame.retry === 3000);
    await post('members', 'For members', alice.auth);
    await post('secret', 'Nobody may', alice.auth);
    const last = await post('general', 'Public again', alice.auth);
    await stream.next(created('Public again'));
    const messages = stream.frames.filter((frame) => frame.event === 'message.created');
    expect(messages.map((frame) => (frame.data as { subject: string }).subject)).toEqual([
      'For members',
      'Public again',
    ]);
    expect((messages[1]?.id ?? 0) > (messages[0]?.id ?? 0)).toBe(true);
    const { uuid, messageId } = last.json() as { uuid: string; messageId: number };
    await board.app.inject({ method: 'DELETE', url: `${API}/messages/${uuid}`, headers: alice.auth });
    const deleted = await stream.next((frame) => frame.event === 'message.deleted');
    expect(deleted.data).toEqual({ uuid, messageId, areaTag: 'general' });
  });

  it('writes no event for a post that failed, and keeps pointers to their owner', async () => {
    const aliceStream = await follow('?types=pointer.updated,message.created', alice.auth);
    const bobStream = await follow('?types=pointer.updated', bob.auth);
    await aliceStream.next((frame) => frame.retry === 3000);
    await bobStream.next((frame) => frame.retry === 3000);
    expect((await post('general', 'Bad reply', alice.auth, { replyToMessageId: 999_999 })).statusCode).toBe(400);
    const pointer = await board.app.inject({
      method: 'PUT',
      url: `${API}/messages/areas/general/pointer`,
      headers: alice.auth,
      payload: { lastReadMessageId: 1 },
    });
    expect(pointer.statusCode).toBe(200);
    const moved = await aliceStream.next((frame) => frame.event === 'pointer.updated');
    expect(moved.data).toEqual({ areaTag: 'general', lastReadMessageId: 1 });
    expect(aliceStream.frames.some(created('Bad reply'))).toBe(false);
    await post('general', 'After the pointer', alice.auth);
    await aliceStream.next(created('After the pointer'));
    expect(bobStream.frames.filter((frame) => frame.event !== undefined)).toEqual([]);
  });

  it('streams a login as a last-callers entry', async () => {
    const stream = await follow('?types=user.login');
    await stream.next((frame) => frame.retry === 3000);
    const login = await board.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'bob', password: 'correct horse battery' },
    });
    expect(login.statusCode).toBe(200);
    const frame = await stream.next((candidate) => candidate.event === 'user.login');
    expect(frame.data).toEqual({
      userId: bob.userId,
      username: 'bob',
      location: '',
      affiliations: '',
      timestamp: expect.any(String),
    });
  });

  it('filters by type and area glob', async () => {
    const stream = await follow('?types=message.created&areas=mem*', alice.auth);
    await stream.next((frame) => frame.retry === 3000);
    await post('general', 'Not this area', alice.auth);
    await post('members', 'This area', alice.auth);
    await stream.next(created('This area'));
    expect(stream.frames.some(created('Not this area'))).toBe(false);
  });

  it('replays what a client missed after Last-Event-ID, then goes on live', async () => {
    const first = await follow('?types=message.created');
    await first.next((frame) => frame.retry === 3000);
    await post('general', 'Seen', alice.auth);
    const seen = await first.next(created('Seen'));
    first.close();
    await post('general', 'Missed 1', alice.auth);
    await post('general', 'Missed 2', alice.auth);
    const resumed = await follow('?types=message.created', { 'last-event-id': String(seen.id) });
    await resumed.next(created('Missed 2'));
    await post('general', 'Live again', alice.auth);
    await resumed.next(created('Live again'));
    const subjects = resumed.frames
      .filter((frame) => frame.event === 'message.created')
      .map((frame) => (frame.data as { subject: string }).subject);
    expect(subjects).toEqual(['Missed 1', 'Missed 2', 'Live again']);
  });

  it('announces a reset to a client whose Last-Event-ID is older than the kept log', async () => {
    await board.board.db
      .insertInto('settings')
      .values({ key: 'eventsPrunedThrough', value: '1000000' })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value: '1000000' }))
      .execute();
    try {
      const stream = await follow('', { 'last-event-id': '5' });
      const reset = await stream.next((frame) => frame.event === 'reset');
      expect(reset.data).toEqual({ detail: expect.stringContaining('no longer kept') });
      expect(typeof reset.id).toBe('number');
    } finally {
      await board.board.db.deleteFrom('settings').where('key', '=', 'eventsPrunedThrough').execute();
    }
  });

  it('sends heartbeats', async () => {
    const stream = await follow();
    await stream.next((frame) => frame.comment === 'heartbeat', { timeoutMs: 2000 });
  });

  it('ends the stream with auth.expired when the session ends', async () => {
    const carol = await board.userWithToken('carol');
    const stream = await follow('', carol.auth);
    await stream.next((frame) => frame.retry === 3000);
    await board.board.desk.lock(CONSOLE, 'carol');
    const expired = await stream.next((frame) => frame.event === 'auth.expired', { timeoutMs: 4000 });
    expect(expired.data).toEqual({ detail: expect.stringContaining('log in again') });
    await stream.ended;
  });

  it('refuses bad filters and a bad Last-Event-ID with problem+json, and a bad credential with 401', async () => {
    const badType = await follow('?types=message.created,message.edited');
    expect(badType.status).toBe(400);
    await badType.ended;
    expect(badType.frames[0]?.data).toMatchObject({
      status: 400,
      errors: [{ pointer: '/query/types', message: expect.stringContaining('message.edited') }],
    });
    const badId = await follow('', { 'last-event-id': 'abc' });
    expect(badId.status).toBe(400);
    await badId.ended;
    expect(badId.frames[0]?.data).toMatchObject({ errors: [{ pointer: '/headers/last-event-id' }] });
    const badToken = await follow('', { authorization: 'Bearer not-a-token' });
    expect(badToken.status).toBe(401);
  });

  it('holds each user to the stream limit with 429 and Retry-After, and frees a place when a stream closes', async () => {
    const dave = await board.userWithToken('dave');
    const streams = [await follow('', dave.auth), await follow('', dave.auth), await follow('', dave.auth)];
    for (const stream of streams) expect(stream.status).toBe(200);
    const over = await follow('', dave.auth);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('10');
    streams[0]?.close();
    await expect.poll(async () => (await follow('', dave.auth)).status).toBe(200);
  });

  // Last: the node stays draining.
  it('ends every stream when the node starts draining, so clients reconnect elsewhere', async () => {
    const stream = await follow();
    await stream.next((frame) => frame.retry === 3000);
    board.app.startDraining();
    await stream.ended;
  });
});
