import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { Tables } from '../db/schema.js';
import { indexFiles } from '../files/file-search-index.js';
import { indexMessages } from '../messages/message-search-index.js';
import { threadPlacesOf } from '../messages/message-store.js';
import { usernameKey } from '../users/username.js';
import type { ImportedFile, ImportedUser } from './enigma-mapping.js';

/** The settings row that ties a board to the ENiGMA½ board it was moved from. */
const SOURCE_SETTING = 'enigmaImportSource';

/** Tables whose ids the import keeps from ENiGMA½, so the id counters must move past them afterwards. */
const KEPT_ID_TABLES = ['users', 'messages', 'files', 'apiKeys'] as const;
const SNAKE_NAMES: Readonly<Record<(typeof KEPT_ID_TABLES)[number], string>> = {
  users: 'users',
  messages: 'messages',
  files: 'files',
  apiKeys: 'api_keys',
};

export interface ImportedMessageRow {
  readonly id: number;
  readonly uuid: string;
  readonly areaTag: string;
  readonly replyToMessageId: number | null;
  readonly fromUserId: number | null;
  readonly fromUserName: string;
  readonly toUserName: string;
  readonly subject: string;
  readonly body: string;
  readonly timestamp: string;
  readonly network: string;
  readonly threadRootId: number;
  readonly threadPath: string;
}

/**
 * Every query of `baud import enigma`. Inserts are keyed by the ids (or key hashes) ENiGMA½
 * gave, and skip what is there already: a second run, or a run after an interrupted one,
 * adds exactly what is missing. Counters are recomputed from the rows at the end rather than
 * added to, for the same reason.
 */
