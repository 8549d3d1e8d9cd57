import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors.js';
import { importMessages, MessageImportError } from '../../src/messages/message-import.js';
import { createCliBoard } from '../support/cli-board.js';
import { runBaud, runBaudProcess } from '../support/run-baud.js';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, linesOf, MESSAGE_TEST_CONFIG, type MessageTestBoard } from './message-fixture.js';

const good = (subject: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    from: 'Importer',
    to: 'All',
    subject,
    body: `Body of ${subject}`,
    timestamp: '2024-01-02T03:04:05Z',
    ...extra,
  });

describeEachDialect('message import', (dialect) => {
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
  });
  afterAll(() => board.close());

  const run = (areaTag: string, lines: string[], batchSize = 5000, progress: number[] = []) =>
    importMessages(board.board, areaTag, linesOf(lines), (imported) => progress.push(imported), { batchSize });
  const listOf = async (areaTag: string) =>
    (
      await board.app.inject({
        method: 'GET',
        url: `${API}/messages/areas/${areaTag}/messages?limit=100`,
        headers: board.sysop.auth,
      })
    ).json().data as {
      messageId: number;
      uuid: string;
      subject: string;
      replyToMessageId: number | null;
      timestamp: string;
    }[];
  const countersOf = async (areaTag: string) =>
    board.board.db.selectFrom('messageAreas').selectAll().where('areaTag', '=', areaTag).executeTakeFirst();
  const failureOf = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    if (!(error instanceof MessageImportError)) throw new Error(`expected a MessageImportError, got ${String(error)}`);
    return error;
  };

  it('imports in batches, links replies by line number, keeps FTN metadata and the counters', async () => {
    const progress: number[] = [];
    const lines = [
      good('One', { timestamp: '2024-01-02T03:04:05+02:00' }),
      '',
      good('Three', { replyTo: 1, timestamp: '2024-01-03T00:00:00.5Z' }),
      good('Four', { replyTo: 3, ftn: { ftnMsgId: '1:2/3 1234', ftnPath: ['1/2'] } }),
      good('Five', { replyTo: 1, to: 'Sysop' }),
    ];
    expect(await run('members', lines, 2, progress)).toEqual({ imported: 4 });
    expect(progress).toEqual([2, 4]);
    const list = await listOf('members');
    const [one, three, four, five] = list;
    expect(list.map((message) => message.subject)).toEqual(['One', 'Three', 'Four', 'Five']);
    expect(one?.timestamp).toBe('2024-01-02T01:04:05.000Z');
    expect(three?.replyToMessageId).toBe(one?.messageId);
    expect(four?.replyToMessageId).toBe(three?.messageId);
    expect(five?.replyToMessageId).toBe(one?.messageId);
    expect(await countersOf('members')).toEqual({
      areaTag: 'members',
      messageCount: 4,
      lastMessageAt: '2024-01-03T00:00:00.500Z',
    });
    const detail = (
      await board.app.inject({ method: 'GET', url: `${API}/messages/${four?.uuid}`, headers: board.sysop.auth })
    ).json();
    expect(detail).toMatchObject({
      fromUserName: 'Importer',
      toUserName: 'All',
      network: { ftnMsgId: '1:2/3 1234', ftnPath: ['1/2'] },
    });
    const first = (
      await board.app.inject({ method: 'GET', url: `${API}/messages/${one?.uuid}`, headers: board.sysop.auth })
    ).json();
    expect(first.replyCount).toBe(2);
  });

  // SQLite pages big areas through the index without statistics; PostgreSQL needs them.
  if (dialect === 'postgres')
    it('leaves the planner statistics of the messages up to date', async () => {
      const analyzedRows = async () => {
        const { rows } = await sql<{ reltuples: number }>`
        SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass`.execute(board.board.db);
        return Number(rows[0]?.reltuples);
      };
      const live = async () =>
        Number(
          (
            await board.board.db
              .selectFrom('messages')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      await run('general', [good('s1'), good('s2'), good('s3')]);
      // reltuples is -1 until a table is first analysed and the row count after each ANALYZE.
      expect(await analyzedRows()).toBe(await live());
    });

  it('commits nothing when line 3 of a single batch is bad', async () => {
    const error = await failureOf(run('readonly', [good('a'), good('b'), good(''), good('d')]));
    expect(error.lineNumber).toBe(3);
    expect(error.committedCount).toBe(0);
    expect(error.message).toBe(
      'line 3: subject must not be empty (nothing from its batch was imported; 0 earlier messages were)',
    );
    expect(await listOf('readonly')).toEqual([]);
    expect(await countersOf('readonly')).toBeUndefined();
  });

  it('keeps earlier batches and drops the bad batch', async () => {
    const error = await failureOf(run('chatter', [good('1'), good('2'), good('3'), good('4'), good('5'), '{oops'], 2));
    expect(error.lineNumber).toBe(6);
    expect(error.committedCount).toBe(4);
    expect((await listOf('chatter')).map((message) => message.subject)).toEqual(['1', '2', '3', '4']);
    expect((await countersOf('chatter'))?.messageCount).toBe(4);
  });

  const badLines: [string, string, string][] = [
    ['invalid JSON', '{"from":', 'not valid JSON'],
    ['an array', '[1]', 'must be a JSON object'],
    [
      'a missing from',
      JSON.stringify({ subject: 's', body: 'b', timestamp: '2024-01-01T00:00:00Z' }),
      'from must be a string',
    ],
    ['a subject of 73 code points', good('é'.repeat(73)), 'subject must be at most 72 characters'],
    ['an empty body', good('s', { body: '  ' }), 'body must not be empty'],
    ['a body of 64 KiB + 1', good('s', { body: 'x'.repeat(65_537) }), 'body must be at most 65536 bytes of UTF-8'],
    ['a to of 37 characters', good('s', { to: 'x'.repeat(37) }), 'to must be at most 36 characters'],
    [
      'a timestamp that is not RFC 3339',
      good('s', { timestamp: '2024-01-02' }),
      'timestamp must be an RFC 3339 date-time',
    ],
    [
      'an impossible timestamp',
      good('s', { timestamp: '2024-13-45T00:00:00Z' }),
      'timestamp must be an RFC 3339 date-time',
    ],
    ['a replyTo of its own line', good('s', { replyTo: 2 }), 'replyTo must be the line number of an earlier line'],
    [
      'a replyTo that is not an integer',
      good('s', { replyTo: '1' }),
      'replyTo must be the line number of an earlier line',
    ],
    ['a body with a NUL character', good('s', { body: 'a\u0000b' }), 'body must not contain NUL characters'],
    ['an unknown member', good('s', { colour: 'red' }), 'colour is not a known member'],
    ['an unknown FTN member', good('s', { ftn: { ftnFoo: 'x' } }), 'ftn/ftnFoo is not a known FTN member'],
    ['an FTN list of numbers', good('s', { ftn: { ftnSeenBy: [1] } }), 'ftn/ftnSeenBy must be an array of strings'],
  ];
  for (const [name, line, reason] of badLines) {
    it(`stops at ${name} with its line number`, async () => {
      const error = await failureOf(run('secret', [good('first'), line]));
      expect(error.lineNumber).toBe(2);
      expect(error.message).toMatch(new RegExp(`^line 2: ${reason.replace(/[()]/g, '\\$&')} \\(`));
      expect(await countersOf('secret')).toBeUndefined();
    });
  }

  it('refuses a replyTo pointing at a blank line', async () => {
    const error = await failureOf(run('secret', ['', good('s', { replyTo: 1 })]));
    expect(error.message).toMatch(/^line 2: replyTo 1 is not a message line/);
  });

  it('refuses unknown and blocked areas', async () => {
    for (const areaTag of ['nowhere', 'private_mail', 'activitypub_shared']) {
      await expect(run(areaTag, [good('x')])).rejects.toBeInstanceOf(NotFoundError);
    }
  });
});

