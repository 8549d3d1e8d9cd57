import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { CALLER_CACHE_MAX_AGE_MS } from '../../src/auth/caller-service.js';
import { boardMigrations } from '../../src/db/migrations/index.js';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { MESSAGE_READ_CACHE_MAX_AGE_MS } from '../../src/messages/message-read-cache.js';
import { tallyStatuses } from '../auth/auth-helpers.js';
import { type ApiResponse, api, field, listAll, login, refreshCookieOf } from '../hardening/support/api-client.js';
import {
  type BaudProcess,
  createHardeningBoard,
  type HardeningBoard,
  sleep,
} from '../hardening/support/baud-process.js';
import { buildMultipart } from '../support/multipart.js';
import { describeOnPostgres, POSTGRES_URL } from '../support/test-board.js';

/**
 * The proof that nodes can share one board: three real `baud serve` processes on different
 * loopback ports, one PostgreSQL schema and one storage directory. Whatever a client does on
 * one node, every other node answers the same way; races across nodes stay exact; a node
 * killed mid-traffic loses nothing that was acknowledged.
 */

const NODES = 3;
const AREA = 'cluster';
const FILE_AREA = 'shared_files';
const MAX_FAILURES = 10;
const GRACE_SECONDS = 2;
/** A node may remember who a credential stands for this long; a little more for the clocks. */
const CREDENTIAL_BOUND_MS = CALLER_CACHE_MAX_AGE_MS + 150;
const READ_BOUND_MS = MESSAGE_READ_CACHE_MAX_AGE_MS + 150;

const CLUSTER_CONFIG = {
  // Three pools of 4 on one server, with room for the CLI and the other test files.
  database: { poolSize: 4 },
  messageConferences: { main: { name: 'Main', areas: { [AREA]: { name: 'Cluster' } } } },
  fileBase: {
    storageTags: { shared: 'files/shared' },
    areas: { [FILE_AREA]: { name: 'Shared files', storageTags: ['shared'], acs: { write: 'GM[users]' } } },
  },
  contentServers: {
    web: {
      // The throttle test gives each guess an address of its own.
      trustProxy: true,
      restApi: {
        refreshGraceSeconds: GRACE_SECONDS,
        loginThrottle: { maxFailures: MAX_FAILURES, windowSeconds: 900 },
      },
    },
  },
};

const passwordOf = (username: string) => `${username}-cluster-password`;
const POSTERS = Array.from({ length: 8 }, (_, index) => `poster${index}`);
const USERNAMES = ['alice', 'carol', 'dave', 'keyholder', 'uploader', ...POSTERS];

interface PostedMessage {
  readonly messageId: number;
  readonly uuid: string;
  readonly fromUserName: string;
  readonly subject: string;
}

