import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { withStatementCache } from './sqlite-statement-cache.js';

/** What the main thread asks of the worker: one statement, or to close the connection. */
type WorkerRequest =
  | { readonly id: number; readonly sql: string; readonly parameters: readonly unknown[] }
  | { readonly id: number; readonly close: true };

/** The worker's answer to request `id`. */
type WorkerReply =
  | {
      readonly id: number;
      readonly rows: unknown[];
      readonly changes?: number;
      readonly lastInsertRowid?: number | bigint;
    }
  | { readonly id: number; readonly error: { readonly message: string; readonly code: string | undefined } };

export interface SqliteWorkerOptions {
  /** The database file. */
  readonly file: string;
  /** Run in order once the connection is open (`journal_mode = WAL`, …). */
  readonly pragmas: readonly string[];
  /** Statements kept prepared in the worker, the least recently used going first. */
  readonly statementCacheSize: number;
}

/**
 * The body of the worker thread: one better-sqlite3 connection that runs each statement it is
 * sent and posts back the rows, or the error's message and code. It is sent to the worker as
 * source text (`eval`), so it uses nothing from this module's scope: the board's modules may be
 * TypeScript that a worker thread cannot load as it is (the test runner), while a function's own
 * text is always plain JavaScript by the time it runs. Its statement cache (`cached`) is the
 * main thread's own, sent the same way.
 */
function runSqliteWorker(
  require: (id: string) => unknown,
  port: import('node:worker_threads').MessagePort,
  data: SqliteWorkerOptions & { readonly betterSqlite3: string },
  cached: typeof withStatementCache,
): void {
  const Database = require(data.betterSqlite3) as typeof BetterSqlite3;
  const failureOf = (error: unknown) => {
    const { message, code } = error as { message: string; code?: string };
    return { message, code };
  };
  // A file that cannot be opened fails every statement with SQLite's own error.
  let database: SqliteDatabase | null = null;
  let openFailure: ReturnType<typeof failureOf> | null = null;
  try {
    const connection = new Database(data.file);
    for (const pragma of data.pragmas) connection.pragma(pragma);
    database = cached(connection, data.statementCacheSize);
  } catch (error) {
    openFailure = failureOf(error);
  }
  port.on('message', (request: WorkerRequest) => {
    if ('close' in request) {
      database?.close();
      port.postMessage({ id: request.id, rows: [] } satisfies WorkerReply);
      port.close();
      return;
    }
    const { id, sql, parameters } = request;
    if (database === null) {
      port.postMessage({ id, error: openFailure ?? { message: 'not open', code: undefined } } satisfies WorkerReply);
      return;
    }
    try {
      const statement = database.prepare(sql) as BetterSqlite3.Statement;
      if (statement.reader) {
        port.postMessage({ id, rows: statement.all(parameters) } satisfies WorkerReply);
      } else {
        const { changes, lastInsertRowid } = statement.run(parameters);
        port.postMessage({ id, rows: [], changes, lastInsertRowid } satisfies WorkerReply);
      }
    } catch (error) {
      port.postMessage({ id, error: failureOf(error) } satisfies WorkerReply);
    }
  });
}

/**
 * Kysely's SQLite dialect with the connection on a worker thread of its own: a statement runs
 * there while this thread goes on (parsing the next lines of an import, building the next
 * INSERT), where better-sqlite3 on this thread would hold it for the whole statement. For bulk
 * writes: each statement pays a round trip between the threads (tens of microseconds), which a
 * server's many small reads should not.
 */
export class SqliteWorkerDialect implements Dialect {
  readonly #options: SqliteWorkerOptions;

  constructor(options: SqliteWorkerOptions) {
    this.#options = options;
  }

  createDriver(): Driver {
    return new SqliteWorkerDriver(this.#options);
  }

  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }

  createAdapter() {
    return new SqliteAdapter();
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own SqliteDialect types its introspector's database so
  createIntrospector(db: any) {
    return new SqliteIntrospector(db);
  }
}

class SqliteWorkerDriver implements Driver {
  readonly #options: SqliteWorkerOptions;
  #connection: SqliteWorkerConnection | null = null;
  /** The one connection is lent to one query or transaction at a time (as Kysely's SQLite driver does). */
  #lent: Promise<void> = Promise.resolve();
  #giveBack: () => void = () => {};

  constructor(options: SqliteWorkerOptions) {
    this.#options = options;
  }

  async init(): Promise<void> {
    const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
      (${runSqliteWorker.toString()})(require, parentPort, workerData, ${withStatementCache.toString()});`,
      {
        eval: true,
        workerData: { ...this.#options, betterSqlite3 },
      },
    );
    this.#connection = new SqliteWorkerConnection(worker);
    // The first statement waits for the worker to open the file; a file it cannot open fails here.
    await this.#connection.executeQuery(CompiledQuery.raw('select 1'));
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = this.#connection;
    if (connection === null) throw new Error('the SQLite worker is not started');
    const previous = this.#lent;
    let giveBack = () => {};
    this.#lent = new Promise((resolve) => {
      giveBack = resolve;
    });
    await previous;
    this.#giveBack = giveBack;
    return connection;
  }

  async releaseConnection(): Promise<void> {
    this.#giveBack();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.#connection?.close();
    this.#connection = null;
  }
}

/**
 * A row as better-sqlite3 gives it on its own thread: a blob crosses between threads as a plain
 * Uint8Array, and is a Buffer again here.
 */
function asBuffers(row: unknown): unknown {
  const values = row as Record<string, unknown>;
  for (const [column, value] of Object.entries(values)) {
    if (value instanceof Uint8Array && !Buffer.isBuffer(value))
      values[column] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return values;
}

class SqliteWorkerConnection implements DatabaseConnection {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #failure: Error | null = null;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (reply: WorkerReply) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      waiting?.resolve(reply);
    });
    const fail = (error: Error) => {
      this.#failure = error;
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the SQLite worker stopped (exit code ${code})`)));
  }

  #ask(request: WorkerRequest): Promise<WorkerReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#waiting.set(request.id, { resolve, reject });
      this.#worker.postMessage(request);
    });
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const reply = await this.#ask({ id: this.#nextId++, sql: compiledQuery.sql, parameters: compiledQuery.parameters });
    if ('error' in reply) throw new BetterSqlite3.SqliteError(reply.error.message, reply.error.code ?? 'SQLITE_ERROR');
    const { changes, lastInsertRowid } = reply;
    return {
      rows: reply.rows.map(asBuffers) as R[],
      ...(changes === undefined ? {} : { numAffectedRows: BigInt(changes) }),
      ...(lastInsertRowid === undefined ? {} : { insertId: BigInt(lastInsertRowid) }),
    };
  }

  // biome-ignore lint/correctness/useYield: the board never streams a query
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('the SQLite worker does not stream queries');
  }

  async close(): Promise<void> {
    if (this.#failure === null) await this.#ask({ id: this.#nextId++, close: true });
    await this.#worker.terminate();
  }
}