describe('baud message import', () => {
  let dir: string;
  let config: string;
  beforeAll(() => {
    ({ dir, config } = createCliBoard('baud-message-cli-', {
      messageConferences: MESSAGE_TEST_CONFIG.messageConferences,
    }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports a file, reporting progress on stderr and the count', async () => {
    const file = path.join(dir, 'good.jsonl');
    writeFileSync(file, `${[good('a'), good('b', { replyTo: 1 }), good('c')].join('\n')}\n`);
    const json = await runBaud(['message', 'import', 'general', file, '--config', config, '--json'], { cwd: dir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ areaTag: 'general', imported: 3 });
    expect(json.stderr).toBe('imported 3 messages …\n');
    const human = await runBaud(['message', 'import', 'general', file, '--config', config], { cwd: dir });
    expect(human.stdout).toBe('imported 3 messages into general\n');
  });

  it('stops at a bad line with its number and a non-zero exit code, committing nothing of the batch', async () => {
    const file = path.join(dir, 'bad.jsonl');
    writeFileSync(file, `${[good('a'), good('b'), good('c', { timestamp: 'soon' })].join('\n')}\n`);
    const result = await runBaud(['message', 'import', 'members', file, '--config', config], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'baud: line 3: timestamp must be an RFC 3339 date-time (nothing from its batch was imported; 0 earlier messages were)\n',
    );
    const again = await runBaud(
      ['message', 'import', 'members', path.join(dir, 'good.jsonl'), '--config', config, '--json'],
      {
        cwd: dir,
      },
    );
    // Nothing of the failed file went in: the good file alone makes the count.
    expect(JSON.parse(again.stdout).imported).toBe(3);
  });

  it('refuses an unknown area and a missing file with a non-zero exit code', async () => {
    const file = path.join(dir, 'good.jsonl');
    const unknown = await runBaud(['message', 'import', 'nowhere', file, '--config', config], { cwd: dir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('baud: No message area "nowhere".\n');
    const missing = await runBaud(['message', 'import', 'general', path.join(dir, 'none.jsonl'), '--config', config], {
      cwd: dir,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`baud: cannot read ${path.join(dir, 'none.jsonl')}\n`);
  });

  it('searches every area as the operator (ACS aside), and rebuilds the index with progress', async () => {
    const file = path.join(dir, 'secret.jsonl');
    writeFileSync(file, `${[good('Walrus report', { body: 'The walrus sleeps.' }), good('Other')].join('\n')}\n`);
    // "secret" has an ACS nobody passes: the API never shows it, the operator's CLI does.
    expect((await runBaud(['message', 'import', 'secret', file, '--config', config], { cwd: dir })).code).toBe(0);
    const found = await runBaud(['message', 'search', 'walrus', '--config', config, '--json'], { cwd: dir });
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject([
      { areaTag: 'secret', subject: 'Walrus report', snippet: 'The «walrus» sleeps.' },
    ]);
    const human = await runBaud(['message', 'search', 'walrus', '--area', 'gen*', '--config', config], { cwd: dir });
    expect(human.stdout).toBe('no messages found\n');
    // A query that starts with "-" follows "--", as for any command line.
    const bad = await runBaud(['message', 'search', '--config', config, '--', '-walrus'], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('baud: q has no words to search for.\n');
    const badSort = await runBaud(['message', 'search', 'walrus', '--sort', 'oldest', '--config', config], {
      cwd: dir,
    });
    expect(badSort.code).toBe(1);
    expect(badSort.stderr).toBe('baud: --sort must be one of: newest, relevance\n');

    const reindexed = await runBaud(['message', 'reindex', '--config', config, '--json'], { cwd: dir });
    expect(reindexed.code).toBe(0);
    const { indexed } = JSON.parse(reindexed.stdout) as { indexed: number };
    expect(reindexed.stderr).toMatch(new RegExp(`^indexed ${indexed} / ${indexed} messages \\(\\d[\\d,]*/s\\)\\n$`));
    const again = await runBaud(['message', 'search', 'walrus', '--sort', 'relevance', '--config', config, '--json'], {
      cwd: dir,
    });
    expect(JSON.parse(again.stdout)).toHaveLength(1);
  });
});

// The command writes through SQLite on a worker thread, one batch (5,000 lines) committing while
// the next is read: replies to the batch still committing, and a bad line meanwhile.
describe('baud message import, batch after batch', () => {
  let dir: string;
  let config: string;
  beforeAll(() => {
    ({ dir, config } = createCliBoard('baud-message-batches-', {
      messageConferences: MESSAGE_TEST_CONFIG.messageConferences,
    }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The board's database as the CLI left it, read beside it (SQL, then its parameters). */
  const readBoard = (query: string, ...parameters: unknown[]) => {
    const connection = new BetterSqlite3(path.join(dir, 'baud.db'), { readonly: true });
    try {
      return connection.prepare(query).all(...parameters);
    } finally {
      connection.close();
    }
  };
  const messagesIn = (areaTag: string) =>
    readBoard(
      `SELECT id, subject, reply_to_message_id AS replyTo, thread_root_id AS root FROM messages
        WHERE area_tag = ? ORDER BY id`,
      areaTag,
    ) as { id: number; subject: string; replyTo: number | null; root: number }[];

  it('links replies to the batch still committing and to earlier ones, over three batches', async () => {
    const replies: Record<number, number> = { 5001: 5000, 5002: 4999, 10001: 1, 10002: 10_001, 12000: 9_999 };
    const lines = Array.from({ length: 12_000 }, (_, index) => {
      const line = index + 1;
      return good(`m${line}`, replies[line] === undefined ? {} : { replyTo: replies[line] });
    });
    const file = path.join(dir, 'three-batches.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await runBaud(['message', 'import', 'vault', file, '--config', config, '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('imported 5000 messages …\nimported 10000 messages …\nimported 12000 messages …\n');
    const stored = messagesIn('vault');
    expect(stored.map((message) => message.subject)).toEqual(lines.map((_, index) => `m${index + 1}`));
    const idOfLine = (line: number) => stored[line - 1]?.id;
    for (const [line, parentLine] of Object.entries(replies)) {
      expect(stored[Number(line) - 1]?.replyTo).toBe(idOfLine(parentLine));
    }
    expect(stored[10_001]?.root).toBe(idOfLine(1));
    expect(stored.filter((message) => message.replyTo !== null)).toHaveLength(5);
  });

  it('lets two imports into one area at once each keep their order, replies, counts and index', async () => {
    const files = ['x', 'y'].map((prefix) => {
      const lines = Array.from({ length: 12_000 }, (_, index) =>
        good(`${prefix}${index + 1}`, (index + 1) % 10 === 0 ? { replyTo: index - 6 } : {}),
      );
      const file = path.join(dir, `at-once-${prefix}.jsonl`);
      writeFileSync(file, `${lines.join('\n')}\n`);
      return file;
    });
    // Two processes, as two sysops' shells would run them: their batches take turns at SQLite's write lock.
    const results = await Promise.all(
      files.map((file) =>
        runBaudProcess(['message', 'import', 'members', file, '--config', config, '--json'], { cwd: dir }),
      ),
    );
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ areaTag: 'members', imported: 12_000 });
      expect(result.stderr).toBe('imported 5000 messages …\nimported 10000 messages …\nimported 12000 messages …\n');
    }
    const stored = messagesIn('members');
    expect(stored).toHaveLength(24_000);
    const subjectOf = new Map(stored.map((message) => [message.id, message.subject]));
    for (const prefix of ['x', 'y']) {
      const own = stored.filter((message) => message.subject.startsWith(prefix));
      // Each file's lines in its own order, whatever the other's batches took between them.
      expect(own.map((message) => message.subject)).toEqual(
        Array.from({ length: 12_000 }, (_, index) => `${prefix}${index + 1}`),
      );
      for (const [index, message] of own.entries()) {
        const line = index + 1;
        expect(message.replyTo === null ? null : subjectOf.get(message.replyTo)).toBe(
          line % 10 === 0 ? `${prefix}${line - 7}` : null,
        );
      }
    }
    expect(
      readBoard(
        `SELECT (SELECT message_count FROM message_areas WHERE area_tag = 'members') AS areaCount,
                (SELECT live_count FROM message_live_counts WHERE area_tag = 'members' AND node = 0) AS liveCount,
                (SELECT count(*) FROM message_search JOIN messages ON messages.id = message_search.rowid
                  WHERE message_search MATCH 'body' AND messages.area_tag = 'members') AS indexed`,
      ),
    ).toEqual([{ areaCount: 24_000, liveCount: 24_000, indexed: 24_000 }]);
  });

  it('counts the batch that was committing when a bad line stopped the next', async () => {
    const lines = Array.from({ length: 10_002 }, (_, index) => good(`n${index + 1}`));
    lines.push(good('bad', { replyTo: 10_004 }));
    const file = path.join(dir, 'bad-third-batch.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await runBaud(['message', 'import', 'chatter', file, '--config', config], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'imported 5000 messages …\nimported 10000 messages …\n' +
        'baud: line 10003: replyTo must be the line number of an earlier line ' +
        '(nothing from its batch was imported; 10000 earlier messages were)\n',
    );
    expect(messagesIn('chatter')).toHaveLength(10_000);
  });
});
