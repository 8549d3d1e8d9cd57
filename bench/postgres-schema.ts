import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema for one run's board: baud creates it on first open; `dropSchema` removes it. */
export function freshSchemaName(): string {
  return `baud_bench_${randomBytes(6).toString('hex')}`;
}

/** `url` with `?schema=` set, as `database.url` takes it. */
export function boardDatabaseUrl(url: string, schema: string): string {
  const withSchema = new URL(url);
  withSchema.searchParams.set('schema', schema);
  return withSchema.toString();
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Fails at once, with the server's own message, when PostgreSQL cannot be reached. */
export async function assertPostgresReachable(url: string): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ server_version: string }>('show server_version');
    return rows[0]?.server_version ?? 'unknown';
  });
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`drop schema if exists "${schema}" cascade`));
}

/** The stored password hash of `username` (to time argon2 with the board's own parameters). */
export async function postgresPasswordHash(url: string, schema: string, username: string): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ password_hash: string }>(
      `select password_hash from "${schema}".users where username = $1`,
      [username],
    );
    const hash = rows[0]?.password_hash;
    if (!hash) throw new Error(`no user ${username} in schema ${schema}`);
    return hash;
  });
}

/**
 * Gathers planner statistics for every table of `schema`, as autovacuum would some time after
 * a bulk import (when it is on at all: `autovacuum` is returned). Without them PostgreSQL
 * guesses a handful of rows in a million-row area and pages it with a bitmap scan and a sort:
 * seconds per page.
 */
export async function analyzeSchema(url: string, schema: string): Promise<{ autovacuum: string }> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ tablename: string }>(
      'select tablename from pg_tables where schemaname = $1',
      [schema],
    );
    for (const { tablename } of rows) await client.query(`analyze "${schema}"."${tablename}"`);
    const setting = await client.query<{ autovacuum: string }>('show autovacuum');
    return { autovacuum: setting.rows[0]?.autovacuum ?? 'unknown' };
  });
}
