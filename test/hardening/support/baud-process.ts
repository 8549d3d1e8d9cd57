import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openBoard } from '../../../src/board.js';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Dialect } from '../../../src/db/database.js';
import { baudCommand, baudEnvironment } from '../../support/baud-command.js';
import { type BaudRun, runBaud } from '../../support/run-baud.js';
import { deepMerge, dropSchema, POSTGRES_URL } from '../../support/test-board.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

export const API_PREFIX = '/_baud/api/v1';

/** Start-up (migrations, schema compilation) takes seconds on a busy 2-core machine. */
const START_TIMEOUT_MS = 90_000;

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One `baud serve` process, its captured output and its fate. */
export interface BaudProcess {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** `http://127.0.0.1:<port>/_baud/api/v1` */
  readonly apiUrl: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Every captured line, stdout first, then stderr. */
  readonly lines: () => string[];
  /** Settles when the process has exited (never rejects). */
  readonly exited: Promise<ProcessExit>;
  readonly hasExited: () => boolean;
  /** Sends a signal without waiting. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves once `pattern` appears in stdout or stderr. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<ProcessExit>;
  /** SIGTERM, then waits for the exit. */
  terminate(): Promise<ProcessExit>;
}

/** A board directory on disk (config.hjson, data, file storage) with its own database. */
export interface HardeningBoard {
  readonly dialect: Dialect;
  readonly dir: string;
  readonly configPath: string;
  readonly databaseUrl: string;
  /** Creates accounts in-process (a CLI run costs a second or more of start-up each). */
  addUsers(users: ReadonlyArray<{ readonly username: string; readonly password: string }>): Promise<void>;
  /** Spawns `baud serve --config <file>` (the compiled command) and waits until it answers. */
  start(): Promise<BaudProcess>;
  /** Runs one `baud …` CLI command against this board's configuration (in this process: test/support/run-baud.ts). */
  cli(args: readonly string[], input?: string): Promise<BaudRun>;
  /** Kills every server this board started that still runs, drops the schema, removes the directory. */
  destroy(): Promise<void>;
}

/**
 * A fresh board for real processes: a temp directory holding config.hjson (port 0, so the
 * server picks a free port and prints it), a SQLite file in it or a new PostgreSQL schema.
 */
export function createHardeningBoard(dialect: Dialect, config: Record<string, unknown> = {}): HardeningBoard {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-hardening-'));
  const schema = `baud_hardening_${randomBytes(6).toString('hex')}`;
  const databaseUrl = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
  const configPath = path.join(dir, 'config.hjson');
  const fileConfig = deepMerge(
    {
      paths: { dataDir: dir },
      database: { url: databaseUrl, poolSize: 8 },
      logging: { level: 'warn' },
      contentServers: { web: { port: 0, address: '127.0.0.1' } },
    },
    config,
  );
  // JSON is valid HJSON.
  writeFileSync(configPath, `${JSON.stringify(fileConfig, null, 2)}\n`);
  const started = new Set<BaudProcess>();

  return {
    dialect,
    dir,
    configPath,
    databaseUrl,

    async addUsers(users) {
      const board = await openBoard(loadConfig({ configPath }));
      try {
        for (const user of users)
          await board.credentials.createAccount({ username: user.username, password: user.password });
      } finally {
        await board.close();
      }
    },

    async start() {
      const server = await spawnServer(configPath);
      started.add(server);
      return server;
    },

    cli(args, input) {
      return runBaud([...args, '--config', configPath], { cwd: ROOT, ...(input === undefined ? {} : { input }) });
    },

    async destroy() {
      for (const server of started) if (!server.hasExited()) await server.kill();
      if (dialect === 'postgres') await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function spawnServer(configPath: string): Promise<BaudProcess> {
  const [program, programArgs] = baudCommand(['serve', '--config', configPath]);
  const child: ChildProcess = spawn(program, programArgs, {
    cwd: ROOT,
    env: baudEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('baud serve did not start');
  let stdout = '';
  let stderr = '';
  let exit: ProcessExit | null = null;
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watcher of watchers) watcher();
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      notify();
      resolve(exit);
    });
  });

  function waitForOutput(pattern: RegExp, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pattern.test(stdout) || pattern.test(stderr)) finish();
        else if (exit) finish(new Error(`baud exited (${JSON.stringify(exit)}) before printing ${pattern}`));
      };
      const timer = setTimeout(() => finish(new Error(`no ${pattern} from baud within ${timeoutMs} ms`)), timeoutMs);
      const finish = (error?: Error) => {
        clearTimeout(timer);
        watchers.delete(check);
        if (error) reject(new Error(`${error.message}\n--- stdout\n${tail(stdout)}\n--- stderr\n${tail(stderr)}`));
        else resolve();
      };
      watchers.add(check);
      check();
    });
  }

  const process_: BaudProcess = {
    pid,
    origin: '',
    apiUrl: '',
    stdout: () => stdout,
    stderr: () => stderr,
    lines: () => [...stdout.split('\n'), ...stderr.split('\n')].filter((line) => line !== ''),
    exited,
    hasExited: () => exit !== null,
    signal(signal) {
      if (exit === null) process.kill(pid, signal);
    },
    waitForOutput,
    async kill() {
      if (exit === null) process.kill(pid, 'SIGKILL');
      return exited;
    },
    async terminate() {
      if (exit === null) process.kill(pid, 'SIGTERM');
      return exited;
    },
  };

  try {
    // `baud serve` prints "  API:  http://127.0.0.1:<port>/_baud/api/v1" once it listens (port 0 included).
    await waitForOutput(/API:\s+http:\/\/\S+/);
    const match = /API:\s+(http:\/\/[^\s]+)/.exec(stdout);
    if (!match?.[1]) throw new Error(`cannot read the API URL from:\n${stdout}`);
    const apiUrl = match[1];
    const origin = new URL(apiUrl).origin;
    await waitUntilAnswering(`${apiUrl}/system/info`);
    return { ...process_, origin, apiUrl };
  } catch (error) {
    if (exit === null) process.kill(pid, 'SIGKILL');
    await exited;
    throw error;
  }
}

async function waitUntilAnswering(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = error;
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer 200 within 30 s: ${String(last)}`);
}

function tail(text: string, lines = 40): string {
  return text.split('\n').slice(-lines).join('\n');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
