import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import Hjson from 'hjson';
import { ConfigError } from '../config/config-error.js';

/**
 * Columns of a row that hold something other than text or NULL where ENiGMA½ writes text. SQLite
 * keeps whatever a row was written with, whatever the column's declared type, so a hostile or
 * broken board may hold a BLOB or a number there; such a column reads as "" and is named here,
 * and the import leaves the row out.
 */
interface HasNotText {
  readonly notText: readonly string[];
}

/** An ENiGMA½ user: its row, every property (all text), its groups. */
export interface EnigmaUser extends HasNotText {
  readonly id: number;
  readonly userName: string;
  readonly properties: ReadonlyMap<string, string>;
  readonly groups: readonly string[];
}

export interface EnigmaApiKey extends HasNotText {
  readonly id: number;
  readonly userId: number;
  readonly keyHash: string;
  readonly label: string;
  readonly scope: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly isRevoked: boolean;
}

/** One `message_meta` row. */
export interface EnigmaMessageMeta {
  readonly category: string;
  readonly name: string;
  readonly value: string;
}

export interface EnigmaMessage extends HasNotText {
  readonly id: number;
  readonly areaTag: string;
  readonly uuid: string;
  readonly replyToMessageId: number | null;
  readonly toUserName: string;
  readonly fromUserName: string;
  readonly subject: string;
  readonly body: string;
  readonly timestamp: string;
  readonly meta: readonly EnigmaMessageMeta[];
}

export interface EnigmaFile extends HasNotText {
  readonly id: number;
  readonly areaTag: string;
  readonly sha256: string;
  readonly fileName: string;
  readonly storageTag: string;
  readonly storageRelPath: string | null;
  readonly desc: string;
  readonly descLong: string;
  readonly uploadTimestamp: string;
  /** `file_meta` by name; multi-valued names keep their first value. */
  readonly meta: ReadonlyMap<string, string>;
  readonly hashTags: readonly string[];
}

export interface EnigmaLogin {
  readonly userId: number;
  readonly timestamp: string;
}

export interface EnigmaPointer {
  readonly userId: number;
  readonly areaTag: string;
  readonly messageId: number;
}

/** The parts of ENiGMA½'s `config.hjson` a move to baud needs, as ENiGMA½ itself reads them. */
export interface EnigmaConfig {
  readonly raw: Readonly<Record<string, unknown>>;
  readonly boardName: string | null;
  readonly messageConferences: Readonly<Record<string, unknown>>;
  readonly fileBase: Readonly<Record<string, unknown>>;
  /** `contentServers.web.restApi`: where ENiGMA½'s REST API code reads its public allowlist. */
  readonly restApi: Readonly<Record<string, unknown>>;
}

const DATABASES = ['user', 'message', 'file', 'system'] as const;
type DatabaseName = (typeof DATABASES)[number];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a column ENiGMA½ fills with text: a string as it is, NULL as null, anything else (a
 * BLOB, a number) as "" with the column's name added to `notText`.
 */
function textIn(value: unknown, column: string, notText: string[]): string | null {
  if (typeof value === 'string' || value === null || value === undefined) return value ?? null;
  notText.push(column);
  return '';
}

/** An integer column (an id): anything but a number reads as NaN, which no id check accepts. */
const integerIn = (value: unknown): number => (typeof value === 'number' ? value : Number.NaN);

const recordAt = (source: unknown, ...keys: string[]): Record<string, unknown> => {
  let value = source;
  for (const key of keys) value = isRecord(value) ? value[key] : undefined;
  return isRecord(value) ? value : {};
};

/**
 * An ENiGMA½ board on disk, opened read-only: `config/config.hjson`, `db/{user,message,file,
 * system}.sqlite3` and the file base. Nothing here ever writes to it, so a running ENiGMA½
 * board can be read (its WAL is honoured by SQLite) and a failed move leaves it as it was.
 */
export class EnigmaSource {
  readonly config: EnigmaConfig;
  private readonly databases: Record<DatabaseName, Database.Database>;

  private constructor(
    readonly dir: string,
    config: EnigmaConfig,
    databases: Record<DatabaseName, Database.Database>,
  ) {
    this.config = config;
    this.databases = databases;
  }

