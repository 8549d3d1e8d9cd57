import { afterAll, beforeAll } from 'vitest';
import type { SessionTokens } from '../../../src/auth/auth-service.js';
import type { Board } from '../../../src/board.js';
import type { UserCaller } from '../../../src/caller.js';
import type { Dialect } from '../../../src/db/database.js';
import { createEventHub, type EventHub } from '../../../src/events/event-hub.js';
import { startCallerSession } from '../../../src/terminal/caller-session.js';
import { createTestBoard, deepMerge, fakeClock, type TestBoard } from '../../support/test-board.js';
import { createManualTimers } from './manual-timers.js';
import { readScreen } from './screen-reader.js';
import { createTestConnection, type TestConnection } from './test-connection.js';

export const PASSWORD = 'correct horse battery';
/** How long a test waits for the session to show something before it fails (never a sleep: it ends early). */
const WAIT_MS = 10_000;

/**
 * Conferences and file areas for the terminal tests:
 * - `main`: `general` and `chatter` anyone may use, `news` users read but only sysops post in,
 *   `staff` only sysops read, `secret` nobody may read (both hidden from the lists of others).
 * - `other`: `offtopic`.
 * - file areas `uploads` (two files are put in by the tests) and `sysfiles` (sysops only).
 */
export const TERMINAL_TEST_CONFIG = {
  general: { boardName: 'Sector 7' },
  messageConferences: {
    main: {
      name: 'Main',
      areas: {
        general: { name: 'General' },
        chatter: { name: 'Chatter' },
        news: { name: 'News', acs: { write: 'GM[sysops]' } },
        staff: { name: 'Staff', acs: { read: 'GM[sysops]', write: 'GM[sysops]' } },
        secret: { name: 'Secret', acs: { read: 'GM[nobody]', write: 'GM[nobody]' } },
      },
    },
    other: { name: 'Other', areas: { offtopic: { name: 'Off topic' } } },
  },
  fileBase: {
    storageTags: { main: 'files/main' },
    areas: {
      uploads: { name: 'Uploads', storageTags: ['main'] },
      sysfiles: { name: 'Sysop files', storageTags: ['main'], acs: { read: 'GM[sysops]' } },
    },
  },
  users: { registration: 'open' },
  contentServers: {
    web: { restApi: { loginThrottle: { maxFailures: 1000, windowSeconds: 900 } } },
    terminal: { idleTimeoutSeconds: 600, loginTimeoutSeconds: 60 },
  },
};

/** One caller dialled in to the test board: what they see, and their keyboard. */
export interface TestCaller {
  readonly connection: TestConnection;
  /** Types text (UTF-8) or raw bytes. */
  type(input: string | Buffer): void;
  /** Waits until text matching `expected` is shown after what was waited for last; returns the text shown up to it. */
  waitFor(expected: string | RegExp): Promise<string>;
  /** The visible screen now. */
  screen(): string;
  /** Everything shown so far, escapes removed. */
  transcript(): string;
  /** Waits until the line is closed. */
  waitForClose(): Promise<void>;
  /** Whether the session said `onLoggedIn`. */
  readonly loggedIn: boolean;
}

export interface TerminalBoard {
  readonly test: TestBoard;
  readonly clock: ReturnType<typeof fakeClock>;
  readonly timers: ReturnType<typeof createManualTimers>;
  /** Failures the sessions logged. */
  readonly logged: unknown[];
  /** A caller on a new connection; `login` as SSH gives it, or null for the telnet prompt. */
  dial(options?: DialOptions): TestCaller;
  /** An account with the test password; returns its id. */
  createUser(username: string, groups?: string[]): Promise<number>;
  /** A caller logged in (at the prompt) as `username` and waiting at the main menu. */
  dialAndLogIn(username: string, options?: DialOptions): Promise<TestCaller>;
  /** The tokens of a login as the SSH server would make it. */
  loginTokens(username: string): Promise<SessionTokens>;
  /** `username` as the services see them in a login session of their own (to post, send mail… behind the caller's back). */
  serviceCaller(username: string): Promise<UserCaller>;
}

export interface DialOptions {
  /** The board the session is given, made from the test's (a service that fails on purpose). */
  readonly board?: (board: Board) => Board;
  readonly login?: SessionTokens | null;
  /** Come as an SSH caller named `new`: straight to the sign-up questions. */
  readonly signUp?: boolean;
  readonly terminalType?: string;
  readonly columns?: number;
  readonly rows?: number;
  readonly remoteAddress?: string;
}

/**
 * A test board (one per describe block) with an event hub and hand-moved timers, and callers
 * that dial in to it through `startCallerSession` on a test connection.
 */
