import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { type BaudApp, buildApp } from '../../src/app.js';
import { type Board, openBoard } from '../../src/board.js';
import type { Clock } from '../../src/clock.js';
import { type Config, configFromObject } from '../../src/config/load-config.js';
import type { Dialect } from '../../src/db/database.js';
import { responseViolations } from './response-validation.js';

export const POSTGRES_URL = process.env.BAUD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** PostgreSQL's "too many clients already": the server is there, only busy with other test files. */
const TOO_MANY_CONNECTIONS = '53300';

/** Why the last probe failed, for the warning. */
let unreachableBecause = '';

async function isPostgresReachable(): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (error) {
      // Busy is not unreachable: wait for other files' pools to close rather than skip (or, in
      // CI, fail) every PostgreSQL test of this file.
      if ((error as { code?: string }).code !== TOO_MANY_CONNECTIONS) {
        unreachableBecause = String((error as Error).message ?? error);
        return false;
      }
      if (attempt === 10) return true;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

const postgresReachable = await isPostgresReachable();
if (!postgresReachable) {
  if (process.env.CI === 'true') {
    throw new Error(
      `PostgreSQL is unreachable at ${POSTGRES_URL} (${unreachableBecause}); with CI=true the PostgreSQL tests must run.`,
    );
  }
  console.warn(
    `\n${'!'.repeat(78)}\n!! PostgreSQL is unreachable at ${POSTGRES_URL} (${unreachableBecause}): SKIPPING every PostgreSQL test.\n!! Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n${'!'.repeat(78)}\n`,
  );
}

export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/**
 * `describe` once per database dialect. PostgreSQL suites are skipped (loudly, above) when the
 * server is unreachable outside CI.
 */
export function describeEachDialect(name: string, body: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) {
    const run = dialect === 'postgres' && !postgresReachable ? describe.skip : describe;
    run(`${name} [${dialect}]`, () => body(dialect));
  }
}

/** `describe` for what only PostgreSQL can do (several processes on one database); skipped like above. */
export function describeOnPostgres(name: string, body: () => void): void {
  (postgresReachable ? describe : describe.skip)(`${name} [postgres]`, body);
}

/** A clock the test moves by hand. */
export function fakeClock(start = new Date('2026-11-23T12:00:00.000Z')) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
    set(date: Date) {
      now = date.getTime();
    },
  } satisfies Clock & Record<string, unknown>;
}

export interface TestBoard {
  readonly app: BaudApp;
  readonly board: Board;
  readonly config: Config;
  /** A scratch directory removed by `close` (data dir, file storage). */
  readonly dir: string;
  readonly databaseUrl: string;
  /** Creates a user and returns an access token for them. */
  userWithToken(
    username: string,
    options?: { groups?: string[]; password?: string },
  ): Promise<{ userId: number; token: string; auth: { authorization: string } }>;
  close(): Promise<void>;
}

export interface TestBoardOptions {
  /** Merged over the test default configuration. */
  readonly config?: Record<string, unknown>;
  readonly clock?: Clock;
}

/**
 * A fresh board on a fresh database: a temp SQLite file, or a new PostgreSQL schema that is
 * dropped on `close`. The app is built but not listening; use `app.inject` or `app.listen`.
 */
