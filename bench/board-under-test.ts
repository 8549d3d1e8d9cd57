import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { type BaudInstallation, type RunningServer, runBaudCommand, startBaudServer } from './baud-process.js';
import type { DatabaseKind } from './bench-results.js';
import type { Cleanup } from './cleanup.js';
import { ftnBoardConfig } from './ftn-toss.js';
import {
  analyzeSchema,
  boardDatabaseUrl,
  dropSchema,
  freshSchemaName,
  postgresPasswordHash,
} from './postgres-schema.js';
import { residentBytes } from './process-memory.js';
import type { Progress } from './progress.js';

export const MESSAGE_AREA = 'general';
export const FILE_AREA = 'uploads';

export interface Account {
  readonly username: string;
  readonly password: string;
}

/** Opens an account with a random password through the CLI (`baud user add`). */
export async function createBenchAccount(baud: BaudInstallation, username: string): Promise<Account> {
  const password = randomBytes(12).toString('hex');
  await runBaudCommand(baud, ['user', 'add', username, '--password-stdin'], { input: password });
  return { username, password };
}

/** A started `baud serve` on a seeded board, with the accounts and key the scenarios use. */
export interface BoardUnderTest {
  readonly server: RunningServer;
  /** How to run `baud` on this board: more nodes (`startBaudServer`), more CLI commands. */
  readonly baud: BaudInstallation;
  /** A node of the same board that takes SSH callers (`terminalNodeConfig`), started with `startBaudServer`. */
  readonly terminalNode: BaudInstallation;
  /** `database.url` of the board (`?schema=` on PostgreSQL). */
  readonly databaseUrl: string;
  /** Reads, posts, uploads and downloads (JWT), and holds the API key. */
  readonly reader: Account;
  /** Only logs in, so its many sessions never end the reader's (maxSessionsPerUser). */
  readonly loginUser: Account;
  readonly apiKey: string;
  readonly seeding: ImportTiming;
  /** The same import by a build that writes no search index (null when not measured). */
  readonly importWithoutIndex: ImportTiming | null;
  readonly idleRssBytes: number;
  /** The stored argon2 hash of `username`. */
  passwordHashOf(username: string): Promise<string>;
  /** PostgreSQL only: ANALYZE the board's tables (see `analyzeSchema`); null on SQLite. */
  readonly analyzeStatistics: (() => Promise<{ autovacuum: string }>) | null;
}

/**
 * The board's configuration: one conference with the big area (read and write need a login),
 * one file area users may upload to (uploads default to sysops only), everything else at its default — the request log included, at `logLevel`.
 * Three deliberate changes: the login throttle allows 1,000,000 attempts per window (its upserts
 * still run on every login, but the login scenario's thousands of logins from one address are
 * not refused); the shutdown waits at most 5 s; and one user may hold 1,000 event streams
 * (default 5; 1,000 is the schema's maximum) on a node that takes 2,000 (default 1,000, no room
 * beside the bench's), because the event fan-out opens all its 1,000 streams as the bench's reader.
 * And one more: a sender may send 1,000,000 mails a window (default 30), so the send scenario
 * measures sending, not the refusal; its window's upsert still runs on every mail.
 * With `isInFtnNetwork` the board is in an FTN network (`ftnBoardConfig`): a conference of echo
 * areas, the hub never polled; every node of the board then runs the network's scanner.
 */
function boardConfig(dataDir: string, databaseUrl: string, logLevel: string, isInFtnNetwork: boolean) {
  const ftn = isInFtnNetwork ? ftnBoardConfig() : null;
  return {
    general: { boardName: 'baud bench' },
    paths: { dataDir },
    database: { url: databaseUrl },
    logging: { level: logLevel },
    contentServers: {
      web: {
        address: '127.0.0.1',
        port: 0,
        shutdownTimeoutSeconds: 5,
        restApi: { loginThrottle: { maxFailures: 1_000_000 } },
      },
    },
    events: { maxStreamsPerUser: 1000, maxStreamsPerNode: 2000 },
    mail: { maxSendsPerWindow: 1_000_000 },
    messageConferences: {
      main: { name: 'Main', areas: { [MESSAGE_AREA]: { name: 'General' } } },
      ...(ftn ? { echomail: ftn.conference } : {}),
    },
    ...(ftn ? { ftn: ftn.ftn } : {}),
    fileBase: {
      storageTags: { main: 'files' },
      areas: { [FILE_AREA]: { name: 'Uploads', storageTags: ['main'], acs: { write: 'GM[users]' } } },
    },
  };
}

