import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { Database, Executor } from '../../src/db/database.js';
import { createFileStore, type NewFile } from '../../src/files/file-store.js';
import { createIdentityChanges } from '../../src/identity-changes.js';
import { createMessageStore } from '../../src/messages/message-store.js';
import { createSearchBudget } from '../../src/search/search-budget.js';
import { parseSearchQuery } from '../../src/search/search-query.js';
import { createUserStore } from '../../src/users/user-store.js';
import { type DatabaseAtMigration, openDatabaseAt } from '../support/database-at-migration.js';
import { describeEachDialect } from '../support/test-board.js';

type Row = Readonly<Record<string, string | number | null>>;

const ESC = '\u001b';
const hex = (id: number) => id.toString(16).padStart(8, '0');
const uuidOf = (messageId: number) => `00000000-0000-4000-8000-${String(messageId).padStart(12, '0')}`;

/** A message as 0004 stored it; its thread place is worked out from its reply link, as baud did then. */
interface OldMessage {
  readonly id: number;
  readonly areaTag: string;
  readonly replyTo: number | null;
  readonly subject: string;
  readonly body: string;
  readonly isDeleted?: boolean;
}

/** general: 1 ← 2 ← 3, 1 ← 4 (deleted), 5 alone (deleted); retro: 10 ← 11 ← 12 (deleted) ← 13; netmail: 1000. */
const MESSAGES: readonly OldMessage[] = [
  {
    id: 1,
    areaTag: 'general',
    replyTo: null,
    subject: 'Modem speeds',
    body: `My ${ESC}[1;33mUSRobotics${ESC}[0m Courier does |0714400 baud.`,
  },
  { id: 2, areaTag: 'general', replyTo: 1, subject: 'Re: Modem speeds', body: 'Café crème at the Straße, then ÆRØ.' },
  {
    id: 3,
    areaTag: 'general',
    replyTo: 2,
    subject: 'Re: Re: Modem speeds',
    body: 'Ｆｕｌｌｗｉｄｔｈ ｶﾀｶﾅ 東京 ① m² ΣΊΣΥΦΟΣ ﬁne',
  },
  { id: 4, areaTag: 'general', replyTo: 1, subject: 'Re: Modem speeds', body: 'phantom zeppelin', isDeleted: true },
  { id: 5, areaTag: 'general', replyTo: null, subject: 'Old news', body: 'zeppelin', isDeleted: true },
  {
    id: 10,
    areaTag: 'retro',
    replyTo: null,
    subject: 'Amiga demos',
    body: `${'a'.repeat(80)} ${'demo '.repeat(300)}${'x9'.repeat(40)}`,
  },
  { id: 11, areaTag: 'retro', replyTo: 10, subject: 'Re: Amiga demos', body: 'Second Reality by Future Crew' },
  { id: 12, areaTag: 'retro', replyTo: 11, subject: 'Re: Amiga demos', body: 'spam', isDeleted: true },
  { id: 13, areaTag: 'retro', replyTo: 12, subject: 'Re: Amiga demos', body: 'Still here.' },
  { id: 1000, areaTag: 'netmail', replyTo: null, subject: 'Hello sysop', body: 'Netmail after a gap in the ids.' },
];

const FILES: readonly NewFile[] = [
  {
    areaTag: 'uploads',
    storageTag: 'main',
    fileName: 'DEMO.ZIP',
    desc: `${ESC}[32mA demo${ESC}[0m`,
    descLong: 'Second Reality, |12party version',
    byteSize: 1024,
    sha256: 'a'.repeat(64),
    uploadTimestamp: '2024-01-01T00:00:00.000Z',
    uploadByUserId: null,
    archiveType: 'zip',
    hashTags: ['amiga', 'demoscene'],
    estReleaseYear: 1993,
  },
  {
    areaTag: 'uploads',
    storageTag: 'main',
    fileName: 'Ærø tunes.zip',
    desc: 'Chiptunes',
    descLong: '',
    byteSize: 2048,
    sha256: 'b'.repeat(64),
    uploadTimestamp: '2024-01-02T00:00:00.000Z',
    uploadByUserId: null,
    archiveType: null,
    hashTags: [],
    estReleaseYear: null,
  },
  {
    areaTag: 'docs',
    storageTag: 'main',
    fileName: 'readme.txt',
    desc: 'Read me first',
    descLong: 'Größe: klein',
    byteSize: 10,
    sha256: 'c'.repeat(64),
    uploadTimestamp: '2024-01-03T00:00:00.000Z',
    uploadByUserId: null,
    archiveType: null,
    hashTags: ['info'],
    estReleaseYear: null,
  },
];

