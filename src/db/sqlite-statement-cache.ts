import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * The connection as Kysely's SQLite dialect sees it, with `prepare` answered from a cache of
 * `capacity` statements (the least recently used goes first): preparing is most of what a small
 * query costs. Safe because the dialect runs one query at a time on its one connection and the
 * board never streams, so no cached statement is ever still iterating when it is handed out again.
 *
 * It uses nothing from its module's scope: the SQLite worker thread runs it from its source text
 * (see sqlite-worker-dialect.ts).
 */
export function withStatementCache(connection: BetterSqlite3.Database, capacity: number): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => connection.close(),
    prepare(text) {
      let statement = statements.get(text);
      if (statement) statements.delete(text);
      else statement = connection.prepare(text);
      statements.set(text, statement);
      if (statements.size > capacity) statements.delete(statements.keys().next().value as string);
      return statement;
    },
  };
}