/** Callers the terminal node must hold at once: the 500 (`--quick` opens 100). */
export const TERMINAL_NODE_CALLERS = 500;

/**
 * The configuration of a node of the same board (same database, same data directory) that takes
 * terminal callers: the board's, with SSH on (loopback, any free port) and these changes, in a
 * file of its own because the session cap below would change what the board's first node
 * measures (its login scenario logs in thousands of times as one user, and with a cap of 1,000
 * instead of 10 each login's pruning would weigh up to 1,000 live sessions instead of 10):
 * - `maxConnectionsPerNode` 500, the shipped default written out: the full run's 500 idle
 *   callers fill it exactly, so the bench shows the default takes the issue's 500;
 * - `maxConnectionsPerAddress` and `maxUnauthenticatedPerAddress` 1,000 (defaults 10 and 3):
 *   every caller of the bench dials from 127.0.0.1, several logging in at once;
 * - `restApi.maxSessionsPerUser` 1,000 (default 10; the schema's maximum): each caller is a
 *   login session, and the callers are a few bench accounts' (125 each on the full run), where
 *   the default would make each login end the account's oldest caller. Accounts enough for the
 *   default (50) would take the CLI a minute and a half to make.
 */
function terminalNodeConfig(config: ReturnType<typeof boardConfig>) {
  const { contentServers } = config;
  return {
    ...config,
    contentServers: {
      ...contentServers,
      web: { ...contentServers.web, restApi: { ...contentServers.web.restApi, maxSessionsPerUser: 1000 } },
      ssh: { enabled: true, address: '127.0.0.1', port: 0 },
      terminal: {
        maxConnectionsPerNode: TERMINAL_NODE_CALLERS,
        maxConnectionsPerAddress: 1000,
        maxUnauthenticatedPerAddress: 1000,
      },
    },
  };
}

/**
 * Creates a board in `dir` on `database`, seeds it through the real CLI (`baud message import`
 * of `fixture`, `baud user add`, `baud rest api-key generate`), then starts `baud serve` and
 * reads its idle RSS. Everything it creates is registered with `cleanup`.
 */
export async function startBoardUnderTest(options: {
  readonly database: DatabaseKind;
  readonly postgresUrl: string;
  readonly dir: string;
  readonly baudCommand: string;
  /** A build whose imports write no search index (`buildWithoutMessageIndex`): its rate is measured first. */
  readonly baudCommandWithoutIndex?: string;
  readonly fixture: string;
  readonly messageCount: number;
  readonly logLevel: string;
  /** Puts the board in the bench's FTN network (see `boardConfig`). */
  readonly isInFtnNetwork?: boolean;
  readonly progress: Progress;
  readonly cleanup: Cleanup;
}): Promise<BoardUnderTest> {
  const { progress } = options;
  // The same fixture first through a build whose index writes are gone, on a board of its own:
  // the import rate without the search index, minutes from the one with it (same data, same run).
  let withoutIndex: ImportTiming | null = null;
  if (options.baudCommandWithoutIndex !== undefined) {
    const bare = createBoard({ ...options, dir: `${options.dir}-without-index` }, options.baudCommandWithoutIndex);
    progress.log(`  importing the same ${count(options.messageCount)} messages without the search index …`);
    withoutIndex = await importFixture(bare.baud, options.fixture, options.messageCount, progress);
    await bare.remove();
  }
  const { baud, terminalNode, databaseUrl, schema } = createBoard(options, options.baudCommand);
  progress.log(`  seeding ${count(options.messageCount)} messages with baud message import …`);
  const { seconds, messagesPerSec } = await importFixture(baud, options.fixture, options.messageCount, progress);
  const { dir, cleanup } = options;

  const newAccount = (username: string) => createBenchAccount(baud, username);
  const reader = await newAccount('bench');
  const loginUser = await newAccount('bench-login');
  const { key: apiKey } = await runBaudCommand<{ key: string }>(baud, [
    'rest',
    'api-key',
    'generate',
    reader.username,
    '--label',
    'benchmark',
    '--scope',
    'read,write',
  ]);

  const server = await startBaudServer(baud, path.join(dir, 'server.log'), cleanup);
  // Let start-up's garbage settle before reading the idle figure.
  await sleep(2_000);
  const idleRssBytes = residentBytes(server.pid);
  progress.log(
    `  baud serve (pid ${server.pid}) at ${server.apiUrl}, idle RSS ${(idleRssBytes / 2 ** 20).toFixed(1)} MiB`,
  );

  return {
    server,
    baud,
    terminalNode,
    databaseUrl,
    reader,
    loginUser,
    apiKey,
    seeding: { seconds, messagesPerSec },
    importWithoutIndex: withoutIndex,
    idleRssBytes,
    analyzeStatistics: options.database === 'postgres' ? () => analyzeSchema(options.postgresUrl, schema) : null,
    async passwordHashOf(username) {
      if (options.database === 'postgres') return postgresPasswordHash(options.postgresUrl, schema, username);
      const db = new Database(path.join(dir, 'baud.db'), { readonly: true, fileMustExist: true });
      try {
        const row = db.prepare('select password_hash from users where username = ?').get(username) as
          | { password_hash: string }
          | undefined;
        if (!row) throw new Error(`no user ${username}`);
        return row.password_hash;
      } finally {
        db.close();
      }
    },
  };
}