export function terminalBoard(dialect: Dialect, config: Record<string, unknown> = {}): TerminalBoard {
  const clock = fakeClock();
  const timers = createManualTimers(clock);
  const logged: unknown[] = [];
  let test: TestBoard | undefined;
  let hub: EventHub | undefined;
  beforeAll(async () => {
    test = await createTestBoard(dialect, { clock, config: deepMerge(TERMINAL_TEST_CONFIG, config) });
    hub = createEventHub({
      log: test.board.events,
      database: test.board.database,
      pollIntervalMs: 50,
      onError: (error) => logged.push(error),
    });
  });
  afterAll(async () => {
    await hub?.close();
    await test?.close();
  });
  const opened = () => {
    if (!test || !hub) throw new Error('the terminal board opens in beforeAll');
    return { test, hub };
  };

  function dial(options: DialOptions = {}): TestCaller {
    const { test: board, hub: eventHub } = opened();
    const connection = createTestConnection({
      ...(options.terminalType === undefined ? {} : { terminalType: options.terminalType }),
      columns: options.columns ?? 80,
      rows: options.rows ?? 24,
      transport: options.login ? 'ssh' : 'telnet',
      ...(options.remoteAddress === undefined ? {} : { remoteAddress: options.remoteAddress }),
    });
    const charset = ['ansi', 'ansi-bbs', 'syncterm', 'pcansi'].includes(options.terminalType ?? '') ? 'cp437' : 'utf8';
    const view = () => readScreen(connection.written(), { charset, columns: connection.size.columns });
    let mark = 0;
    let loggedIn = false;
    startCallerSession(
      {
        board: options.board ? options.board(board.board) : board.board,
        hub: eventHub,
        timers: timers.timers,
        log: { error: (details) => logged.push(details) },
      },
      connection,
      {
        login: options.login ?? null,
        signUp: options.signUp === true,
        onLoggedIn: () => {
          loggedIn = true;
        },
      },
    );

    function until<T>(check: () => T | undefined, describe: () => string): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        let isDone = false;
        const attempt = () => {
          if (isDone) return;
          const value = check();
          if (value === undefined) return;
          isDone = true;
          clearTimeout(timeout);
          unsubscribe();
          resolve(value);
        };
        const timeout = setTimeout(() => {
          isDone = true;
          unsubscribe();
          reject(
            new Error(
              `${describe()}\n--- screen ---\n${view().screen}\n--- since the last wait ---\n${view().transcript.slice(mark)}`,
            ),
          );
        }, WAIT_MS);
        const unsubscribe = connection.onWrite(attempt);
        attempt();
      });
    }

    return {
      connection,
      type: (input) => connection.type(input),
      waitFor(expected) {
        return until(
          () => {
            const { transcript } = view();
            const rest = transcript.slice(mark);
            const match =
              typeof expected === 'string' ? { index: rest.indexOf(expected), length: expected.length } : null;
            const found =
              match ??
              (() => {
                const result = (expected as RegExp).exec(rest);
                return result ? { index: result.index, length: result[0].length } : { index: -1, length: 0 };
              })();
            if (found.index < 0) return undefined;
            const shown = rest.slice(0, found.index + found.length);
            mark += found.index + found.length;
            return shown;
          },
          () => `waited ${WAIT_MS} ms for ${String(expected)}`,
        );
      },
      screen: () => view().screen,
      transcript: () => view().transcript,
      waitForClose: () =>
        until(
          () => (connection.isClosed ? true : undefined),
          () => 'waited for the line to close',
        ).then(() => {}),
      get loggedIn() {
        return loggedIn;
      },
    };
  }

  return {
    get test() {
      return opened().test;
    },
    clock,
    timers,
    logged,
    dial,
    async createUser(username, groups = []) {
      const user = await opened().test.board.credentials.createAccount({ username, password: PASSWORD, groups });
      return user.userId;
    },
    async dialAndLogIn(username, options = {}) {
      const caller = dial({ ...options, login: null });
      await caller.waitFor('Username: ');
      caller.type(`${username}\r`);
      await caller.waitFor('Password: ');
      caller.type(`${PASSWORD}\r`);
      await caller.waitFor('Your choice: ');
      return caller;
    },
    async loginTokens(username) {
      const { token, refreshToken } = await opened().test.board.auth.login({
        username,
        password: PASSWORD,
        clientAddress: '127.0.0.1',
        isSecure: true,
        via: 'terminal',
      });
      return { token, refreshToken };
    },
    async serviceCaller(username) {
      const { token } = await this.loginTokens(username);
      return opened().test.board.callers.resolve({ accessToken: token.accessToken }, { isSecure: true });
    },
  };
}