const AT = '2024-01-01T00:00:00.000Z';
const user = (id: number, username: string) => ({
  id,
  username,
  username_key: username.toLowerCase(),
  password_hash: `hash-of-${username}`,
  created_at: AT,
  credentials_changed_at: AT,
  post_count: id,
});

function threadPathOf(message: OldMessage): string {
  const parent = MESSAGES.find((candidate) => candidate.id === message.replyTo);
  return parent === undefined ? hex(message.id) : `${threadPathOf(parent)}${hex(message.id)}`;
}

/** Every table a board had at 0004, with rows (ids given, as a board's own rows have them). */
const TABLES: Readonly<Record<string, readonly Row[]>> = {
  settings: [{ key: 'jwtSecret', value: 'old-secret' }],
  users: [user(1, 'Alice'), user(2, 'Bob')],
  user_groups: [
    { user_id: 1, group_name: 'sysops' },
    { user_id: 1, group_name: 'users' },
    { user_id: 2, group_name: 'users' },
  ],
  refresh_families: [
    {
      id: 'family-1',
      user_id: 2,
      created_at: AT,
      expires_at: '2030-01-01T00:00:00.000Z',
      last_activity_at: AT,
      last_action: 'login',
      is_secure: 1,
      client_address: '127.0.0.1',
    },
  ],
  refresh_tokens: [
    { id: 1, family_id: 'family-1', token_hash: 'token-hash', created_at: AT, expires_at: '2030-01-01T00:00:00.000Z' },
  ],
  api_keys: [{ id: 1, user_id: 1, label: 'bot', scope: 'read', key_hash: 'key-hash', created_at: AT }],
  calls: [{ id: 1, user_id: 2, called_at: AT }],
  login_attempts: [{ subject: 'user:bob', window_started_at: AT, attempt_count: 2 }],
  message_areas: [
    { area_tag: 'general', message_count: 3, last_message_at: AT },
    { area_tag: 'retro', message_count: 3, last_message_at: AT },
    { area_tag: 'netmail', message_count: 1, last_message_at: AT },
  ],
  messages: MESSAGES.map((message) => ({
    id: message.id,
    uuid: uuidOf(message.id),
    area_tag: message.areaTag,
    reply_to_message_id: message.replyTo,
    from_user_id: message.id % 2 === 0 ? 2 : 1,
    from_user_name: message.id % 2 === 0 ? 'Bob' : 'Alice',
    to_user_name: 'All',
    subject: message.subject,
    body: message.body,
    timestamp: AT,
    network: '{}',
    deleted_at: message.isDeleted ? '2024-06-01T00:00:00.000Z' : null,
    thread_root_id: Number.parseInt(threadPathOf(message).slice(0, 8), 16),
    thread_path: threadPathOf(message),
  })),
  file_areas: [
    { area_tag: 'uploads', file_count: 2, total_bytes: 3072 },
    { area_tag: 'docs', file_count: 1, total_bytes: 10 },
  ],
  files: FILES.map((file, index) => ({
    id: index + 1,
    area_tag: file.areaTag,
    storage_tag: file.storageTag,
    file_name: file.fileName,
    desc: file.desc,
    desc_long: file.descLong,
    byte_size: file.byteSize,
    sha256: file.sha256,
    upload_timestamp: file.uploadTimestamp,
    upload_by_user_id: file.uploadByUserId,
    archive_type: file.archiveType,
    hash_tags: JSON.stringify(file.hashTags),
    est_release_year: file.estReleaseYear,
  })),
  message_pointers: [
    { user_id: 1, area_tag: 'general', last_read_message_id: 2, updated_at: AT },
    { user_id: 1, area_tag: 'retro', last_read_message_id: 13, updated_at: AT },
    { user_id: 2, area_tag: 'retro', last_read_message_id: 0, updated_at: AT },
  ],
};

const columnsOf = (table: string) => Object.keys(TABLES[table]?.[0] ?? {});

async function insertRows(db: Executor, table: string, rows: readonly Row[]): Promise<void> {
  const columns = columnsOf(table);
  const values = rows.map((row) => sql`(${sql.join(columns.map((column) => row[column] ?? null))})`);
  await sql`INSERT INTO ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})
            VALUES ${sql.join(values)}`.execute(db);
}