export async function createTestBoard(dialect: Dialect, options: TestBoardOptions = {}): Promise<TestBoard> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-test-'));
  const schema = `baud_test_${randomBytes(6).toString('hex')}`;
  const databaseUrl = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
  const config = configFromObject(
    deepMerge(
      {
        paths: { dataDir: dir },
        database: { url: databaseUrl, poolSize: 4 },
        logging: { level: 'silent' },
      },
      options.config ?? {},
    ),
  );
  const violations: string[] = [];
  const cleanUp = async () => {
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  };
  let board: Board;
  let app: BaudApp;
  try {
    board = await openBoard(config, options.clock ? { clock: options.clock } : {});
  } catch (error) {
    await cleanUp();
    throw error;
  }
  try {
    app = await buildApp(config, { board, logger: false });
    checkResponsesAgainstDocument(app, violations);
    await app.ready();
  } catch (error) {
    await board.close();
    await cleanUp();
    throw error;
  }
  return {
    app,
    board,
    config,
    dir,
    databaseUrl,
    async userWithToken(username, userOptions = {}) {
      const user = await board.credentials.createAccount({
        username,
        password: userOptions.password ?? 'correct horse battery',
        groups: userOptions.groups ?? [],
      });
      // A real login session row: access tokens are only honoured while their session stands.
      const sessionId = randomUUID();
      const now = board.clock.now().toISOString();
      await board.db
        .insertInto('refreshFamilies')
        .values({
          id: sessionId,
          userId: user.userId,
          createdAt: now,
          expiresAt: new Date(board.clock.now().getTime() + 90 * 86_400_000).toISOString(),
          lastActivityAt: now,
          lastAction: 'Logging in',
          isSecure: 0,
          clientAddress: '127.0.0.1',
          revokedAt: null,
        })
        .execute();
      const { accessToken } = await board.accessTokens.issue({ userId: user.userId, sessionId });
      return { userId: user.userId, token: accessToken, auth: { authorization: `Bearer ${accessToken}` } };
    },
    async close() {
      await app.close();
      await board.close();
      await cleanUp();
      if (violations.length > 0) {
        throw new Error(`answers that do not match docs/openapi.json:\n  ${[...new Set(violations)].join('\n  ')}`);
      }
    },
  };
}

/** Records every answer of `app` that does not match the committed OpenAPI document (see response-validation.ts). */
function checkResponsesAgainstDocument(app: BaudApp, violations: string[]): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload === 'string') {
      const contentType = reply.getHeader('content-type');
      violations.push(
        ...responseViolations(
          request.method,
          request.url,
          reply.statusCode,
          typeof contentType === 'string' ? contentType : undefined,
          payload,
        ),
      );
    }
    return payload;
  });
}

/** Another node on a test board's database: its own board and app, as a second server would have. */
export interface SecondNode {
  readonly board: Board;
  readonly app: BaudApp;
  close(): Promise<void>;
}

/**
 * Opens a second board and app on `test`'s database and configuration, as a second node behind
 * a load balancer would: per-node memory (caches) is its own, the database is shared.
 */
export async function openSecondNode(test: TestBoard, clock?: Clock): Promise<SecondNode> {
  const board = await openBoard(test.config, clock ? { clock } : {});
  const app = await buildApp(test.config, { board, logger: false });
  await app.ready();
  return {
    board,
    app,
    async close() {
      await app.close();
      await board.close();
    },
  };
}

/**
 * A fresh board with two nodes for the tests of the enclosing describe block, opened before
 * them and closed after: `nodeA` (its TestBoard) and `nodeB` (a second app on the same
 * database, with caches of its own), both on `clock`. Read the nodes inside the tests.
 */
export function twoNodesOfOneBoard(
  dialect: Dialect,
  clock: Clock,
): { readonly nodeA: TestBoard; readonly nodeB: BaudApp } {
  let nodeA: TestBoard | undefined;
  let second: SecondNode | undefined;
  beforeAll(async () => {
    nodeA = await createTestBoard(dialect, { clock });
    second = await openSecondNode(nodeA, clock);
  });
  afterAll(async () => {
    await second?.close();
    await nodeA?.close();
  });
  const opened = <T>(node: T | undefined): T => {
    if (node === undefined) throw new Error('the two nodes open in beforeAll');
    return node;
  };
  return {
    get nodeA() {
      return opened(nodeA);
    },
    get nodeB() {
      return opened(second).app;
    },
  };
}

/** Drops a PostgreSQL test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** Merges configuration objects: nested objects merge, everything else is replaced. */
export function deepMerge(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const existing = result[key];
    result[key] = isObject(existing) && isObject(value) ? deepMerge(existing, value) : value;
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
