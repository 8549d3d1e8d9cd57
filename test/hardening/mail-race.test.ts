import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_PREFIX } from '../../src/http/api-prefix.js';
import { openSse } from '../support/sse-client.js';
import {
  createTestBoard,
  describeEachDialect,
  openSecondNode,
  type SecondNode,
  type TestBoard,
} from '../support/test-board.js';

type Auth = { authorization: string };

/**
 * Private mail under attack and under load, on two nodes of one board: the sending limit holds
 * when one sender floods both nodes at once, the unread count stays exact when read flags and
 * deletions race, nobody can tell another's mail from an unknown uuid, and a mail sent on one
 * node reaches the recipient's stream on the other within a second.
 */
describeEachDialect('private mail on two nodes', (dialect) => {
  let nodeA: TestBoard;
  let nodeB: SecondNode;
  let alice: Auth;
  let bob: Auth;
  let mallory: Auth;

  const inject = (
    node: 'A' | 'B',
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    headers: Auth,
    payload?: object,
  ) =>
    (node === 'A' ? nodeA.app : nodeB.app).inject({
      method,
      url: `${API_PREFIX}${url}`,
      headers,
      ...(payload ? { payload } : {}),
    });
  /**
   * The node a racing write goes to besides A: B on PostgreSQL. Two SQLite nodes in one process
   * cannot race writes: better-sqlite3 waits for the file's write lock synchronously, holding the
   * event loop the other node needs to commit (separate processes, as in production, do not).
   */
  const racingNode = (): 'A' | 'B' => (dialect === 'postgres' ? 'B' : 'A');
  const unreadMailOf = async (auth: Auth) =>
    (await inject('B', 'GET', '/users/me', auth)).json<{ unreadMail: number }>().unreadMail;

  beforeAll(async () => {
    // Metrics on: node A times its queries, so a probe's database work can be compared.
    nodeA = await createTestBoard(dialect, {
      config: { events: { pollIntervalMs: 100 }, metrics: { enabled: true, port: 0 } },
    });
    nodeB = await openSecondNode(nodeA);
    alice = (await nodeA.userWithToken('alice')).auth;
    bob = (await nodeA.userWithToken('bob')).auth;
    mallory = (await nodeA.userWithToken('mallory')).auth;
  });
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
  });

  it('lets one sender flooding both nodes at once through exactly 30 times in the window', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        inject(n % 2 === 0 ? 'A' : racingNode(), 'POST', '/mail', mallory, {
          to: 'alice',
          subject: `Flood ${n}`,
          body: 'b',
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([...Array(30).fill(201), ...Array(10).fill(429)]);
    for (const refused of answers.filter((answer) => answer.statusCode === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.json().code).toBe('mail.too-many');
    }
    const inbox = await inject('A', 'GET', '/mail?limit=100', alice);
    expect(inbox.json().data).toHaveLength(30);
    expect(await unreadMailOf(alice)).toBe(30);
  });

  it('keeps the unread count exact while read flags and deletions race on both nodes', async () => {
    const uuids: string[] = [];
    for (let n = 0; n < 12; n += 1) {
      const sent = await inject('A', 'POST', '/mail', alice, { to: 'bob', subject: `Race ${n}`, body: 'b' });
      uuids.push(sent.json().uuid);
    }
    expect(await unreadMailOf(bob)).toBe(12);
    await Promise.all(
      uuids.flatMap((uuid, n) => [
        inject('A', 'PATCH', `/mail/${uuid}`, bob, { read: true }),
        inject(racingNode(), 'PATCH', `/mail/${uuid}`, bob, { read: n % 2 === 0 }),
        inject(racingNode(), 'PATCH', `/mail/${uuid}`, bob, { read: true }),
        ...(n % 3 === 0 ? [inject(n % 2 === 0 ? 'A' : racingNode(), 'DELETE', `/mail/${uuid}`, bob)] : []),
      ]),
    );
    const unread = await nodeA.board.db
      .selectFrom('mailboxEntries')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('box', '=', 'inbox')
      .where('isRead', '=', 0)
      .where(
        'userId',
        '=',
        (
          await nodeA.board.db
            .selectFrom('users')
            .select('id')
            .where('usernameKey', '=', 'bob')
            .executeTakeFirstOrThrow()
        ).id,
      )
      .executeTakeFirstOrThrow();
    expect(await unreadMailOf(bob)).toBe(Number(unread.count));
    // The sender keeps every mail, whatever the recipient deleted.
    expect((await inject('B', 'GET', '/mail?box=sent&limit=100', alice)).json().data.length).toBeGreaterThanOrEqual(12);
  });

  it('erases a mail both parties delete at the same moment on different nodes', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { uuid } = (
        await inject('A', 'POST', '/mail', alice, { to: 'bob', subject: 'Both', body: 'Gone.' })
      ).json();
      const answers = await Promise.all([
        inject('A', 'DELETE', `/mail/${uuid}`, alice),
        inject(racingNode(), 'DELETE', `/mail/${uuid}`, bob),
      ]);
      expect(answers.map((answer) => answer.statusCode)).toEqual([204, 204]);
      const row = await nodeA.board.db
        .selectFrom('messages')
        .select(['subject', 'body'])
        .where('uuid', '=', uuid)
        .where('deletedAt', 'is not', null)
        .executeTakeFirst();
      expect(row).toEqual({ subject: '', body: '' });
    }
  });

  it('lets a reply to a mail and its deletion by the reply’s recipient run at once without a deadlock', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { uuid } = (await inject('A', 'POST', '/mail', alice, { to: 'bob', subject: 'Ask', body: '?' })).json();
      const [deleted, replied] = await Promise.all([
        inject('A', 'DELETE', `/mail/${uuid}`, alice),
        inject(racingNode(), 'POST', '/mail', bob, { to: 'alice', subject: 'Re: Ask', body: '!', replyToUuid: uuid }),
      ]);
      expect([deleted?.statusCode, replied?.statusCode]).toEqual([204, 201]);
    }
  });

  it('answers probes for other people’s mail exactly as probes for nothing, on either node', async () => {
    const theirs = (
      await inject('A', 'POST', '/mail', alice, { to: 'bob', subject: 'Ours', body: 'Only ours.' })
    ).json().uuid as string;
    const nothing = '0193a1c2-7d4e-7c3b-9f1a-2b3c4d5e6f70';
    const shapeOf = async (node: 'A' | 'B', method: 'GET' | 'PATCH' | 'DELETE', uuid: string) => {
      const answer = await inject(
        node,
        method,
        `/mail/${uuid}`,
        mallory,
        method === 'PATCH' ? { read: true } : undefined,
      );
      const { instance: _instance, detail, ...body } = answer.json();
      return {
        status: answer.statusCode,
        headers: Object.keys(answer.headers).sort(),
        body,
        detail: String(detail).replace(uuid, '{uuid}'),
      };
    };
    for (const node of ['A', 'B'] as const) {
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        expect(await shapeOf(node, method, theirs)).toEqual(await shapeOf(node, method, nothing));
      }
    }
    // The same statements, in the same order, for another's mail as for no mail at all. The
    // node's own work (its event log poll, a caller's cache running out) only ever adds
    // statements: the shortest of a few runs is the request's.
    const statementsOf = async (method: 'GET' | 'PATCH' | 'DELETE', uuid: string) => {
      await shapeOf('A', method, uuid); // warm: the caller and the token are remembered after this
      const runs: string[][] = [];
      for (let run = 0; run < 5; run += 1) {
        const operations: string[] = [];
        nodeA.board.database.onQuery((timing) => operations.push(`${timing.operation}${timing.failed ? '!' : ''}`));
        await shapeOf('A', method, uuid);
        nodeA.board.database.onQuery(() => {});
        runs.push(operations);
      }
      return runs.reduce((shortest, run) => (run.length < shortest.length ? run : shortest));
    };
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const forTheirs = await statementsOf(method, theirs);
      expect(forTheirs.length).toBeGreaterThan(0);
      expect(forTheirs).toEqual(await statementsOf(method, nothing));
    }
    expect((await inject('B', 'GET', `/mail/${theirs}`, bob)).statusCode).toBe(200);
  });

  it('delivers a mail sent on one node to the recipient’s stream on the other within a second', async () => {
    await nodeB.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (nodeB.app.server.address() as AddressInfo).port;
    const stream = await openSse(`http://127.0.0.1:${port}${API_PREFIX}/events?types=mail.received`, bob);
    try {
      await stream.next((frame) => frame.retry === 3000);
      const sent = await inject('A', 'POST', '/mail', alice, { to: 'bob', subject: 'Across nodes', body: 'Hi.' });
      expect(sent.statusCode).toBe(201);
      const frame = await stream.next((candidate) => candidate.event === 'mail.received', { timeoutMs: 1000 });
      expect(frame.data).toMatchObject({ uuid: sent.json().uuid, from: 'alice', to: 'bob', read: false });
    } finally {
      stream.close();
    }
  });
});