/** A table's rows, by the columns the old board wrote (later migrations may add others). */
async function rowsOf(db: Executor, table: string): Promise<unknown[]> {
  const columns = sql.join(columnsOf(table).map((column) => sql.ref(column)));
  const { rows } = await sql`SELECT ${columns} FROM ${sql.table(table)} ORDER BY ${columns}`.execute(db);
  return rows;
}

/**
 * What a search index holds, document by document: the words at each position (SQLite, read
 * through an fts5vocab table: the FTS5 table is contentless), or the tsvector (PostgreSQL).
 */
async function indexOf(database: Database, index: 'message_search' | 'file_search'): Promise<{ id: number }[]> {
  if (database.dialect === 'postgres') {
    const key = sql.ref(index === 'message_search' ? 'message_id' : 'file_id');
    const { rows } = await sql<{ id: number }>`SELECT ${key} AS id, document::text AS document FROM ${sql.table(index)}
                                ORDER BY ${key}`.execute(database.db);
    return rows;
  }
  const vocabulary = sql.table(`temp.${index}_words`);
  await sql`CREATE VIRTUAL TABLE IF NOT EXISTS ${vocabulary} USING fts5vocab(main, ${sql.ref(index)}, instance)`.execute(
    database.db,
  );
  const { rows } = await sql<{
    id: number;
  }>`SELECT doc AS id, "offset", term FROM ${vocabulary} ORDER BY doc, "offset"`.execute(database.db);
  return rows;
}

/** The documents an index holds, by id. */
const documentIds = (entries: readonly { id: number }[]) => [...new Set(entries.map((entry) => Number(entry.id)))];

const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../src/db/migrations');

/**
 * A migration must do the same on every upgrade, so it may not use the app's code, which keeps
 * changing (and importing it made a loop: database → migrations → search index → store → database).
 */