  static open(dir: string): EnigmaSource {
    const root = path.resolve(dir);
    const configPath = path.join(root, 'config', 'config.hjson');
    if (!existsSync(configPath)) {
      throw new ConfigError(
        'enigma.invalid-source',
        `${configPath} not found: give the ENiGMA½ installation directory (it holds config/ and db/)`,
      );
    }
    let raw: unknown;
    try {
      raw = Hjson.parse(readFileSync(configPath, 'utf8'));
    } catch (error) {
      throw new ConfigError('enigma.invalid-source', `${configPath} is not valid HJSON: ${(error as Error).message}`);
    }
    const opened: Partial<Record<DatabaseName, Database.Database>> = {};
    try {
      for (const name of DATABASES) {
        const file = path.join(root, 'db', `${name}.sqlite3`);
        if (!existsSync(file))
          throw new ConfigError('enigma.invalid-source', `${file} not found: is ${root} an ENiGMA½ installation?`);
        opened[name] = new Database(file, { readonly: true, fileMustExist: true });
      }
    } catch (error) {
      for (const database of Object.values(opened)) database.close();
      throw error;
    }
    const general = recordAt(raw, 'general');
    const config: EnigmaConfig = {
      raw: isRecord(raw) ? raw : {},
      boardName: typeof general.boardName === 'string' ? general.boardName : null,
      messageConferences: recordAt(raw, 'messageConferences'),
      fileBase: recordAt(raw, 'fileBase'),
      restApi: recordAt(raw, 'contentServers', 'web', 'restApi'),
    };
    return new EnigmaSource(root, config, opened as Record<DatabaseName, Database.Database>);
  }

  close(): void {
    for (const database of Object.values(this.databases)) database.close();
  }

  /**
   * Where a storage tag's files are: ENiGMA½ resolves `fileBase.storageTags.<tag>` against
   * `fileBase.areaStoragePrefix`, which defaults to `<install>/file_base/`.
   */
  storageDirectory(storageTag: string): string | null {
    const tags = recordAt(this.config.fileBase, 'storageTags');
    const dir = tags[storageTag];
    if (typeof dir !== 'string') return null;
    const prefix = this.config.fileBase.areaStoragePrefix;
    const base = typeof prefix === 'string' ? path.resolve(this.dir, prefix) : path.join(this.dir, 'file_base');
    return path.resolve(base, dir);
  }

  /** Every message area of the configuration's conferences. */
  messageAreaTags(): Set<string> {
    return new Set(
      Object.values(this.config.messageConferences).flatMap((conference) => Object.keys(recordAt(conference, 'areas'))),
    );
  }

  /** Every file area of the configuration. */
  fileAreaTags(): Set<string> {
    return new Set(Object.keys(recordAt(this.config.fileBase, 'areas')));
  }

  users(): EnigmaUser[] {
    const db = this.databases.user;
    const properties = new Map<number, Map<string, string>>();
    const notText = new Map<number, string[]>();
    const notTextOf = (userId: number) => {
      const list = notText.get(userId) ?? [];
      notText.set(userId, list);
      return list;
    };
    for (const row of db.prepare('SELECT user_id, prop_name, prop_value FROM user_property').iterate() as Iterable<{
      user_id: number;
      prop_name: unknown;
      prop_value: unknown;
    }>) {
      const props = properties.get(row.user_id) ?? new Map<string, string>();
      const name = textIn(row.prop_name, 'user_property.prop_name', notTextOf(row.user_id));
      const value = textIn(row.prop_value, `user_property ${name ?? ''}`, notTextOf(row.user_id));
      if (name) props.set(name, value ?? '');
      properties.set(row.user_id, props);
    }
    const groups = new Map<number, string[]>();
    for (const row of db
      .prepare('SELECT user_id, group_name FROM user_group_member ORDER BY group_name')
      .all() as Array<{ user_id: number; group_name: unknown }>) {
      const group = textIn(row.group_name, 'user_group_member.group_name', notTextOf(row.user_id));
      if (group) groups.set(row.user_id, [...(groups.get(row.user_id) ?? []), group]);
    }
    return (
      db.prepare('SELECT id, user_name FROM user ORDER BY id').all() as Array<{ id: unknown; user_name: unknown }>
    ).map((row) => {
      const id = integerIn(row.id);
      const rowNotText = [...(notText.get(id) ?? [])];
      return {
        id,
        userName: textIn(row.user_name, 'user_name', rowNotText) ?? '',
        properties: properties.get(id) ?? new Map(),
        groups: groups.get(id) ?? [],
        notText: rowNotText,
      };
    });
  }

  apiKeys(): EnigmaApiKey[] {
    const rows = this.databases.user
      .prepare(
        'SELECT id, user_id, key_hash, label, scope, created_at, last_used_at, revoked FROM api_keys ORDER BY id',
      )
      .all() as Array<Record<string, unknown>>;
    return rows.map((row) => {
      const notText: string[] = [];
      return {
        id: integerIn(row.id),
        userId: integerIn(row.user_id),
        keyHash: textIn(row.key_hash, 'key_hash', notText) ?? '',
        label: textIn(row.label, 'label', notText) ?? '',
        scope: textIn(row.scope, 'scope', notText) ?? '',
        createdAt: textIn(row.created_at, 'created_at', notText) ?? '',
        lastUsedAt: textIn(row.last_used_at, 'last_used_at', notText),
        isRevoked: row.revoked !== 0,
        notText,
      };
    });
  }

