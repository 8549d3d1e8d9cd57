import { sql } from 'kysely';
import type { Database, Executor } from '../db/database.js';
import type { Tables } from '../db/schema.js';
import { readSetting, writeSetting } from '../db/settings-store.js';
import { indexFiles } from '../files/file-search-store.js';
import { freeFileName } from '../files/file-store.js';
import { importedMailEntries, MAIL_AREA_TAG } from '../mail/mail-store.js';
import { addToLiveCounts } from '../messages/message-live-counts.js';
import { threadPlacesOf } from '../messages/message-reads.js';
import { insertIndexedMessages } from '../messages/message-search-store.js';
import type { ThreadPlace } from '../messages/message-thread.js';
import { mergePendingEntries, mergePendingEntriesBeside } from '../search/full-text-index.js';
import { usernameKey } from '../users/username.js';
import type { ImportedFile, ImportedUser } from './enigma-mapping.js';

/** The settings row that ties a board to the ENiGMA½ board it was moved from. */
const SOURCE_SETTING = 'enigmaImportSource';

/** Tables whose ids the import keeps from ENiGMA½, so the id counters must move past them. */
export const KEPT_ID_TABLES = ['users', 'messages', 'files', 'apiKeys'] as const;
export type KeptIdTable = (typeof KEPT_ID_TABLES)[number];

/** Multi-row inserts of at most 500 rows stay under both databases' parameter limits. */
const ROWS_PER_INSERT = 500;

async function insertInChunks<T>(rows: readonly T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await insert(rows.slice(start, start + ROWS_PER_INSERT));
  }
}

/** What `insertUsers` did, and which ids are the imported accounts (the only ones keys and posts attach to). */
export interface InsertedUsers {
  readonly added: number;
  readonly alreadyThere: number;
  /** The id is another account's (made on the board between runs). */
  readonly idTaken: number;
  /** The name is another account's. */
  readonly nameTaken: number;
  /** Ids whose stored account is the ENiGMA½ user of that id. */
  readonly ownIds: ReadonlySet<number>;
}
const SNAKE_NAMES: Readonly<Record<(typeof KEPT_ID_TABLES)[number], string>> = {
  users: 'users',
  messages: 'messages',
  files: 'files',
  apiKeys: 'api_keys',
};

/** An ENiGMA½ user's two-factor login as the board keeps it: on from the start, as it was there. */
export interface ImportedTwoFactor {
  /** When the import carried it over (ENiGMA½ keeps no date of its own). */
  readonly enrolledAt: string;
  readonly sealedSecret: string;
  readonly algorithm: string;
  readonly recoveryCodeHashes: readonly string[];
}

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

export interface EnigmaImportStore {
  /** The source this board was imported from, or null (a new board, or one never imported into). */
  importedFrom(): Promise<string | null>;
  markImportedFrom(source: string): Promise<void>;
  /** Whether the board holds any user, message or file (an import goes only into an empty board). */
  hasContent(): Promise<boolean>;
  /**
   * Inserts the users not there yet with their groups. A user is there when its id holds an
   * account of the same name; an id or a name held by another account (made on the board
   * between runs) is left alone and counted, never merged.
   */
  insertUsers(
    users: ReadonlyArray<{
      user: ImportedUser;
      passwordHash: string;
      groups: readonly string[];
      twoFactor: ImportedTwoFactor | null;
    }>,
  ): Promise<InsertedUsers>;
  /**
   * Inserts the API keys whose hash is not there yet; returns how many were new and how many
   * were left out because their id is another key's (made on the board between runs).
   */
  insertApiKeys(keys: ReadonlyArray<Omit<Tables['apiKeys'], 'id'> & { id: number }>): Promise<{
    added: number;
    idTaken: number;
  }>;
  /** The UUIDs of the messages of this id range the board holds already, by id. */
  existingMessageUuids(fromId: number, toId: number): Promise<Map<number, string>>;
  /** Thread places of messages stored earlier (the parents of a batch's replies). */
  threadPlacesOf(ids: readonly number[]): Promise<Map<number, ThreadPlace & { areaTag: string }>>;
  /** One batch of messages, their words in the search index and their live counts, in one transaction. */
  insertMessages(rows: readonly ImportedMessageRow[]): Promise<void>;
  /** The SHA-256 of every stored file, by area (baud keeps one copy of some bytes per area). */
  fileContents(): Promise<Map<string, Set<string>>>;
  fileExists(fileId: number): Promise<boolean>;
  /**
   * A file's row and index entry, in one transaction with `placeBytes`, which puts its bytes
   * in the store: if that fails the row never appears, and a row never lacks its bytes.
   * ENiGMA½ allows two files of one name in an area, baud does not: the second gets a free
   * ` (n)` name, as an upload would. Returns the name stored.
   */
  insertFile(file: ImportedFile & { byteSize: number }, placeBytes: () => Promise<void>): Promise<string>;
  /** Adds the logins not recorded yet as calls (last callers); the number added. */
  insertCalls(calls: ReadonlyArray<{ userId: number; calledAt: string }>): Promise<number>;
  /** Adds the new-scan pointers a user has not set on the board. */
  insertPointers(pointers: ReadonlyArray<Tables['messagePointers']>): Promise<void>;
  /** Recomputes every served area's and every file area's counters from their rows (live messages, files). */
  recountAreas(servedAreas: readonly string[]): Promise<void>;
  /**
   * Moves each id counter past `sourceMaxIds` (at the start of a run: the ENiGMA½ board's
   * highest ids, so a post made while or after importing never takes one) and past the
   * highest stored id; never backwards.
   */
  advanceIdCounters(sourceMaxIds?: Partial<Record<KeptIdTable, number>>): Promise<void>;
  /** Up-to-date planner statistics and search indexes after a bulk load (PostgreSQL). */
  analyze(): Promise<void>;
}

