import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openBoard } from '../../src/board.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runBaud } from '../support/run-baud.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/enigma-board');
/** The fixture's users and their ENiGMA½ passwords (its README); dave is disabled. */
const PASSWORDS: Readonly<Record<string, string>> = {
  sysop: 'SysopPass123!',
  alice: 'AlicePass123!',
  bob: 'BobPass123!',
  carol: 'CarolPass123!',
  dave: 'DavePass123!',
  erin: 'ErinPass123!',
};
const ACTIVE_USERS = ['sysop', 'alice', 'bob', 'carol', 'erin'];
/** An API key of alice's whose raw value the test knows (ENiGMA½ stores only its SHA-256). */
const KNOWN_RAW_KEY = '5f4dcc3b5aa765d61d8327deb882cf995f4dcc3b5aa765d61d8327deb882cf99';

interface FixtureMessage {
  message_id: number;
  area_tag: string;
  message_uuid: string;
  subject: string;
  message: string;
}

/** Issue 21: `baud import enigma` of the real ENiGMA½ fixture, then the board over real HTTP. */
describeEachDialect('baud import enigma', (dialect) => {
  let dir: string;
  let source: string;
  let configPath: string;
  let baseUrl: string;
  let closeServer: () => Promise<void>;
  const schema = `baud_test_${randomBytes(6).toString('hex')}`;
  const fixtureMessages = new Database(path.join(FIXTURE, 'db', 'message.sqlite3'), { readonly: true })
    .prepare('SELECT message_id, area_tag, message_uuid, subject, message FROM message ORDER BY message_id')
    .all() as FixtureMessage[];
  const baud = (...args: string[]) => runBaud([...args, '--config', configPath], { cwd: dir });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-enigma-'));
    source = path.join(dir, 'enigma');
    cpSync(FIXTURE, source, { recursive: true });
    const users = new Database(path.join(source, 'db', 'user.sqlite3'));
    users
      .prepare(
        `INSERT INTO api_keys (user_id, key_hash, label, scope, created_at, revoked) VALUES (2, ?, 'known', 'read,write', ?, 0)`,
      )
      .run(createHash('sha256').update(KNOWN_RAW_KEY).digest('hex'), '2026-11-23T15:00:00.000Z');
    users.close();
    configPath = path.join(dir, 'board', 'config.hjson');
    const databaseUrl =
      dialect === 'sqlite' ? `sqlite:${path.join(dir, 'board', 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    mkdirSync(path.dirname(configPath), { recursive: true });
    writeFileSync(
      configPath,
      `// The board an ENiGMA½ board moves into.\n${JSON.stringify({
        database: { url: databaseUrl },
        logging: { level: 'silent' },
        contentServers: { web: { restApi: { enigmaCompat: true } } },
      })}\n`,
    );
  });
  afterAll(async () => {
    await closeServer?.();
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  async function serve(): Promise<void> {
    const config = loadConfig({ configPath });
    const board = await openBoard(config);
    const app = await buildApp(config, { board, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    closeServer = async () => {
      await app.close();
      await board.close();
    };
  }

  const api = (url: string, init: RequestInit = {}) => fetch(`${baseUrl}/_baud/api/v1${url}`, init);
  async function tokenOf(username: string): Promise<string> {
    const response = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: PASSWORDS[username] }),
    });
    expect(response.status, username).toBe(200);
    return ((await response.json()) as { accessToken: string }).accessToken;
  }
  /** Every item of a list, page after page (`meta.nextCursor`). */
  async function allPages<T>(url: string, token?: string): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const response: Response = await fetch(`${baseUrl}${url}${cursor ? `&cursor=${cursor}` : ''}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      expect(response.status, url).toBe(200);
      const page = (await response.json()) as { data: T[]; meta: { nextCursor: string | null } };
      items.push(...page.data);
      cursor = page.meta.nextCursor;
    } while (cursor);
    return items;
  }

  it('writes nothing with --dry-run, and reports what a run would do', async () => {
    const before = readFileSync(configPath, 'utf8');
    const dry = await baud('import', 'enigma', source, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const summary = JSON.parse(dry.stdout) as {
      dryRun: boolean;
      counts: Record<string, { found: number; imported: number }>;
    };
    expect(summary.dryRun).toBe(true);
    expect(summary.counts.messages?.found).toBe(2182);
    expect(summary.counts.users?.found).toBe(6);
    // The same as the real run below imports.
    expect(summary.counts.users).toMatchObject({ found: 6, imported: 6 });
    expect(summary.counts.apiKeys).toMatchObject({ found: 11, imported: 11 });
    expect(summary.counts.messages).toMatchObject({ found: 2182, imported: 2182 });
    expect(summary.counts.files).toMatchObject({ found: 31, imported: 30, skipped: 1 });
    expect(summary.counts.calls).toMatchObject({ found: 8, imported: 8 });
    expect(readFileSync(configPath, 'utf8')).toBe(before);
    if (dialect === 'sqlite') expect(existsSync(path.join(dir, 'board', 'baud.db'))).toBe(false);
  });

  it('imports the board, reporting counts and what it could not carry over', async () => {
    const run = await baud('import', 'enigma', source, '--json');
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      counts: Record<string, { found: number; imported: number; skipped: number }>;
      skipped: Array<{ kind: string; reason: string; count: number }>;
    };
    expect(summary.counts.users).toMatchObject({ found: 6, imported: 6 });
    expect(summary.counts.apiKeys).toMatchObject({ found: 11, imported: 11 });
    expect(summary.counts.messages).toMatchObject({ found: 2182, imported: 2182 });
    expect(summary.counts.files).toMatchObject({ found: 31, imported: 30, skipped: 1 });
    expect(summary.counts.calls).toMatchObject({ found: 8, imported: 8 });
    expect(summary.skipped).toContainEqual({
      kind: 'messages',
      reason: 'private mail: served to its sender and its recipient only',
      count: 5,
    });
    expect(summary.skipped).toContainEqual({
      kind: 'files',
      reason: 'same content as another file of its area (baud keeps one copy per area)',
      count: 1,
    });
    await serve();
  });

  it('lets every active user log in with their ENiGMA½ password, and keeps the disabled one out', async () => {
    for (const username of ACTIVE_USERS) await tokenOf(username);
    const dave = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'dave', password: PASSWORDS.dave }),
    });
    expect(dave.status).toBe(401);
    const wrong = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'BobPass123!' }),
    });
    expect(wrong.status).toBe(401);
  });

  it('shows every user every message of every area with ENiGMA½’s ids and UUIDs, and anonymous callers the allowlist', async () => {
    const areaTags = ['pub_small', 'pub_secret_stuff', 'pub_general', 'retro_hardware', 'retro_fido_echo'];
    // No area has an ACS of its own in ENiGMA½'s config: every active user could read them all there.
    for (const username of ACTIVE_USERS) {
      const userToken = await tokenOf(username);
      for (const areaTag of areaTags) {
        const listed = await allPages<{ messageId: number; uuid: string; subject: string }>(
          `/_baud/api/v1/messages/areas/${areaTag}/messages?limit=100&stripAnsi=false`,
          userToken,
        );
        const expected = fixtureMessages.filter((message) => message.area_tag === areaTag);
        expect(
          listed.map((message) => [message.messageId, message.uuid, message.subject]),
          `${username} in ${areaTag}`,
        ).toEqual(expected.map((message) => [message.message_id, message.message_uuid, message.subject]));
      }
    }
    const token = await tokenOf('bob');
    // Every message reads back exactly as ENiGMA½ stored it: ANSI art, pipe codes, Unicode.
    const conferences = (await (
      await api('/messages/conferences', { headers: { authorization: `Bearer ${token}` } })
    ).json()) as {
      data: Array<{ confTag: string }>;
    };
    expect(conferences.data.map((conference) => conference.confTag)).toEqual(['public_conf', 'retro_conf']);
    for (const message of fixtureMessages.filter((row) => areaTags.includes(row.area_tag))) {
      const detail = await api(`/messages/${message.message_uuid}?stripAnsi=false`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(detail.status).toBe(200);
      const read = (await detail.json()) as { messageId: number; subject: string; body: string };
      expect([read.messageId, read.subject, read.body]).toEqual([message.message_id, message.subject, message.message]);
    }
    const ftn = fixtureMessages.find((row) => row.message_id === 2166);
    const echo = await api(`/messages/${ftn?.message_uuid}`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await echo.json()) as { network: unknown }).network).toEqual({
      ftnArea: 'RETRO.BBS',
      ftnMsgId: '2:5020/1042 6d3a1b2c',
      ftnOrigNode: '2:5020/1042',
      ftnOrigin: ' * Origin: Remote Test Node (2:5020/1042)',
      ftnPath: ['5020/1042 480/99'],
      ftnSeenBy: ['SEEN-BY: 480/99 100 5020/1042', 'SEEN-BY: 5020/1042 2432/200'],
      ftnTearLine: '--- ENiGMA 1/2 v0.5.0-beta (linux; x64; 20.0.0)',
    });
    // A reply keeps its place in the thread.
    const reply = fixtureMessages.find((row) => row.message_id === 2154);
    const thread = await api(`/messages/${reply?.message_uuid}/thread`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const threadIds = ((await thread.json()) as { data: Array<{ messageId: number }> }).data.map((m) => m.messageId);
    expect(threadIds).toEqual([2151, 2152, 2153, 2154, 2155]);

    const publicConference = (await (await api('/messages/conferences/public_conf')).json()) as {
      areas: Array<{ areaTag: string }>;
    };
    expect(publicConference.areas.map((area) => area.areaTag)).toEqual(['pub_small', 'pub_general']);
    expect((await api('/messages/areas/pub_general/messages?limit=1')).status).toBe(200);
    expect((await api('/messages/areas/pub_secret_stuff/messages?limit=1')).status).toBe(401);
  });

  it('never serves private mail as messages, to its sender or its recipient', async () => {
    for (const [username, id] of [
      ['alice', 2169],
      ['bob', 2169],
      ['bob', 2170],
    ] as const) {
      const mail = fixtureMessages.find((row) => row.message_id === id);
      const response = await api(`/messages/${mail?.message_uuid}`, {
        headers: { authorization: `Bearer ${await tokenOf(username)}` },
      });
      expect(response.status).toBe(404);
    }
    // Nor counted: the board's statistics hold the 2,177 served messages.
    const stats = (await (await api('/system/stats')).json()) as { totalMessages: number };
    expect(stats.totalMessages).toBe(2177);
    const search = await api('/messages/search?q=binkd', {
      headers: { authorization: `Bearer ${await tokenOf('alice')}` },
    });
    // Public messages mention binkd too; the private ones about it never show.
    const found = ((await search.json()) as { data: Array<{ messageId: number; areaTag: string }> }).data;
    expect(found.length).toBeGreaterThan(0);
    expect(
      found.filter((message) => message.areaTag === 'private_mail' || [2169, 2170].includes(message.messageId)),
    ).toEqual([]);
  });

  it('serves imported private mail to its sender and its recipient only, with its reply links, under both prefixes', async () => {
    const uuidOf = (id: number) => fixtureMessages.find((row) => row.message_id === id)?.message_uuid;
    const boxOf = async (username: string, box: 'inbox' | 'sent', prefix = '/_baud/api/v1') =>
      (
        await allPages<{ messageId: number; replyToUuid: string | null; read: boolean }>(
          `${prefix}/mail?box=${box}&limit=100`,
          await tokenOf(username),
        )
      ).map((mail) => [mail.messageId, mail.replyToUuid, mail.read]);
    expect(await boxOf('alice', 'inbox')).toEqual([[2170, uuidOf(2169), true]]);
    expect(await boxOf('alice', 'sent')).toEqual([[2169, null, true]]);
    expect(await boxOf('bob', 'inbox')).toEqual([[2169, null, true]]);
    expect(await boxOf('bob', 'sent', '/_enig/api/v1')).toEqual([[2170, uuidOf(2169), true]]);
    expect(await boxOf('sysop', 'inbox')).toEqual([]);
    expect(await boxOf('sysop', 'sent')).toEqual([[2171, null, true]]);
    expect(await boxOf('carol', 'inbox')).toEqual([[2173, uuidOf(2172), true]]);
    const erin = { authorization: `Bearer ${await tokenOf('erin')}` };
    const art = (await (await api(`/mail/${uuidOf(2172)}`, { headers: erin })).json()) as Record<string, unknown>;
    expect(art).toMatchObject({ from: 'carol', to: 'erin', subject: 'Art pack preview', read: true });
    for (const username of ['carol', 'sysop']) {
      const response = await api(`/mail/${uuidOf(2169)}`, {
        headers: { authorization: `Bearer ${await tokenOf(username)}` },
      });
      expect(response.status, username).toBe(404);
    }
    const alice = { authorization: `Bearer ${await tokenOf('alice')}` };
    const me = (await (await api('/users/me', { headers: alice })).json()) as { unreadMail: number };
    expect(me.unreadMail).toBe(0);
    const found = (await (await api('/mail/search?q=binkd', { headers: alice })).json()) as {
      data: { messageId: number }[];
    };
    expect(found.data.map((mail) => mail.messageId)).toEqual([2170, 2169]);
  });

  it('serves every imported file byte for byte, with its description, tags and download count', async () => {
    const token = await tokenOf('alice');
    const files = new Database(path.join(FIXTURE, 'db', 'file.sqlite3'), { readonly: true })
      .prepare('SELECT file_id, area_tag, storage_tag, file_name FROM file ORDER BY file_id')
      .all() as Array<{ file_id: number; area_tag: string; storage_tag: string; file_name: string }>;
    let served = 0;
    for (const file of files) {
      const response = await api(`/files/${file.file_id}/download`, { headers: { authorization: `Bearer ${token}` } });
      if (file.file_id === 23) {
        // Same bytes as file 12 in the same area: baud keeps one copy per area (reported by the import).
        expect(response.status).toBe(404);
        continue;
      }
      expect(response.status, file.file_name).toBe(200);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(bytes.equals(readFileSync(path.join(FIXTURE, 'file_base', file.storage_tag, file.file_name)))).toBe(true);
      served += 1;
    }
    expect(served).toBe(30);
    const starfall = (await (await api('/files/24', { headers: { authorization: `Bearer ${token}` } })).json()) as {
      fileName: string;
      uploadByUsername: string;
      estReleaseYear: number;
    };
    expect(starfall).toMatchObject({ fileName: 'starfall12.zip', uploadByUsername: 'alice', estReleaseYear: 1995 });
    const nodelist = (await (await api('/files/30', { headers: { authorization: `Bearer ${token}` } })).json()) as {
      hashTags: string[];
    };
    expect(nodelist.hashTags).toEqual(['fidonet', 'nodelist', 'zone1']);
  });

  it('accepts an imported API key in X-Enigma-API-Key or as Bearer (spec 5.3, both prefixes), and refuses a revoked one', async () => {
    for (const [prefix, headers] of [
      ['/_enig/api/v1', { 'x-enigma-api-key': KNOWN_RAW_KEY }],
      ['/_enig/api/v1', { authorization: `Bearer ${KNOWN_RAW_KEY}` }],
      ['/_baud/api/v1', { authorization: `Bearer ${KNOWN_RAW_KEY}` }],
    ] as const) {
      const me = await fetch(`${baseUrl}${prefix}/users/me`, { headers });
      expect(me.status, `${prefix} ${Object.keys(headers)[0]}`).toBe(200);
      expect(((await me.json()) as { username: string }).username).toBe('alice');
    }
    const revoked = await fetch(`${baseUrl}/_enig/api/v1/users/me`, {
      headers: { 'x-enigma-api-key': 'f'.repeat(64) },
    });
    expect(revoked.status).toBe(401);
  });

  it('changes nothing when run a second time', async () => {
    const before = readFileSync(configPath, 'utf8');
    const again = await baud('import', 'enigma', source, '--json');
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as {
      counts: Record<string, { imported: number; alreadyThere: number }>;
    };
    for (const kind of ['users', 'apiKeys', 'messages', 'files', 'calls']) {
      expect(summary.counts[kind]?.imported, kind).toBe(0);
    }
    expect(summary.counts.messages?.alreadyThere).toBe(2182);
    expect(readFileSync(configPath, 'utf8')).toBe(before);
  });

  it('refuses a board that already has content of its own', async () => {
    const other = path.join(dir, 'other', 'config.hjson');
    mkdirSync(path.dirname(other), { recursive: true });
    writeFileSync(other, `${JSON.stringify({ logging: { level: 'silent' } })}\n`);
    expect(
      (await runBaud(['user', 'add', 'someone', '--password', 'long enough pw', '--config', other], { cwd: dir })).code,
    ).toBe(0);
    const refused = await runBaud(['import', 'enigma', source, '--config', other], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already has users, messages or files: import into a new board/);
  });
});
