import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { TestBoard } from '../../support/test-board.js';

/** A cheap summary of everything a request could change, as named values. */
export type Fingerprint = Readonly<Record<string, string>>;

/** Takes fingerprints of one board; `close` ends its database connection. */
export interface StateFingerprint {
  take(): Promise<Fingerprint>;
  close(): Promise<void>;
}

interface Column {
  readonly table: string;
  readonly column: string;
  readonly dataType: string;
}

/** A read-only connection of the fingerprint's own, beside the board's pool. */
interface Reader {
  rows(text: string): Promise<Record<string, unknown>[]>;
  /** Runs `text` as a prepared statement: parsed and planned once, not on every request. */
  preparedRows(text: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

async function openReader(board: TestBoard): Promise<Reader> {
  const { databaseUrl } = board;
  if (databaseUrl.startsWith('sqlite:')) {
    const connection = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    const statements = new Map<string, BetterSqlite3.Statement>();
    const prepared = (text: string) => {
      const statement = statements.get(text) ?? connection.prepare(text);
      statements.set(text, statement);
      return statement;
    };
    return {
      rows: async (text) => connection.prepare(text).all() as Record<string, unknown>[],
      preparedRows: async (text) => prepared(text).all() as Record<string, unknown>[],
      close: async () => {
        connection.close();
      },
    };
  }
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  const client = new pg.Client({
    connectionString: url.toString(),
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  await client.connect();
  return {
    rows: async (text) => (await client.query(text)).rows,
    // A named statement: ~0.5 ms per fingerprint instead of ~4 ms re-planning 90 subqueries each time.
    preparedRows: async (text) => (await client.query({ name: 'baud-fuzz-fingerprint', text })).rows,
    close: () => client.end(),
  };
}

async function columnsOf(reader: Reader, isPostgres: boolean): Promise<Column[]> {
  if (isPostgres) {
    const rows = await reader.rows(`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`);
    return rows.map((row) => ({
      table: String(row.table_name),
      column: String(row.column_name),
      dataType: String(row.data_type),
    }));
  }
  const tables = await reader.rows(
    `select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`,
  );
  const columns: Column[] = [];
  for (const { name } of tables) {
    const rows = await reader.rows(`select name, type from pragma_table_info(${quotedText(String(name))})`);
    columns.push(
      ...rows.map((row) => ({
        table: String(name),
        column: String(row.name),
        dataType: String(row.type).toLowerCase(),
      })),
    );
  }
  return columns;
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

function quotedText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * One summary expression per column: numbers are summed (counters, byte sizes, ids), text is
 * summed by length (a changed profile field, a timestamp set), anything else is counted.
 */
function summaryOf(column: Column): string {
  const name = quoted(column.column);
  if (/int|numeric|decimal|real|double|float/.test(column.dataType)) return `coalesce(sum(${name}), 0)`;
  if (/char|text|clob/.test(column.dataType)) return `coalesce(sum(length(${name})), 0)`;
  return `count(${name})`;
}

function listFiles(root: string, skip: (relative: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      const relative = path.relative(root, full);
      if (skip(relative)) continue;
      if (entry.isDirectory()) {
        found.push(`${relative}/`);
        walk(full);
      } else {
        found.push(`${relative} (${statSync(full).size} bytes)`);
      }
    }
  };
  walk(root);
  return found.sort();
}

function prototypeKeys(): string {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype]
    .map((prototype) => Object.getOwnPropertyNames(prototype).sort().join(','))
    .join('|');
}

/**
 * Fingerprints a board: every table of its database (found at run time, so a new table or
 * counter is covered without touching the suite) summarised in ONE prepared query — row count
 * plus a sum per column — together with every file under the board's data directory (file
 * storage, uploads in progress) and the built-in prototypes of this process (the server runs
 * in it under `app.inject`, so prototype pollution would show here).
 */
export async function createStateFingerprint(board: TestBoard): Promise<StateFingerprint> {
  const isPostgres = board.databaseUrl.startsWith('postgres');
  const reader = await openReader(board);
  const columns = await columnsOf(reader, isPostgres);
  const tables = [...new Set(columns.map((column) => column.table))];
  const labels: string[][] = [];
  // One scalar subquery per table, its summaries joined into one text: no join for the planner
  // to order (a 14-table cross join cost PostgreSQL several milliseconds of planning).
  const subqueries = tables.map((table, tableIndex) => {
    const own = columns.filter((candidate) => candidate.table === table);
    labels.push([`${table} rows`, ...own.map((column) => `${table}.${column.column}`)]);
    const summaries = ['count(*)', ...own.map(summaryOf)].map((expression) => `cast(${expression} as text)`);
    return `(select ${summaries.join(" || ',' || ")} from ${quoted(table)}) as f${tableIndex}`;
  });
  const query = `select ${subqueries.join(', ')}`;
  const databaseFile = isPostgres ? null : path.basename(board.databaseUrl.slice('sqlite:'.length));
  // The SQLite file and its WAL change size on any write, including the throttle's own.
  const isDatabaseFile = (relative: string) => databaseFile !== null && relative.startsWith(databaseFile);

  return {
    async take() {
      const row = (await reader.preparedRows(query))[0] ?? {};
      const fingerprint: Record<string, string> = {};
      labels.forEach((tableLabels, tableIndex) => {
        const values = String(row[`f${tableIndex}`]).split(',');
        tableLabels.forEach((label, index) => {
          fingerprint[label] = values[index] ?? '?';
        });
      });
      fingerprint.files = listFiles(board.dir, isDatabaseFile).join('\n');
      fingerprint.prototypes = prototypeKeys();
      return fingerprint;
    },
    close: () => reader.close(),
  };
}

/** The entries that differ, as readable lines (`users.post_count: "3" → "4"`). */
export function fingerprintChanges(
  before: Fingerprint,
  after: Fingerprint,
  ignore: (key: string) => boolean,
): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys
    .filter((key) => !ignore(key) && before[key] !== after[key])
    .map((key) => `${key}: ${JSON.stringify(before[key] ?? null)} → ${JSON.stringify(after[key] ?? null)}`);
}
