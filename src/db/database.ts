import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CamelCasePlugin,
  DEFAULT_MIGRATION_TABLE,
  Kysely,
  type LogEvent,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Transaction,
} from 'kysely';
import type pg from 'pg';
import { boardMigrations } from './migrations/index.js';
import { preparedStatementName } from './prepared-query.js';
import type { Tables } from './schema.js';
import { withStatementCache } from './sqlite-statement-cache.js';
import { SqliteWorkerDialect } from './sqlite-worker-dialect.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Tables>;
/**
 * The database or one of its transactions. A store method that must run inside a transaction
 * another store (or a service) opened takes one as its first argument.
 */
export type Executor = Db | Transaction<Tables>;

/** An open board database: the query builder, which dialect it speaks, and how to close it. */
export interface Database {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The PostgreSQL schema chosen with `?schema=`, or null for the default search path. */
  readonly schema: string | null;
  /** PostgreSQL: the connection pool's state now (metrics); null for SQLite's one connection. */
  poolState(): PoolState | null;
  /**
   * Hands every finished query's timing to `listener` (one listener; a later call replaces it).
   * Only a database opened with `timeQueries` times its queries; others refuse.
   */
  onQuery(listener: QueryListener): void;
  /**
   * PostgreSQL: calls `onNotify` for every NOTIFY on `channel`, heard on a connection of its own
   * (outside the pool, reconnected a second after it drops). SQLite has no such thing: never
   * called. Resolves once listening; the function it gives stops.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** What kind of statement a query was: its first keyword, or `other` (raw SQL, DDL). */
export type QueryOperation = 'select' | 'insert' | 'update' | 'delete' | 'other';

export interface QueryTiming {
  readonly operation: QueryOperation;
  readonly seconds: number;
  /** The database answered with an error (a constraint, a timeout, a lost connection). */
  readonly failed: boolean;
}

export type QueryListener = (timing: QueryTiming) => void;

export interface PoolState {
  readonly open: number;
  readonly idle: number;
  /** Queries waiting for a connection. */
  readonly waiting: number;
}

export interface OpenDatabaseOptions {
  readonly poolSize?: number;
  /** PostgreSQL: cancel a statement after this long (0: never). SQLite has no such limit. */
  readonly statementTimeoutSeconds?: number;
  /**
   * Time every query for {@link Database.onQuery} (metrics). Off, Kysely does no timing at
   * all, so a board without metrics pays nothing for it.
   */
  readonly timeQueries?: boolean;
  /**
   * SQLite: called with the connection once it is open, before any query: where the SQL functions
   * the board's queries call are taught to it (the search's `baud_relevance`). A database opened
   * without it answers everything but a search by relevance.
   */
  readonly onSqliteOpen?: (connection: BetterSqlite3.Database) => void;
  /**
   * SQLite: the connection lives on a worker thread of its own (src/db/sqlite-worker-dialect.ts),
   * so statements run while this thread does other work — for bulk writes. `onSqliteOpen` is not
   * called: such a database answers everything but a search by relevance.
   */
  readonly isSqliteOnWorkerThread?: boolean;
}

const OPERATION_OF_NODE: Readonly<Record<string, QueryOperation>> = {
  SelectQueryNode: 'select',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
};

/**
 * Kysely's query log turned into timings for one replaceable listener: the log is fixed when
 * Kysely is built, before the metrics that listen exist.
 */
function queryTimer(enabled: boolean) {
  let listener: QueryListener | null = null;
  const log = (event: LogEvent) =>
    listener?.({
      operation: OPERATION_OF_NODE[event.query.query.kind] ?? 'other',
      seconds: event.queryDurationMillis / 1000,
      failed: event.level === 'error',
    });
  return {
    kyselyOptions: enabled ? { log } : {},
    onQuery(next: QueryListener) {
      if (!enabled) throw new Error('this database was opened without timeQueries');
      listener = next;
    },
  };
}

/**
 * Opens `sqlite:<file>` (WAL, foreign keys on, busy timeout) or `postgres://…` (a pool; an
 * optional `?schema=name` query parameter selects — and creates — the schema).
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const timer = queryTimer(options.timeQueries ?? false);
  if (url.startsWith('sqlite:'))
    return openSqlite(
      url.slice('sqlite:'.length),
      timer,
      options.onSqliteOpen,
      options.isSqliteOnWorkerThread ?? false,
    );
  if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    return openPostgres(url, options.poolSize ?? 10, options.statementTimeoutSeconds ?? 0, timer);
  throw new Error('database.url must start with sqlite: or postgres://');
}

type QueryTimer = ReturnType<typeof queryTimer>;

/**
 * How every SQLite connection of the board is set up: WAL, foreign keys, a busy timeout, and
 * `synchronous = NORMAL` (with WAL durable across application crashes; only an OS crash can lose
 * the last commits).
 */
const SQLITE_PRAGMAS = ['journal_mode = WAL', 'foreign_keys = ON', 'busy_timeout = 5000', 'synchronous = NORMAL'];

function openSqlite(
  file: string,
  timer: QueryTimer,
  onOpen: ((connection: BetterSqlite3.Database) => void) | undefined,
  isOnWorkerThread: boolean,
): Database {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const dialect = isOnWorkerThread
    ? new SqliteWorkerDialect({ file, pragmas: SQLITE_PRAGMAS, statementCacheSize: STATEMENT_CACHE_SIZE })
    : new SqliteDialect({ database: withStatementCache(openSqliteConnection(file, onOpen), STATEMENT_CACHE_SIZE) });
  const db = new Kysely<Tables>({
    dialect,
    plugins: [new CamelCasePlugin()],
    ...timer.kyselyOptions,
  });
  return {
    db,
    dialect: 'sqlite',
    schema: null,
    poolState: () => null,
    onQuery: timer.onQuery,
    listen: async () => async () => {},
    close: () => db.destroy(),
  };
}

function openSqliteConnection(
  file: string,
  onOpen: ((connection: BetterSqlite3.Database) => void) | undefined,
): BetterSqlite3.Database {
  const connection = new BetterSqlite3(file);
  for (const pragma of SQLITE_PRAGMAS) connection.pragma(pragma);
  onOpen?.(connection);
  return connection;
}

/**
 * Statements kept prepared on the SQLite connection. The board's code has fewer distinct
 * statements than this (IN lists and bulk inserts of other sizes are the only variable ones), so
 * every query of a running board is prepared once; the least recently used one goes first.
 */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Runs the prepared queries of the board's stores (see `prepareQuery`) as named prepared
 * statements on each pooled connection; every other query stays an unnamed one-off. Kysely
 * hands its SQL to `client.query(text, values)`, so that is where the name is added.
 *
 * The query goes to pg with a callback, and the promise Kysely awaits is made here: through
 * pg's own promise, each page's rows outlived two young-generation collections and went to the
 * old generation (measured with V8's GC trace: ~0.7 MB of every collection's survivors; through
 * the callback, none), so a client walking 200,000 messages took a node from 134 to 234 MiB
 * instead of 144 to 153 MiB (bench scenario "memory after a crawl").
 */
function namePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (
    config: unknown,
    values: unknown,
    callback: (error: Error | null, result: unknown) => void,
  ) => void;
  client.query = ((config: unknown, values?: unknown) => {
    const name = typeof config === 'string' ? preparedStatementName(config) : undefined;
    return new Promise((resolve, reject) =>
      query(name ? { name, text: config, values } : config, name ? undefined : values, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
  }) as typeof client.query;
}

/**
 * `CREATE SCHEMA IF NOT EXISTS` is not safe against itself: two nodes starting at once on a new
 * schema can both pass the "not exists" check, and the second fails on pg_namespace's unique
 * index (23505). The schema is then there, made by the other node — which is all we wanted.
 */
async function createSchemaIfMissing(db: Db, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '23505') throw error;
  }
}