export function createEnigmaImportStore(database: Database) {
  const { db, dialect } = database;

  return {
    /** The source this board was imported from, or null (a new board, or one never imported into). */
    async importedFrom(): Promise<string | null> {
      const row = await db.selectFrom('settings').select('value').where('key', '=', SOURCE_SETTING).executeTakeFirst();
      return row?.value ?? null;
    },

    async markImportedFrom(source: string): Promise<void> {
      await db
        .insertInto('settings')
        .values({ key: SOURCE_SETTING, value: source })
        .onConflict((conflict) => conflict.column('key').doUpdateSet({ value: source }))
        .execute();
    },

    /** Whether the board holds any user, message or file (an import goes only into an empty board). */
    async hasContent(): Promise<boolean> {
      const [user, message, file] = await Promise.all([
        db.selectFrom('users').select('id').limit(1).executeTakeFirst(),
        db.selectFrom('messages').select('id').limit(1).executeTakeFirst(),
        db.selectFrom('files').select('id').limit(1).executeTakeFirst(),
      ]);
      return Boolean(user || message || file);
    },

    /** Inserts the users not there yet with their groups; returns how many were new. */
    async insertUsers(users: ReadonlyArray<{ user: ImportedUser; passwordHash: string; groups: readonly string[] }>) {
      return db.transaction().execute(async (trx) => {
        const existing = new Set((await trx.selectFrom('users').select('id').execute()).map((row) => row.id));
        const fresh = users.filter(({ user }) => !existing.has(user.id));
        for (const { user, passwordHash, groups } of fresh) {
          await trx
            .insertInto('users')
            .values({
              ...user,
              usernameKey: usernameKey(user.username),
              passwordHash,
              credentialsChangedAt: user.createdAt,
            })
            .execute();
          if (groups.length > 0) {
            await trx
              .insertInto('userGroups')
              .values(groups.map((groupName) => ({ userId: user.id, groupName })))
              .execute();
          }
        }
        return fresh.length;
      });
    },

    async userIds(): Promise<Set<number>> {
      return new Set((await db.selectFrom('users').select('id').execute()).map((row) => row.id));
    },

    /** Inserts the API keys whose hash is not there yet; returns how many were new. */
    async insertApiKeys(keys: ReadonlyArray<Omit<Tables['apiKeys'], 'id'> & { id: number }>): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const existing = new Set(
          (await trx.selectFrom('apiKeys').select('keyHash').execute()).map((row) => row.keyHash),
        );
        const fresh = keys.filter((key) => !existing.has(key.keyHash));
        if (fresh.length > 0) await trx.insertInto('apiKeys').values(fresh).execute();
        return fresh.length;
      });
    },

    /** Which of these message ids the board holds already. */
    async existingMessageIds(fromId: number, toId: number): Promise<Set<number>> {
      const rows = await db
        .selectFrom('messages')
        .select('id')
        .where('id', '>=', fromId)
        .where('id', '<=', toId)
        .execute();
      return new Set(rows.map((row) => row.id));
    },

    /** Thread places of messages stored earlier (the parents of a batch's replies). */
    threadPlacesOf: (ids: readonly number[]) => threadPlacesOf(db, ids),

    /** One batch of messages and their words in the search index, in one transaction. */
    async insertMessages(rows: readonly ImportedMessageRow[]): Promise<void> {
      if (rows.length === 0) return;
      await db.transaction().execute(async (trx) => {
        // Multi-row inserts of at most 500 rows stay under both databases' parameter limits.
        for (let start = 0; start < rows.length; start += 500) {
          await trx
            .insertInto('messages')
            .values(rows.slice(start, start + 500))
            .execute();
        }
        await indexMessages(trx, dialect, rows);
      });
    },

    /** The file of the area that holds these bytes already, if any (baud keeps one copy per area). */
    async fileWithContent(areaTag: string, sha256: string): Promise<number | null> {
      const row = await db
        .selectFrom('files')
        .select('id')
        .where('areaTag', '=', areaTag)
        .where('sha256', '=', sha256)
        .executeTakeFirst();
      return row?.id ?? null;
    },

    async fileExists(fileId: number): Promise<boolean> {
      return Boolean(await db.selectFrom('files').select('id').where('id', '=', fileId).executeTakeFirst());
    },

    /**
     * A file's row and index entry, in one transaction with `placeBytes`, which puts its bytes
     * in the store: if that fails the row never appears, and a row never lacks its bytes.
     */
    async insertFile(file: ImportedFile & { byteSize: number }, placeBytes: () => Promise<void>): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('files')
          .values({ ...file, hashTags: JSON.stringify(file.hashTags) })
          .execute();
        await indexFiles(trx, dialect, [file]);
        await placeBytes();
      });
    },

    /** Adds the logins not recorded yet as calls (last callers). */
    async insertCalls(calls: ReadonlyArray<{ userId: number; calledAt: string }>): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const existing = new Set(
          (await trx.selectFrom('calls').select(['userId', 'calledAt']).execute()).map(
            (row) => `${row.userId}@${row.calledAt}`,
          ),
        );
        const fresh = calls.filter((call) => !existing.has(`${call.userId}@${call.calledAt}`));
        if (fresh.length > 0) await trx.insertInto('calls').values(fresh).execute();
        return fresh.length;
      });
    },

    async insertPointers(pointers: ReadonlyArray<Tables['messagePointers']>): Promise<void> {
      for (const pointer of pointers) {
        await db
          .insertInto('messagePointers')
          .values(pointer)
          .onConflict((conflict) => conflict.columns(['userId', 'areaTag']).doNothing())
          .execute();
      }
    },

    /** Recomputes every area's and file area's counters from their rows (live messages, files). */
    async recountAreas(): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('messageAreas').execute();
        await sql`INSERT INTO message_areas (area_tag, message_count, last_message_at)
                  SELECT area_tag, COUNT(*), MAX(timestamp) FROM messages WHERE deleted_at IS NULL GROUP BY area_tag`.execute(
          trx,
        );
        await trx.deleteFrom('fileAreas').execute();
        await sql`INSERT INTO file_areas (area_tag, file_count, total_bytes)
                  SELECT area_tag, COUNT(*), SUM(byte_size) FROM files GROUP BY area_tag`.execute(trx);
      });
    },

    /** Moves each id counter past the highest kept id, so the next post or upload gets a new id. */
    async advanceIdCounters(): Promise<void> {
      for (const table of KEPT_ID_TABLES) {
        const name = SNAKE_NAMES[table];
        if (dialect === 'postgres') {
          await sql`SELECT setval(pg_get_serial_sequence(${name}, 'id'), GREATEST((SELECT COALESCE(MAX(id), 0) FROM ${sql.table(name)}), 1), (SELECT COUNT(*) > 0 FROM ${sql.table(name)}))`.execute(
            db,
          );
        } else {
          await sql`INSERT INTO sqlite_sequence (name, seq) SELECT ${name}, COALESCE(MAX(id), 0) FROM ${sql.table(name)}
                    WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ${name})`.execute(db);
          await sql`UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT COALESCE(MAX(id), 0) FROM ${sql.table(name)}))
                    WHERE name = ${name}`.execute(db);
        }
      }
    },

    /** Up-to-date planner statistics after a bulk load (PostgreSQL). */
    async analyze(): Promise<void> {
      if (dialect === 'postgres') await sql`ANALYZE users, messages, message_areas, message_search, files`.execute(db);
    },
  };
}

export type EnigmaImportStore = ReturnType<typeof createEnigmaImportStore>;