export interface ImportTiming {
  readonly seconds: number;
  readonly messagesPerSec: number;
}

const count = (value: number) => value.toLocaleString('en-US');

/** A fresh board in `dir` (a fresh schema on PostgreSQL, dropped by `remove` or at cleanup) run by `baudCommand`. */
function createBoard(
  options: {
    readonly database: DatabaseKind;
    readonly postgresUrl: string;
    readonly dir: string;
    readonly logLevel: string;
    readonly isInFtnNetwork?: boolean;
    readonly cleanup: Cleanup;
  },
  baudCommand: string,
) {
  const { dir, cleanup } = options;
  mkdirSync(dir, { recursive: true });
  let databaseUrl = `sqlite:${path.join(dir, 'baud.db')}`;
  let schema = '';
  if (options.database === 'postgres') {
    schema = freshSchemaName();
    databaseUrl = boardDatabaseUrl(options.postgresUrl, schema);
  }
  const drop = async () => {
    if (schema !== '') await dropSchema(options.postgresUrl, schema);
  };
  if (schema !== '') cleanup.defer(`drop PostgreSQL schema ${schema}`, drop);
  const config = boardConfig(dir, databaseUrl, options.logLevel, options.isInFtnNetwork === true);
  const configPath = path.join(dir, 'config.hjson');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const terminalConfigPath = path.join(dir, 'terminal-node.hjson');
  writeFileSync(terminalConfigPath, JSON.stringify(terminalNodeConfig(config), null, 2));
  const baud: BaudInstallation = { baudCommand, configPath };
  return {
    baud,
    terminalNode: { baudCommand, configPath: terminalConfigPath },
    databaseUrl,
    schema,
    async remove() {
      await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `baud message import` of the fixture into the board's area and times it (start-up included). */
async function importFixture(
  baud: BaudInstallation,
  fixture: string,
  messageCount: number,
  progress: Progress,
): Promise<ImportTiming> {
  const started = performance.now();
  const { imported } = await runBaudCommand<{ imported: number }>(baud, ['message', 'import', MESSAGE_AREA, fixture], {
    onStderrLine: (line) => {
      const done = /imported (\d+)/.exec(line)?.[1];
      if (done) {
        const seconds = (performance.now() - started) / 1000;
        progress.update(
          `  imported ${count(Number(done))} / ${count(messageCount)} messages (${seconds.toFixed(0)} s)`,
        );
      }
    },
  });
  const seconds = (performance.now() - started) / 1000;
  if (imported !== messageCount) throw new Error(`imported ${imported} of ${messageCount} messages`);
  progress.log(`  imported ${count(imported)} messages in ${seconds.toFixed(1)} s`);
  return { seconds, messagesPerSec: imported / seconds };
}