async function openPostgres(
  url: string,
  poolSize: number,
  statementTimeoutSeconds: number,
  timer: QueryTimer,
): Promise<Database> {
  // Loaded only for a PostgreSQL board: a SQLite node never pays for the driver's memory.
  const { default: pg } = await import('pg');
  // int8 (counts, byte sizes) arrives as a string by default; board numbers stay far below 2^53.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  if (schema !== null && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new Error('database.url: schema must be a plain identifier');
  }
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: poolSize,
    // Session settings of every pooled connection, set by the server at connect time.
    options: [
      ...(schema ? [`-c search_path=${schema}`] : []),
      `-c statement_timeout=${statementTimeoutSeconds * 1000}`,
    ].join(' '),
  });
  pool.on('connect', namePreparedStatements);
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool }),
    plugins: [new CamelCasePlugin()],
    ...timer.kyselyOptions,
  });
  try {
    if (schema) await createSchemaIfMissing(db, schema);
    else await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const poolState = () => ({ open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  const listen = (channel: string, onNotify: () => void) =>
    listenForNotifications(() => new pg.Client({ connectionString: parsed.toString() }), channel, onNotify);
  return { db, dialect: 'postgres', schema, poolState, onQuery: timer.onQuery, listen, close: () => db.destroy() };
}

/** How long a dropped LISTEN connection waits before it connects again. */
const RELISTEN_DELAY_MS = 1000;

/**
 * LISTEN on a client of its own, connecting again whenever the connection ends. A notification
 * lost while it is down is no loss: the listener only wakes readers of the event log, which also
 * read it on a timer.
 */
async function listenForNotifications(
  newClient: () => pg.Client,
  channel: string,
  onNotify: () => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = newClient();
    client = next;
    const again = () => {
      if (stopped || client !== next) return;
      client = null;
      next.end().catch(() => {});
      retry = setTimeout(() => connect().catch(again), RELISTEN_DELAY_MS);
    };
    next.on('error', again);
    next.on('end', again);
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify();
    });
    try {
      await next.connect();
      await next.query(`LISTEN "${channel}"`);
    } catch (error) {
      again();
      throw error;
    }
    // Woken once on (re)connect: whatever was notified while down is read now.
    onNotify();
  };
  const stop = async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
  try {
    await connect();
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

/**
 * Runs every pending migration. Kysely's migrator holds a lock (a row lock on PostgreSQL),
 * so several nodes starting at once apply each migration exactly once.
 * Returns the names of the migrations it applied.
 */
export async function migrateToLatest(database: Database): Promise<string[]> {
  // A process loses at most one race per migration (each loss means another applied it).
  const attempts = Object.keys(boardMigrations(database.dialect)).length + 1;
  for (let attempt = 1; ; attempt += 1) {
    const { error, results } = await boardMigrator(database).migrateToLatest();
    if (!error) {
      return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
    }
    if (attempt < attempts && lostMigrationRace(error, database)) continue;
    throw error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Whether a failed migration lost a race with another process, so that trying again (which
 * first reads what is applied now) is right:
 *
 * - SQLite: Kysely takes no migration lock there (it assumes one connection), so two processes
 *   starting on a new board file (`baud serve` and a CLI command, say) both see a migration as
 *   pending; the second to get the write lock finds its table already made
 *   ("table … already exists", "duplicate column name: …"; its transaction rolled back). Tried again, it sees the
 *   migration applied and skips it.
 * - PostgreSQL: the migrator first looks for its tables by introspecting every schema of the
 *   database; when another board sharing the database drops its schema during that read,
 *   PostgreSQL answers "schema … does not exist" (3F000) for a schema that is not ours, or,
 *   when a table went with it while the read looked up its columns' sequences, "column … of
 *   relation … does not exist" (42703) or "relation "schema.table" does not exist" (42P01;
 *   also seen when two nodes migrating one schema race).
 *
 * A migration that is simply wrong fails the same way every time and is reported after the
 * last try.
 */
export function lostMigrationRace(error: unknown, database: Pick<Database, 'dialect' | 'schema'>): boolean {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  if (typeof message !== 'string') return false;
  if (database.dialect === 'sqlite') return /already exists|duplicate column name/.test(message);
  if (code === '42703') return /^column ".*" of relation ".*" does not exist$/.test(message);
  // Named with its schema: a table the introspection found went before it read it (another
  // board's dropped, or a node's racing migration rolled back); a missing table of a migration
  // itself is named bare and fails every time.
  if (code === '42P01') return /^relation "[^".]+\.[^"]+" does not exist$/.test(message);
  return code === '3F000' && !(database.schema !== null && message.includes(`"${database.schema}"`));
}

/**
 * Names of the migrations this build knows that the database has not applied yet. One plain
 * read of Kysely's bookkeeping table — not `Migrator.getMigrations()`, which first introspects
 * every table and column of the database — because readiness probes ask this every few seconds
 * on every node. It throws when the database does not answer.
 */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const table = database.schema ? `${database.schema}.${DEFAULT_MIGRATION_TABLE}` : DEFAULT_MIGRATION_TABLE;
  const { rows } = await sql<{ name: string }>`SELECT name FROM ${sql.table(table)}`.execute(database.db);
  const applied = new Set(rows.map((row) => row.name));
  return Object.keys(boardMigrations(database.dialect)).filter((name) => !applied.has(name));
}

/** Kysely's migrator for this board's migrations, its bookkeeping tables in the board's own schema. */
export function boardMigrator(database: Database): Migrator {
  const migrations = boardMigrations(database.dialect);
  return new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    // Without it Kysely looks for its bookkeeping tables in every schema of the database and
    // may find another board's (or another test run's) instead of creating this one's.
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
  });
}