/**
 * Every query of `baud import enigma`. Inserts are keyed by the ids (or key hashes) ENiGMA½
 * gave, and skip what is there already: a second run, or a run after an interrupted one,
 * adds exactly what is missing. Counters are recomputed from the rows at the end rather than
 * added to, for the same reason.
 */
export function createEnigmaImportStore(database: Database): EnigmaImportStore {
  const { db, dialect } = database;
  // What each batch of messages leaves pending in the search index is merged beside the next.
  const messageIndexMerges = mergePendingEntriesBeside(db, dialect, 'message_search');

  return {
    importedFrom: async () => (await readSetting(db, SOURCE_SETTING)) ?? null,

    markImportedFrom: (source) => writeSetting(db, SOURCE_SETTING, source),

    async hasContent() {
      const [user, message, file] = await Promise.all([
        db.selectFrom('users').select('id').limit(1).executeTakeFirst(),
        db.selectFrom('messages').select('id').limit(1).executeTakeFirst(),
        db.selectFrom('files').select('id').limit(1).executeTakeFirst(),
      ]);
      return Boolean(user || message || file);
    },

    async insertUsers(users) {
      return db.transaction().execute(async (trx) => {
        const stored = await trx.selectFrom('users').select(['id', 'usernameKey']).execute();
        const keyOfId = new Map(stored.map((row) => [row.id, row.usernameKey]));
        const idOfKey = new Map(stored.map((row) => [row.usernameKey, row.id]));
        const ownIds = new Set<number>();
        let idTaken = 0;
        let nameTaken = 0;
        let alreadyThere = 0;
        const fresh = users.filter(({ user }) => {
          const key = usernameKey(user.username);
          const storedKey = keyOfId.get(user.id);
          if (storedKey === key) {
            ownIds.add(user.id);
            alreadyThere += 1;
            return false;
          }
          if (storedKey !== undefined) idTaken += 1;
          else if (idOfKey.has(key)) nameTaken += 1;
          else return true;
          return false;
        });
        for (const { user, passwordHash, groups, twoFactor } of fresh) {
          ownIds.add(user.id);
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
          if (twoFactor) {
            const { enrolledAt, sealedSecret, algorithm, recoveryCodeHashes } = twoFactor;
            await trx
              .insertInto('totpCredentials')
              .values({
                userId: user.id,
                sealedSecret,
                algorithm,
                enrolledAt,
                confirmedAt: enrolledAt,
                lastUsedStep: null,
              })
              .execute();
            // One code may stand twice in ENiGMA½'s list: it is one code here.
            const hashes = [...new Set(recoveryCodeHashes)];
            if (hashes.length > 0) {
              await trx
                .insertInto('totpRecoveryCodes')
                .values(hashes.map((codeHash) => ({ userId: user.id, codeHash })))
                .execute();
            }
          }
        }
        return { added: fresh.length, alreadyThere, idTaken, nameTaken, ownIds };
      });
    },

    async insertApiKeys(keys) {
      return db.transaction().execute(async (trx) => {
        const stored = await trx.selectFrom('apiKeys').select(['id', 'keyHash']).execute();
        const hashes = new Set(stored.map((row) => row.keyHash));
        const ids = new Set(stored.map((row) => row.id));
        const fresh = keys.filter((key) => !hashes.has(key.keyHash));
        const free = fresh.filter((key) => !ids.has(key.id));
        await insertInChunks(free, (chunk) => trx.insertInto('apiKeys').values(chunk).execute());
        return { added: free.length, idTaken: fresh.length - free.length };
      });
    },

    async existingMessageUuids(fromId, toId) {
      const rows = await db
        .selectFrom('messages')
        .select(['id', 'uuid'])
        .where('id', '>=', fromId)
        .where('id', '<=', toId)
        .execute();
      return new Map(rows.map((row) => [row.id, row.uuid]));
    },

    threadPlacesOf: (ids) => threadPlacesOf(db, ids),

    async insertMessages(rows) {
      if (rows.length === 0) return;
      await db.transaction().execute(async (trx) => {
        await insertIndexedMessages(trx, dialect, rows, () =>
          insertInChunks(rows, (chunk) => trx.insertInto('messages').values(chunk).execute()),
        );
        await addToLiveCounts(trx, rows, 1);
        // Private mail is served to the two people it is between: their mailbox entries go in with it.
        const mails = rows.filter((row) => row.areaTag === MAIL_AREA_TAG);
        if (mails.length === 0) return;
        const keys = [...new Set(mails.map((mail) => usernameKey(mail.toUserName)))];
        const recipients = await trx
          .selectFrom('users')
          .select(['id', 'usernameKey'])
          .where('usernameKey', 'in', keys)
          .execute();
        const entries = importedMailEntries(mails, new Map(recipients.map((user) => [user.usernameKey, user.id])));
        await insertInChunks(entries, (chunk) => trx.insertInto('mailboxEntries').values(chunk).execute());
      });
      messageIndexMerges.nudge();
    },

    async fileContents() {
      const contents = new Map<string, Set<string>>();
      for (const row of await db.selectFrom('files').select(['areaTag', 'sha256']).execute()) {
        const area = contents.get(row.areaTag) ?? new Set<string>();
        area.add(row.sha256);
        contents.set(row.areaTag, area);
      }
      return contents;
    },

    async fileExists(fileId) {
      return Boolean(await db.selectFrom('files').select('id').where('id', '=', fileId).executeTakeFirst());
    },

    async insertFile(file, placeBytes) {
      return db.transaction().execute(async (trx) => {
        const fileName = await freeFileName(trx, file.areaTag, file.fileName);
        await trx
          .insertInto('files')
          .values({ ...file, fileName, hashTags: JSON.stringify(file.hashTags) })
          .execute();
        await indexFiles(trx, dialect, [{ ...file, fileName }]);
        await placeBytes();
        return fileName;
      });
    },

    async insertCalls(calls) {
      return db.transaction().execute(async (trx) => {
        const existing = new Set(
          (await trx.selectFrom('calls').select(['userId', 'calledAt']).execute()).map(
            (row) => `${row.userId}@${row.calledAt}`,
          ),
        );
        const fresh = calls.filter((call) => !existing.has(`${call.userId}@${call.calledAt}`));
        await insertInChunks(fresh, (chunk) => trx.insertInto('calls').values(chunk).execute());
        return fresh.length;
      });
    },

    async insertPointers(pointers) {
      for (const pointer of pointers) {
        await db
          .insertInto('messagePointers')
          .values(pointer)
          .onConflict((conflict) => conflict.columns(['userId', 'areaTag']).doNothing())
          .execute();
      }
    },

    async recountAreas(servedAreas) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('messageAreas').execute();
        // Served areas only: private mail and forgotten areas stay out of the board's statistics.
        if (servedAreas.length > 0) {
          await sql`INSERT INTO message_areas (area_tag, message_count, last_message_at)
                    SELECT area_tag, COUNT(*), MAX(timestamp) FROM messages
                     WHERE deleted_at IS NULL AND area_tag IN (${sql.join(servedAreas)}) GROUP BY area_tag`.execute(
            trx,
          );
        }
        await trx.deleteFrom('fileAreas').execute();
        await sql`INSERT INTO file_areas (area_tag, file_count, total_bytes)
                  SELECT area_tag, COUNT(*), SUM(byte_size) FROM files GROUP BY area_tag`.execute(trx);
      });
    },

    // SQLite's AUTOINCREMENT follows explicit ids by itself, so there only the source's ids need saying.
    async advanceIdCounters(sourceMaxIds = {}) {
      for (const table of KEPT_ID_TABLES) {
        await advanceIdCounter(db, dialect, SNAKE_NAMES[table], sourceMaxIds[table] ?? 0);
      }
    },

    async analyze() {
      await messageIndexMerges.finish();
      await mergePendingEntries(db, dialect, 'file_search');
      if (dialect === 'postgres') await sql`ANALYZE users, messages, message_areas, message_search, files`.execute(db);
    },
  };
}