  /**
   * The highest message id from 1 to `highestId` (0 without such messages): baud's counter moves
   * past it before importing. Ids are compared in SQL: past 2^53 JavaScript numbers lose digits.
   */
  maxMessageId(highestId: number): number {
    const row = this.databases.message
      .prepare('SELECT MAX(message_id) AS id FROM message WHERE message_id BETWEEN 1 AND ?')
      .get(highestId) as { id: number | null };
    return row.id ?? 0;
  }

  /** Every message, whatever its id. */
  messageCount(): number {
    return (this.databases.message.prepare('SELECT COUNT(*) AS n FROM message').get() as { n: number }).n;
  }

  /** The messages whose ids are from 1 to `highestId` (the only ones `messageBatches` reads). */
  messageCountUpTo(highestId: number): number {
    return (
      this.databases.message
        .prepare('SELECT COUNT(*) AS n FROM message WHERE message_id BETWEEN 1 AND ?')
        .get(highestId) as { n: number }
    ).n;
  }

  /** Messages of ids `afterId` + 1 to `highestId` in id order, `batchSize` at a time, each with its meta rows. */
  *messageBatches(batchSize: number, highestId: number, afterId = 0): Generator<EnigmaMessage[]> {
    const db = this.databases.message;
    const page = db.prepare(
      `SELECT message_id, area_tag, message_uuid, reply_to_message_id, to_user_name, from_user_name,
              subject, message, modified_timestamp
         FROM message WHERE message_id > ? AND message_id <= ? ORDER BY message_id LIMIT ?`,
    );
    const metaOf = db.prepare(
      `SELECT message_id, meta_category, meta_name, meta_value FROM message_meta
        WHERE message_id BETWEEN ? AND ? ORDER BY message_id, rowid`,
    );
    let last = afterId;
    for (;;) {
      const rows = page.all(last, highestId, batchSize) as Array<Record<string, unknown> & { message_id: number }>;
      if (rows.length === 0) return;
      const first = rows[0]?.message_id ?? 0;
      last = rows[rows.length - 1]?.message_id ?? last;
      const meta = new Map<number, EnigmaMessageMeta[]>();
      const metaNotText = new Map<number, string[]>();
      for (const row of metaOf.all(first, last) as Array<{
        message_id: number;
        meta_category: unknown;
        meta_name: unknown;
        meta_value: unknown;
      }>) {
        const notText = metaNotText.get(row.message_id) ?? [];
        metaNotText.set(row.message_id, notText);
        const category = typeof row.meta_category === 'number' ? String(row.meta_category) : row.meta_category;
        const entry = {
          category: textIn(category, 'message_meta.meta_category', notText) ?? '',
          name: textIn(row.meta_name, 'message_meta.meta_name', notText) ?? '',
          value: textIn(row.meta_value, 'message_meta.meta_value', notText) ?? '',
        };
        meta.set(row.message_id, [...(meta.get(row.message_id) ?? []), entry]);
      }
      yield rows.map((row) => {
        const notText = [...(metaNotText.get(row.message_id) ?? [])];
        const replyTo = integerIn(row.reply_to_message_id);
        return {
          id: row.message_id,
          areaTag: textIn(row.area_tag, 'area_tag', notText) ?? '',
          uuid: textIn(row.message_uuid, 'message_uuid', notText) ?? '',
          replyToMessageId: replyTo ? replyTo : null,
          toUserName: textIn(row.to_user_name, 'to_user_name', notText) ?? '',
          fromUserName: textIn(row.from_user_name, 'from_user_name', notText) ?? '',
          subject: textIn(row.subject, 'subject', notText) ?? '',
          body: textIn(row.message, 'message', notText) ?? '',
          timestamp: textIn(row.modified_timestamp, 'modified_timestamp', notText) ?? '',
          meta: meta.get(row.message_id) ?? [],
          notText,
        };
      });
    }
  }