describe('migrations', () => {
  it('import nothing but kysely, node built-ins and files of src/db/migrations', () => {
    const files = readdirSync(MIGRATIONS_DIR, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    expect(files).toContain('0005-search.ts');
    const outside = files.flatMap((file) => {
      const source = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
      return ts
        .preProcessFile(source, true, true)
        .importedFiles.map(({ fileName }) => fileName)
        .filter((specifier) => {
          if (specifier === 'kysely' || isBuiltin(specifier)) return false;
          const target = path.resolve(MIGRATIONS_DIR, path.dirname(file), specifier);
          return !specifier.startsWith('.') || !target.startsWith(`${MIGRATIONS_DIR}${path.sep}`);
        })
        .map((specifier) => `${file} imports ${specifier}`);
    });
    expect(outside).toEqual([]);
  });
});

/**
 * A board made by baud at 0004-threads, with users, threads, deleted messages, files and read
 * pointers, upgraded by every later migration: its rows stay as they were, and what the
 * migrations derive from them (the search indexes, the live counts) is exactly what the code
 * keeps from then on.
 */
describeEachDialect('upgrading a board made at 0004-threads', (dialect) => {
  let old: DatabaseAtMigration;
  let rowsBefore: unknown[][];
  let messages: ReturnType<typeof createMessageStore>;
  const readTables = () => Promise.all(Object.keys(TABLES).map((table) => rowsOf(old.database.db, table)));

  beforeAll(async () => {
    old = await openDatabaseAt(dialect, '0004-threads');
    for (const [table, rows] of Object.entries(TABLES)) await insertRows(old.database.db, table, rows);
    rowsBefore = await readTables();
    await old.upgrade();
    messages = createMessageStore(old.database, systemClock);
  });
  afterAll(() => old?.close());

  it('keeps every row of every table', async () => {
    expect(await readTables()).toEqual(rowsBefore);
  });

  it('finds the old live messages and the old files by their folded words, colour codes left out', async () => {
    const findMessages = async (q: string) => {
      const search = { query: parseSearchQuery(q), from: null, to: null, since: null, until: null };
      const areaTags = ['general', 'retro', 'netmail'];
      const page = await messages.searchMessages(
        { ...search, areaTags, sort: 'newest' },
        { limit: 25, afterKey: null },
        createSearchBudget(),
      );
      return page.items.map((item) => item.messageId);
    };
    expect(await findMessages('modem')).toEqual([3, 2, 1]);
    expect(await findMessages('usrobotics 14400')).toEqual([1]);
    expect(await findMessages('cafe strasse aero')).toEqual([2]);
    expect(await findMessages('zeppelin')).toEqual([]);
    expect(await findMessages('reality')).toEqual([11]);
    expect(await findMessages('sysop')).toEqual([1000]);

    const files = createFileStore(old.database, createUserStore(old.database.db, createIdentityChanges()));
    const findFiles = async (q: string) => {
      const page = await files.searchFiles(parseSearchQuery(q), ['uploads', 'docs'], 'newest', {
        limit: 25,
        afterKey: null,
      });
      return page.items.map((item) => item.fileId);
    };
    expect(await findFiles('demo')).toEqual([1]);
    expect(await findFiles('amiga party')).toEqual([1]);
    expect(await findFiles('aero tunes')).toEqual([2]);
    expect(await findFiles('grosse')).toEqual([3]);
  });

  it('indexes the old live messages word for word as the code does', async () => {
    const migrated = await indexOf(old.database, 'message_search');
    expect(documentIds(migrated)).toEqual(MESSAGES.filter((message) => !message.isDeleted).map(({ id }) => id));
    await messages.rebuildSearchIndex(() => {});
    expect(await indexOf(old.database, 'message_search')).toEqual(migrated);
  });

  it('indexes the old files word for word as the code does when it stores them', async () => {
    const migrated = await indexOf(old.database, 'file_search');
    expect(documentIds(migrated)).toEqual([1, 2, 3]);
    // The same files stored by the code on a new board get the same ids.
    const fresh = await openDatabaseAt(dialect, '0004-threads');
    try {
      await fresh.upgrade();
      const files = createFileStore(fresh.database, createUserStore(fresh.database.db, createIdentityChanges()));
      for (const file of FILES) {
        await files.insertFile(
          file,
          async () => {},
          async () => {},
        );
      }
      expect(await indexOf(fresh.database, 'file_search')).toEqual(migrated);
    } finally {
      await fresh.close();
    }
  });

  it('counts the live messages after any pointer as a plain COUNT does', async () => {
    // A reader of its own, so that the board's own pointers stay as they were for the other checks.
    const now = '2026-01-01T00:00:00.000Z';
    const { id: readerId } = await old.database.db
      .insertInto('users')
      .values({
        id: 99,
        username: 'counter',
        usernameKey: 'counter',
        passwordHash: 'x',
        createdAt: now,
        credentialsChangedAt: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const areaTag of ['general', 'retro', 'netmail', 'nowhere']) {
      for (const pointer of [-1, 0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 999, 1000, 1001]) {
        const { rows } = await sql<{ count: number | string }>`
          SELECT COUNT(*) AS count FROM messages
           WHERE area_tag = ${areaTag} AND deleted_at IS NULL AND id > ${pointer}`.execute(old.database.db);
        await messages.setPointer(readerId, areaTag, pointer, now);
        const counted = (await messages.pointersWithUnread(readerId, [areaTag])).get(areaTag)?.unreadCount;
        expect({ areaTag, pointer, count: counted }).toEqual({ areaTag, pointer, count: Number(rows[0]?.count) });
      }
    }
  });

  it('reads the old threads depth-first, counting live replies only', async () => {
    const thread = async (rootId: number) => {
      const page = await messages.threadPage(rootId, { limit: 25, afterKey: null });
      return page.items.map(({ messageId, depth, replyCount }) => ({ messageId, depth, replyCount }));
    };
    expect(await thread(1)).toEqual([
      { messageId: 1, depth: 0, replyCount: 1 },
      { messageId: 2, depth: 1, replyCount: 1 },
      { messageId: 3, depth: 2, replyCount: 0 },
    ]);
    // 13 answers 12, which is deleted: it stays in its thread, below it.
    expect(await thread(10)).toEqual([
      { messageId: 10, depth: 0, replyCount: 1 },
      { messageId: 11, depth: 1, replyCount: 0 },
      { messageId: 13, depth: 3, replyCount: 0 },
    ]);
    const reply = await messages.findLiveMessage(uuidOf(13));
    expect({ threadRootId: reply?.threadRootId, replyToMessageId: reply?.replyToMessageId }).toEqual({
      threadRootId: 10,
      replyToMessageId: 12,
    });
  });
});