describeOnPostgres('three nodes on one database and one file store', () => {
  let board: HardeningBoard;
  let nodes: BaudProcess[] = [];
  let database: pg.Client;
  /** The node for the i-th request of a round robin. */
  const node = (index: number) => nodes[index % nodes.length] as BaudProcess;

  beforeAll(() => {
    board = createHardeningBoard('postgres', CLUSTER_CONFIG);
  });
  afterAll(async () => {
    await database?.end();
    await board?.destroy();
  });

  const me = (target: BaudProcess, headers: Record<string, string>) => api(target.apiUrl, '/users/me', { headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const refresh = (target: BaudProcess, refreshToken: string) =>
    api(target.apiUrl, '/auth/refresh', { method: 'POST', headers: { cookie: `baud_refresh=${refreshToken}` } });
  const statusesOnEveryNode = async (ask: (target: BaudProcess) => Promise<ApiResponse>) =>
    (await Promise.all(nodes.map(ask))).map((response) => response.status);

  /**
   * Asks every running node until each answers `expected`, and holds them to the bound: whatever
   * is asked `boundMs` or more after `changedAt` must get `expected` from every node. Asking again
   * and again ends as soon as the nodes agree, instead of waiting out the bound.
   */
  async function expectEveryNodeWithin<T>(
    boundMs: number,
    changedAt: number,
    ask: (target: BaudProcess) => Promise<T>,
    expected: T,
  ): Promise<void> {
    const running = nodes.filter((target) => !target.hasExited());
    const lateAnswers: string[] = [];
    await expect
      .poll(
        async () => {
          const askedAt = performance.now();
          const answers = await Promise.all(running.map(ask));
          const wrong = answers.flatMap((answer, index) => (isDeepStrictEqual(answer, expected) ? [] : [index + 1]));
          if (askedAt - changedAt >= boundMs && wrong.length > 0) {
            lateAnswers.push(`node ${wrong.join(', ')} ${Math.round(askedAt - changedAt)} ms after the change`);
          }
          return answers;
        },
        { timeout: boundMs + 10_000, interval: 50 },
      )
      .toEqual(running.map(() => expected));
    expect(lateAnswers).toEqual([]);
  }

  /** Every node refuses what `ask` sends within the credential bound after `changedAt`. */
  const expectRefusedWithinBound = (changedAt: number, ask: (target: BaudProcess) => Promise<ApiResponse>) =>
    expectEveryNodeWithin(CREDENTIAL_BOUND_MS, changedAt, async (target) => (await ask(target)).status, 401);

  it('starts three nodes at once on an empty schema, and between them they apply each migration once', async () => {
    nodes = await Promise.all(Array.from({ length: NODES }, () => board.start()));
    expect(new Set(nodes.map((started) => started.origin)).size).toBe(NODES);

    // Each banner says what its node applied: together, every migration exactly once.
    const appliedPerNode = nodes.map((started) => {
      const match = /Database: postgres, (?:applied (\d+) migrations?|up to date)/.exec(started.stdout());
      if (!match) throw new Error(`no Database line in:\n${started.stdout()}`);
      return Number(match[1] ?? 0);
    });
    const migrations = Object.keys(boardMigrations('postgres')).sort();
    expect(appliedPerNode.reduce((sum, applied) => sum + applied, 0)).toBe(migrations.length);

    const schema = new URL(board.databaseUrl).searchParams.get('schema');
    database = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
    await database.connect();
    const { rows } = await database.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
    expect(rows.map((row) => row.name)).toEqual(migrations);

    await board.addUsers(USERNAMES.map((username) => ({ username, password: passwordOf(username) })));
    console.log(`cluster: 3 nodes started together; migrations applied per node: ${appliedPerNode.join(', ')}`);
  }, 180_000);

  it('honours a login from node 1 on nodes 2 and 3, and rotates its refresh token across nodes', async () => {
    const session = await login(node(0).apiUrl, 'alice', passwordOf('alice'));
    expect(await statusesOnEveryNode((target) => me(target, bearer(session.accessToken)))).toEqual([200, 200, 200]);

    // Refreshed on node 2: the new pair works on node 3.
    const refreshed = await refresh(node(1), session.refreshToken);
    expect(refreshed.status).toBe(200);
    const second = refreshCookieOf(refreshed);
    expect((await me(node(2), bearer(field<string>(refreshed.json, 'accessToken')))).status).toBe(200);

    // The same token presented at once on all three nodes: one rotation, the same successor for all.
    const parallel = await Promise.all(Array.from({ length: 6 }, (_, index) => refresh(node(index), second)));
    expect(tallyStatuses(parallel.map((answer) => answer.status))).toEqual({ 200: 6 });
    const successors = new Set(parallel.map(refreshCookieOf));
    expect(successors.size).toBe(1);
    const third = refreshCookieOf(parallel[0] as ApiResponse);
    const lastAccessToken = field<string>(parallel[0]?.json, 'accessToken');

    await sleep(GRACE_SECONDS * 1000 + 200);
    // Presenting a rotated token after its grace is reuse: the whole family ends, on every node.
    expect((await refresh(node(2), second)).status).toBe(401);
    const endedAt = performance.now();
    expect(await statusesOnEveryNode((target) => refresh(target, third))).toEqual([401, 401, 401]);
    await expectRefusedWithinBound(endedAt, (target) => me(target, bearer(lastAccessToken)));
  });

  it('ends a session logged out on node 3 on every node within the credential bound', async () => {
    const session = await login(node(0).apiUrl, 'alice', passwordOf('alice'));
    expect(await statusesOnEveryNode((target) => me(target, bearer(session.accessToken)))).toEqual([200, 200, 200]);
    const logout = await api(node(2).apiUrl, '/auth/logout', {
      method: 'POST',
      headers: { cookie: `baud_refresh=${session.refreshToken}` },
    });
    expect(logout.status).toBe(204);
    await expectRefusedWithinBound(performance.now(), (target) => me(target, bearer(session.accessToken)));
    expect(await statusesOnEveryNode((target) => refresh(target, session.refreshToken))).toEqual([401, 401, 401]);
  });

  it(`evaluates exactly ${MAX_FAILURES} of 60 guesses spread over three nodes at once`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        api(node(index).apiUrl, '/auth/login', {
          method: 'POST',
          headers: { 'x-forwarded-for': `10.1.${index >> 8}.${index & 255}` },
          json: { username: 'carol', password: `guess ${index}` },
        }),
      ),
    );
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({
      401: MAX_FAILURES,
      429: 60 - MAX_FAILURES,
    });
    // The right password is held back too now, whichever node is asked.
    const rightPassword = await statusesOnEveryNode((target) =>
      api(target.apiUrl, '/auth/login', {
        method: 'POST',
        headers: { 'x-forwarded-for': '10.2.0.1' },
        json: { username: 'carol', password: passwordOf('carol') },
      }),
    );
    expect(rightPassword).toEqual([429, 429, 429]);
  });

  it('refuses an API key revoked with the CLI on every node within the credential bound', async () => {
    const generated = await board.cli([
      'rest',
      'api-key',
      'generate',
      'keyholder',
      '--label',
      'bot',
      '--scope',
      'read',
      '--json',
    ]);
    expect(generated.code).toBe(0);
    const { id, key } = JSON.parse(generated.stdout) as { id: number; key: string };
    // Every node has seen (and may remember) the key as live.
    expect(await statusesOnEveryNode((target) => me(target, { 'x-baud-api-key': key }))).toEqual([200, 200, 200]);

    const revoked = await board.cli(['rest', 'api-key', 'revoke', String(id)]);
    expect(revoked.code).toBe(0);
    await expectRefusedWithinBound(performance.now(), (target) => me(target, { 'x-baud-api-key': key }));
  });

  it('cuts a user disabled with the CLI off on every node within the credential bound', async () => {
    const session = await login(node(0).apiUrl, 'dave', passwordOf('dave'));
    expect(await statusesOnEveryNode((target) => me(target, bearer(session.accessToken)))).toEqual([200, 200, 200]);

    const disabled = await board.cli(['user', 'disable', 'dave']);
    expect(disabled.code).toBe(0);
    await expectRefusedWithinBound(performance.now(), (target) => me(target, bearer(session.accessToken)));
    expect(await statusesOnEveryNode((target) => refresh(target, session.refreshToken))).toEqual([401, 401, 401]);
    const logins = await statusesOnEveryNode((target) =>
      api(target.apiUrl, '/auth/login', { method: 'POST', json: { username: 'dave', password: passwordOf('dave') } }),
    );
    expect(logins).toEqual([401, 401, 401]);
  });

  /**
   * One login after another: the throttle holds a slot of the caller's address for each login
   * in flight, and this test's earlier refused logins came from the same loopback address.
   */
  async function logInOneByOne(usernames: readonly string[]) {
    const sessions = [];
    for (const [index, username] of usernames.entries()) {
      sessions.push(await login(node(index).apiUrl, username, passwordOf(username)));
    }
    return sessions;
  }

  const post = (target: BaudProcess, token: string, subject: string) =>
    api(target.apiUrl, `/messages/areas/${AREA}/messages`, {
      method: 'POST',
      token,
      json: { subject, message: `${subject}, posted on ${target.origin}` },
    });

  /**
   * What every node lists and counts within the read bound after `changedAt`: exactly the live
   * messages the database holds, in id order, each once.
   */
  async function expectExactArea(readerToken: string, changedAt: number): Promise<PostedMessage[]> {
    const stored = await database.query<{ uuid: string }>(
      'SELECT uuid FROM messages WHERE area_tag = $1 AND deleted_at IS NULL ORDER BY id',
      [AREA],
    );
    const storedUuids = stored.rows.map((row) => row.uuid);
    const listingOf = (target: BaudProcess) =>
      listAll<PostedMessage>(target.apiUrl, `/messages/areas/${AREA}/messages`, readerToken);
    await expectEveryNodeWithin(
      READ_BOUND_MS,
      changedAt,
      async (target) => (await listingOf(target)).map((message) => message.uuid),
      storedUuids,
    );
    await expectEveryNodeWithin(
      READ_BOUND_MS,
      changedAt,
      async (target) =>
        field<number>(
          (await api(target.apiUrl, `/messages/areas/${AREA}`, { token: readerToken })).json,
          'messageCount',
        ),
      storedUuids.length,
    );
    const listed = await listingOf(nodes.find((target) => !target.hasExited()) as BaudProcess);
    const outOfOrder = listed.filter(
      (message, index) => index > 0 && message.messageId <= (listed[index - 1]?.messageId ?? 0),
    );
    expect(outOfOrder).toEqual([]);
    const { rows } = await database.query<{ username: string; post_count: number }>(
      `SELECT username, post_count FROM users WHERE username LIKE 'poster%' ORDER BY username`,
    );
    for (const row of rows) {
      expect([row.username, Number(row.post_count)]).toEqual([
        row.username,
        listed.filter((message) => message.fromUserName === row.username).length,
      ]);
    }
    return listed;
  }

  it('stores every one of 8 × 24 posts sent to three nodes at once exactly once, with exact counters', async () => {
    const sessions = await logInOneByOne(POSTERS);
    const answers = await Promise.all(
      sessions.flatMap((session, user) =>
        Array.from({ length: 24 }, (_, index) =>
          post(node(user + index), session.accessToken, `race u${user} p${index}`),
        ),
      ),
    );
    expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.text)).toEqual([]);
    const acknowledged = answers.map((answer) => answer.json as PostedMessage);

    const listed = await expectExactArea(sessions[0]?.accessToken ?? '', performance.now());
    expect(listed).toHaveLength(8 * 24);
    const listedIdOf = new Map(listed.map((message) => [message.uuid, message.messageId]));
    expect(acknowledged.filter((message) => listedIdOf.get(message.uuid) !== message.messageId)).toEqual([]);
  });

  const upload = (target: BaudProcess, token: string, fileName: string, content: Uint8Array) => {
    const { body, contentType } = buildMultipart([{ name: 'file', fileName, value: content }]);
    return api(target.apiUrl, `/files/areas/${FILE_AREA}`, {
      method: 'POST',
      token,
      headers: { 'content-type': contentType },
      body,
    });
  };
  let sharedFile: { fileId: number; content: Buffer } | null = null;
  const storageEntries = () => {
    const directory = path.join(board.dir, 'files/shared');
    return [...readdirSync(directory), ...readdirSync(path.join(directory, INCOMING_DIRECTORY))].sort();
  };

  it('stores the same content uploaded on three nodes at once once: one 201, the rest 409', async () => {
    const session = await login(node(0).apiUrl, 'uploader', passwordOf('uploader'));
    const content = randomBytes(64 * 1024);
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, index) => upload(node(index), session.accessToken, `twin-${index}.bin`, content)),
    );
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({ 201: 1, 409: 8 });
    const fileId = field<number>(answers.find((answer) => answer.status === 201)?.json, 'fileId');
    for (const conflict of answers.filter((answer) => answer.status === 409)) {
      expect(field<string>(conflict.json, 'detail')).toBe(
        `The same file is already in file area "${FILE_AREA}" as fileId ${fileId}.`,
      );
    }
    // One stored file and nothing left in the incoming directory by any node.
    expect(storageEntries()).toEqual([INCOMING_DIRECTORY, String(fileId)]);
    const { rows } = await database.query('SELECT upload_count, upload_bytes FROM users WHERE username = $1', [
      'uploader',
    ]);
    expect(rows).toEqual([{ upload_count: 1, upload_bytes: content.length }]);
    sharedFile = { fileId, content };
  });

  it('counts 30 downloads from three nodes at once exactly', async () => {
    if (!sharedFile) throw new Error('needs the uploaded file');
    const { fileId, content } = sharedFile;
    const session = await login(node(1).apiUrl, 'alice', passwordOf('alice'));
    const downloads = await Promise.all(
      Array.from({ length: 30 }, async (_, index) => {
        const response = await fetch(`${node(index).apiUrl}/files/${fileId}/download`, {
          headers: bearer(session.accessToken),
        });
        return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
      }),
    );
    expect(downloads.filter((download) => download.status !== 200 || !download.bytes.equals(content))).toEqual([]);
    // A download counts once its last byte has left the node, just after the client got it.
    const counters = async () =>
      (
        await database.query(
          `SELECT (SELECT dl_count FROM files WHERE id = $1) AS dl_count, download_count, download_bytes
             FROM users WHERE username = 'alice'`,
          [fileId],
        )
      ).rows[0];
    const exact = { dl_count: 30, download_count: 30, download_bytes: 30 * content.length };
    await vi.waitFor(async () => expect(await counters()).toEqual(exact), { timeout: 2000, interval: 20 });
    await sleep(300);
    expect(await counters()).toEqual(exact);
    for (const target of nodes) {
      const detail = await api(target.apiUrl, `/files/${fileId}`, { token: session.accessToken });
      expect(field<number>(detail.json, 'dlCount')).toBe(30);
    }
  });

  it('keeps serving on two nodes when the third is SIGKILLed mid-traffic, losing nothing acknowledged', async () => {
    const victim = node(2);
    const survivors = [node(0), node(1)];
    const sessions = await logInOneByOne(POSTERS.slice(0, 6));
    const acknowledged: PostedMessage[] = [];
    const refusedBySurvivors: string[] = [];
    let unanswered = 0;
    let killed = false;

    const client = async (token: string, client: number) => {
      for (let index = 0; index < 30; index += 1) {
        const target = killed ? (survivors[(client + index) % 2] as BaudProcess) : node(client + index);
        const subject = `kill c${client} p${index}`;
        try {
          const answer = await post(target, token, subject);
          if (answer.status === 201) acknowledged.push(answer.json as PostedMessage);
          else if (target !== victim) refusedBySurvivors.push(`${answer.status} ${answer.text}`);
        } catch (error) {
          // No answer: the victim died with the request in flight, or refused the connection.
          if (target === victim) unanswered += 1;
          else refusedBySurvivors.push(String(error));
        }
      }
    };
    const killer = async () => {
      await expect.poll(() => acknowledged.length, { interval: 2, timeout: 60_000 }).toBeGreaterThanOrEqual(40);
      await victim.kill();
      killed = true;
    };
    await Promise.all([killer(), ...sessions.map((session, index) => client(session.accessToken, index))]);

    expect((await victim.exited).signal).toBe('SIGKILL');
    expect(refusedBySurvivors).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(6 * 30 - unanswered);

    const listed = await expectExactArea(sessions[0]?.accessToken ?? '', performance.now());
    const listedUuids = new Set(listed.map((message) => message.uuid));
    expect(acknowledged.filter((message) => !listedUuids.has(message.uuid))).toEqual([]);
    // A post the victim took but never answered may or may not have committed — never twice.
    const stored = listed.filter((message) => message.subject.startsWith('kill '));
    expect(stored.length).toBeGreaterThanOrEqual(acknowledged.length);
    expect(stored.length).toBeLessThanOrEqual(acknowledged.length + unanswered);
    for (const survivor of survivors) {
      expect((await fetch(`${survivor.origin}/_baud/health/ready`)).status).toBe(200);
    }
    console.log(
      'cluster: node 3 SIGKILLed once 40 posts were acknowledged; ' +
        `${acknowledged.length} acknowledged (all stored), ${unanswered} unanswered by the killed node, ` +
        `${stored.length} stored, 0 refused by the survivors`,
    );
  });
});