async function advanceIdCounter(db: Executor, dialect: Database['dialect'], table: string, atLeast: number) {
  if (dialect === 'postgres') {
    const named = await sql<{ name: string }>`SELECT pg_get_serial_sequence(${table}, 'id') AS name`.execute(db);
    const sequence = named.rows[0]?.name;
    if (!sequence) return;
    // The name comes from PostgreSQL itself (schema-qualified, quoted where needed).
    const state = await sql<{
      last: string;
      called: boolean;
    }>`SELECT last_value AS last, is_called AS called FROM ${sql.raw(sequence)}`.execute(db);
    const row = state.rows[0];
    // The last id handed out (a fresh sequence has handed out none).
    const current = row ? Number(row.last) - (row.called ? 0 : 1) : 0;
    const stored = await sql<{ max: string | null }>`SELECT MAX(id) AS max FROM ${sql.table(table)}`.execute(db);
    const wanted = Math.max(atLeast, Number(stored.rows[0]?.max ?? 0));
    if (wanted > current) await sql`SELECT setval(${sequence}::regclass, ${wanted}, true)`.execute(db);
    return;
  }
  await sql`INSERT INTO sqlite_sequence (name, seq) SELECT ${table}, 0
            WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ${table})`.execute(db);
  await sql`UPDATE sqlite_sequence SET seq = MAX(seq, ${atLeast}) WHERE name = ${table}`.execute(db);
}
