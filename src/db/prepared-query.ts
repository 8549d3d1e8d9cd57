import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery } from 'kysely';
import type { Executor } from './database.js';

/** Stands for a named parameter while a prepared query is compiled; never reaches the database. */
class Parameter {
  constructor(readonly name: string) {}
}

type Slot = { readonly parameter: string } | { readonly constant: unknown };

/**
 * A query built and compiled once, run many times with new parameter values: no query
 * building, no SQL compilation and no plugin transforms of the query per call. On SQLite the
 * statement comes from the connection's statement cache (see `openDatabase`); on PostgreSQL it
 * runs as a named prepared statement (parsed and planned once per pooled connection).
 */
export interface PreparedQuery<Params, Row> {
  /** Every row. `executor` is a transaction to run in; the database by default. */
  all(params: Params, executor?: Executor): Promise<Row[]>;
  first(params: Params, executor?: Executor): Promise<Row | undefined>;
  /** For INSERT/UPDATE/DELETE without RETURNING: the number of rows it changed. */
  run(params: Params, executor?: Executor): Promise<number>;
}

/** SQL text → name of its PostgreSQL prepared statement; only prepared queries are named. */
const statementNames = new Map<string, string>();

/**
 * The PostgreSQL prepared-statement name of `sql` when a {@link prepareQuery} compiled it,
 * else undefined (ad-hoc queries stay unnamed, so connections never collect one-off plans).
 * The name is derived from the text: the same SQL is the same statement on every connection.
 */
export function preparedStatementName(sql: string): string | undefined {
  return statementNames.get(sql);
}

/**
 * Compiles `build` once. It receives a stand-in for each parameter (`params.userId` …) and
 * returns a Kysely query that uses them where values go; at each call the stand-ins are
 * replaced by the call's values, in the positions the compiler gave them.
 *
 * @example
 * const byId = prepareQuery(db, (p: { id: number }) => db.selectFrom('users').selectAll().where('id', '=', p.id));
 * const user = await byId.first({ id: 7 });
 */
export function prepareQuery<Params extends object, Row>(
  db: Executor,
  build: (params: Params) => Compilable<Row>,
): PreparedQuery<Params, Row> {
  const standIns = new Proxy({} as Params, {
    get: (_target, name) => new Parameter(String(name)),
  });
  const compiled = build(standIns).compile();
  const slots: readonly Slot[] = compiled.parameters.map((value) =>
    value instanceof Parameter ? { parameter: value.name } : { constant: value },
  );
  statementNames.set(compiled.sql, `baud_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 24)}`);

  function withValues(params: Params): CompiledQuery<Row> {
    const values = params as Record<string, unknown>;
    const parameters = slots.map((slot) => {
      if ('constant' in slot) return slot.constant;
      const value = values[slot.parameter];
      if (value === undefined) throw new Error(`prepared query: no value for parameter "${slot.parameter}"`);
      return value;
    });
    return { ...compiled, parameters };
  }

  return {
    async all(params, executor = db) {
      return (await executor.executeQuery(withValues(params))).rows;
    },
    async first(params, executor = db) {
      return (await executor.executeQuery(withValues(params))).rows[0];
    },
    async run(params, executor = db) {
      return Number((await executor.executeQuery(withValues(params))).numAffectedRows ?? 0);
    },
  };
}
