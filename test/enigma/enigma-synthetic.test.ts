import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BaudApp, buildApp } from '../../src/app.js';
import { type Board, openBoard } from '../../src/board.js';
import { loadConfig } from '../../src/config/load-config.js';
import { buildSyntheticEnigmaBoard, syntheticMessageUuid } from '../support/enigma-synthetic.js';
import { runBaud } from '../support/run-baud.js';

const API = '/_baud/api/v1';
const MESSAGES = 30_000;
/** The fixture's highest message id: copy k of message n is message n + k × FIXTURE_SPAN. */
const FIXTURE_SPAN = 2182;
/** The fixture's thread 2151 ← 2152 ← 2153 ← 2154, 2151 ← 2155: [messageId, depth, replyToMessageId], depth-first. */
const FIXTURE_THREAD = [
  [2151, 0, null],
  [2152, 1, 2151],
  [2153, 2, 2152],
  [2154, 3, 2153],
  [2155, 1, 2151],
];

interface ThreadMessage {
  messageId: number;
  replyToMessageId: number | null;
  depth: number;
}

/** A synthetic ENiGMA½ board (the fixture copied over and over) moves whole, threads and all. */
describe('baud import enigma of a 30,000-message synthetic board [sqlite]', () => {
  let dir: string;
  let source: string;
  let configPath: string;
  let sourceAreaCounts: Map<string, number>;
  let fixtureUuidOf2154: string;
  let board: Board;
  let app: BaudApp;
  let token: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-enigma-synthetic-'));
    source = path.join(dir, 'enigma');
    buildSyntheticEnigmaBoard(source, MESSAGES);
    const messages = new Database(path.join(source, 'db', 'message.sqlite3'), { readonly: true });
    sourceAreaCounts = new Map(
      (
        messages.prepare('SELECT area_tag, COUNT(*) AS n FROM message GROUP BY area_tag').all() as Array<{
          area_tag: string;
          n: number;
        }>
      ).map((row) => [row.area_tag, row.n]),
    );
    fixtureUuidOf2154 = messages
      .prepare('SELECT message_uuid FROM message WHERE message_id = 2154')
      .pluck()
      .get() as string;
    messages.close();
    configPath = path.join(dir, 'board', 'config.hjson');
    mkdirSync(path.dirname(configPath), { recursive: true });
    writeFileSync(
      configPath,
      `${JSON.stringify({
        database: { url: `sqlite:${path.join(dir, 'board', 'baud.db')}` },
        logging: { level: 'silent' },
      })}\n`,
    );
  });
  afterAll(async () => {
    await app?.close();
    await board?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async <T>(url: string): Promise<T> => {
    const response = await app.inject({
      method: 'GET',
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.statusCode, url).toBe(200);
    return response.json() as T;
  };

  it('imports every one of the 30,000 messages', async () => {
    const run = await runBaud(['import', 'enigma', source, '--json', '--config', configPath], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { counts: Record<string, { found: number; imported: number }> };
    expect(summary.counts.messages).toMatchObject({ found: MESSAGES, imported: MESSAGES });

    const config = loadConfig({ configPath });
    board = await openBoard(config);
    app = await buildApp(config, { board, logger: false });
    const login = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'bob', password: 'BobPass123!' },
    });
    expect(login.statusCode).toBe(200);
    token = (login.json() as { accessToken: string }).accessToken;
  });

  it('keeps a copied thread in the shape of the fixture’s thread, with the copy’s ids', async () => {
    /** The thread holding `uuid` as [messageId, depth, replyToMessageId], ids less `offset`. */
    const threadShape = async (uuid: string, offset: number) =>
      (await get<{ data: ThreadMessage[] }>(`/messages/${uuid}/thread`)).data.map((message) => [
        message.messageId - offset,
        message.depth,
        message.replyToMessageId === null ? null : message.replyToMessageId - offset,
      ]);
    const original = await threadShape(fixtureUuidOf2154, 0);
    expect(original).toEqual(FIXTURE_THREAD);
    // Copy 12 is the last whole copy of the fixture in 30,000 messages.
    const offset = 12 * FIXTURE_SPAN;
    expect(await threadShape(syntheticMessageUuid(2154 + offset), offset)).toEqual(original);
  });

  it('counts as many messages in each area as the ENiGMA½ board holds', async () => {
    const served = [...sourceAreaCounts.keys()].filter((areaTag) => areaTag !== 'private_mail');
    expect(served.sort()).toEqual([
      'pub_general',
      'pub_secret_stuff',
      'pub_small',
      'retro_fido_echo',
      'retro_hardware',
    ]);
    for (const areaTag of served) {
      const area = await get<{ messageCount: number }>(`/messages/areas/${areaTag}`);
      expect(area.messageCount, areaTag).toBe(sourceAreaCounts.get(areaTag));
    }
  });
});