  files(): EnigmaFile[] {
    const db = this.databases.file;
    const meta = new Map<number, Map<string, string>>();
    const notText = new Map<number, string[]>();
    const notTextOf = (fileId: number) => {
      const list = notText.get(fileId) ?? [];
      notText.set(fileId, list);
      return list;
    };
    for (const row of db.prepare('SELECT file_id, meta_name, meta_value FROM file_meta ORDER BY rowid').all() as Array<{
      file_id: number;
      meta_name: unknown;
      meta_value: unknown;
    }>) {
      const byName = meta.get(row.file_id) ?? new Map<string, string>();
      const name = textIn(row.meta_name, 'file_meta.meta_name', notTextOf(row.file_id));
      const value = textIn(row.meta_value, `file_meta ${name ?? ''}`, notTextOf(row.file_id));
      if (name && !byName.has(name)) byName.set(name, value ?? '');
      meta.set(row.file_id, byName);
    }
    const hashTags = new Map<number, string[]>();
    for (const row of db
      .prepare(
        `SELECT f.file_id, h.hash_tag FROM file_hash_tag f JOIN hash_tag h ON h.hash_tag_id = f.hash_tag_id
          ORDER BY f.file_id, h.hash_tag`,
      )
      .all() as Array<{ file_id: number; hash_tag: unknown }>) {
      const tag = textIn(row.hash_tag, 'hash_tag', notTextOf(row.file_id));
      if (tag) hashTags.set(row.file_id, [...(hashTags.get(row.file_id) ?? []), tag]);
    }
    const rows = db
      .prepare(
        `SELECT file_id, area_tag, file_sha256, file_name, storage_tag, storage_tag_rel_path, desc, desc_long,
                upload_timestamp FROM file ORDER BY file_id`,
      )
      .all() as Array<Record<string, unknown>>;
    return rows.map((row) => {
      const id = integerIn(row.file_id);
      const rowNotText = [...(notText.get(id) ?? [])];
      return {
        id,
        areaTag: textIn(row.area_tag, 'area_tag', rowNotText) ?? '',
        sha256: textIn(row.file_sha256, 'file_sha256', rowNotText) ?? '',
        fileName: textIn(row.file_name, 'file_name', rowNotText) ?? '',
        storageTag: textIn(row.storage_tag, 'storage_tag', rowNotText) ?? '',
        storageRelPath: textIn(row.storage_tag_rel_path, 'storage_tag_rel_path', rowNotText),
        desc: textIn(row.desc, 'desc', rowNotText) ?? '',
        descLong: textIn(row.desc_long, 'desc_long', rowNotText) ?? '',
        uploadTimestamp: textIn(row.upload_timestamp, 'upload_timestamp', rowNotText) ?? '',
        meta: meta.get(id) ?? new Map(),
        hashTags: hashTags.get(id) ?? [],
        notText: rowNotText,
      };
    });
  }

  /** Logins, oldest first, from the system event log (`user_login_history`). */
  logins(): EnigmaLogin[] {
    const rows = this.databases.system
      .prepare(`SELECT timestamp, log_value FROM system_event_log WHERE log_name = 'user_login_history' ORDER BY id`)
      .all() as Array<{ timestamp: string; log_value: string }>;
    return rows.flatMap((row) => {
      try {
        const value = JSON.parse(row.log_value) as { userId?: unknown };
        return typeof value.userId === 'number' ? [{ userId: value.userId, timestamp: row.timestamp }] : [];
      } catch {
        return [];
      }
    });
  }

  /**
   * What the board holds that has no place in baud, table by table (only tables with rows):
   * the move reports each instead of dropping it silently.
   */
  leftovers(): Array<{ kind: string; reason: string; count: number }> {
    const tables: ReadonlyArray<readonly [DatabaseName, string, string, string]> = [
      ['user', 'api_refresh_tokens', 'sessions', 'ENiGMA½ login sessions end: users log in again'],
      ['user', 'user_achievement', 'achievements', 'earned achievements are not kept (their totals are)'],
      ['user', 'user_temporary_token', 'temporary tokens', 'password-reset and similar tokens are not kept'],
      ['file', 'file_user_rating', 'file ratings', 'baud has no file ratings'],
      ['file', 'file_web_serve', 'file web links', 'temporary download links are not kept'],
      ['file', 'file_web_serve_batch', 'file web links', 'temporary download batches are not kept'],
      ['system', 'user_event_log', 'user events', 'per-user event history is not kept'],
      ['message', 'message_area_last_scan', 'scan state', 'ENiGMA½’s tosser scan state is not kept'],
    ];
    const found: Array<{ kind: string; reason: string; count: number }> = [];
    for (const [database, table, kind, reason] of tables) {
      const exists = this.databases[database]
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(table);
      if (!exists) continue;
      const { n } = this.databases[database].prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number };
      if (n > 0) found.push({ kind, reason, count: n });
    }
    const viewed = this.databases.message.prepare('SELECT COUNT(*) AS n FROM message WHERE view_count > 0').get() as {
      n: number;
    };
    if (viewed.n > 0) found.push({ kind: 'messages', reason: 'view counts are not kept', count: viewed.n });
    return found;
  }

  pointers(): EnigmaPointer[] {
    const rows = this.databases.message
      .prepare('SELECT user_id, area_tag, message_id FROM user_message_area_last_read')
      .all() as Array<{ user_id: number; area_tag: string; message_id: number }>;
    return rows.map((row) => ({ userId: row.user_id, areaTag: row.area_tag, messageId: row.message_id }));
  }
}
