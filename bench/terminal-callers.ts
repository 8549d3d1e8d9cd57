import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import ssh2 from 'ssh2';
import stripAnsi from 'strip-ansi';
import type { SshEndpoint } from './baud-process.js';
import type { TerminalCallersResult, TerminalLoginTimes, TimeSpread } from './bench-results.js';
import type { Account } from './board-under-test.js';
import { JSON_HEADERS, logIn, requestJson, requestOnce } from './http-client.js';
import { residentBytes } from './process-memory.js';
import type { Progress } from './progress.js';

/** The main menu's prompt (src/terminal/screens/main-menu.ts): a caller who sees it is at the menu. */
export const MAIN_MENU_PROMPT = 'Your choice: ';
/** Callers dialling at once while the idle ones open: the node's two cores stay busy, its listen backlog far off. */
const OPENING_CONCURRENCY = 10;
/** A call without its main menu this long after dialling counts as failed. */
const CALL_TIMEOUT_MS = 20_000;
/** Quiet time before each RSS reading, so start-up's (or the opening's) garbage and buffers have settled. */
const SETTLE_MS = 2_000;
/** How long after the last caller hung up their login sessions may take to end. */
const SESSIONS_END_TIMEOUT_MS = 10_000;
const POLL_MS = 100;
/** What the callers announce: what OpenSSH sends from a usual terminal, so the screens are drawn in colour and UTF-8. */
const PTY = { term: 'xterm-256color', cols: 80, rows: 24 } as const;

/** A bench account that dials in: its password, an ed25519 key registered for it, and an access token. */
export interface CallerAccount {
  readonly account: Account;
  /** The OpenSSH private key of the key registered with `POST /users/me/ssh-keys`. */
  readonly privateKey: string;
  /** From the login that registered the key: lists the account's sessions (`GET /users/me/sessions`). */
  readonly accessToken: string;
}

/** A new ed25519 key pair as ssh2 makes it: the OpenSSH private key and the `.pub` line. */
function newEd25519Key(comment: string): { privateKey: string; publicKey: string } {
  for (;;) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519', { comment });
    const blob = Buffer.from(pair.public.split(' ')[1] ?? '', 'base64');
    // ssh2 writes a key whose first byte is 0 as 31 bytes (one key in 256), a blob OpenSSH never
    // makes and the board refuses: such a pair is made again.
    if (blob.readUInt32BE(4 + 'ssh-ed25519'.length) === 32) return { privateKey: pair.private, publicKey: pair.public };
  }
}

/**
 * Opens `count` accounts (`newAccount`, the CLI) and registers an ed25519 key for each through
 * the API at `apiUrl` (`POST /users/me/ssh-keys`, with a login's token). Give it a node other
 * than the one measured: the API logins verify passwords with argon2, whose memory would count in
 * the measured node's RSS.
 */
export async function prepareCallerAccounts(options: {
  readonly apiUrl: string;
  readonly count: number;
  readonly newAccount: (username: string) => Promise<Account>;
}): Promise<CallerAccount[]> {
  const accounts: CallerAccount[] = [];
  for (let index = 1; index <= options.count; index += 1) {
    const account = await options.newAccount(`bench-caller-${index}`);
    const accessToken = await logIn(options.apiUrl, account.username, account.password);
    const { privateKey, publicKey } = newEd25519Key(`${account.username}@bench`);
    await requestJson(`${options.apiUrl}/users/me/ssh-keys`, 201, {
      method: 'POST',
      headers: { ...JSON_HEADERS, authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ publicKey, label: 'bench caller' }),
    });
    accounts.push({ account, privateKey, accessToken });
  }
  return accounts;
}

/** One caller at the main menu. */
interface Call {
  readonly client: ssh2.Client;
  /** From the client's `ready` (the login accepted) to the first main-menu prompt. */
  readonly readyToMenuMs: number;
  /** From dialling to the first main-menu prompt. */
  readonly connectToMenuMs: number;
  isClosed(): boolean;
  /** Resolves once the connection is closed (at once if it is). */
  readonly closed: Promise<void>;
}

/** What the bench logs in with: the account's registered key, or its password (one argon2 verification). */
type Proof = { readonly privateKey: string } | { readonly password: string };

/** The `SHA256:…` fingerprint of a host key blob, as OpenSSH and `baud serve` print it. */
function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Dials `ssh` as `username` with ssh2's client, checks the host key against the node's
 * fingerprint, logs in with `proof`, asks for a shell on an 80×24 xterm and resolves once the
 * screen shows the welcome (`Welcome, <username>!`) and then the main menu's prompt. The caller
 * stays connected and idle until `client.end()`. Rejects (and hangs up) when the node refuses,
 * closes or shows no menu within CALL_TIMEOUT_MS.
 */
function dial(ssh: SshEndpoint, username: string, proof: Proof): Promise<Call> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    let isClosed = false;
    const closed = new Promise<void>((done) =>
      client.once('close', () => {
        isClosed = true;
        done();
      }),
    );
    let isSettled = false;
    const fail = (why: string) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timeout);
      client.end();
      reject(new Error(why));
    };
    const timeout = setTimeout(() => fail(`no main menu within ${CALL_TIMEOUT_MS / 1000} s`), CALL_TIMEOUT_MS);
    // After the menu showed, errors (a reset as the node stops) end nothing the bench waits for.
    client.on('error', (error) => fail(error.message));
    client.once('close', () => fail('the connection closed before the main menu'));
    const dialledAt = performance.now();
    client.once('ready', () => {
      const readyAt = performance.now();
      client.shell(PTY, (error, channel) => {
        if (error) return fail(`no shell: ${error.message}`);
        channel.setEncoding('utf8');
        const welcome = `Welcome, ${username}!`;
        let screen = '';
        // Read to the end, menu or not: a channel nobody reads stops the node's writes to it.
        channel.on('data', (text: string) => {
          if (isSettled) return;
          screen += text;
          // The prompt and the welcome are looked for in the text between colour and cursor sequences.
          const shown = stripAnsi(screen);
          const promptAt = shown.indexOf(MAIN_MENU_PROMPT);
          if (promptAt === -1) return;
          const menuAt = performance.now();
          if (!shown.slice(0, promptAt).includes(welcome)) return fail(`the main menu came without "${welcome}"`);
          isSettled = true;
          clearTimeout(timeout);
          resolve({
            client,
            readyToMenuMs: menuAt - readyAt,
            connectToMenuMs: menuAt - dialledAt,
            isClosed: () => isClosed,
            closed,
          });
        });
      });
    });
    client.connect({
      host: ssh.address,
      port: ssh.port,
      username,
      ...proof,
      hostVerifier: (key: Buffer) => fingerprintOf(key) === ssh.fingerprint,
      readyTimeout: CALL_TIMEOUT_MS,
    });
  });
}

/** Nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

function spreadOf(times: readonly number[]): TimeSpread {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0 };
}

interface SessionList {
  readonly data: readonly { readonly via: 'api' | 'terminal' }[];
}

/** Live terminal sessions of the accounts, counted in each one's own list (`GET /users/me/sessions`). */
async function liveTerminalSessions(apiUrl: string, accounts: readonly CallerAccount[]): Promise<number> {
  let live = 0;
  for (const { accessToken } of accounts) {
    const { data } = await requestJson<SessionList>(`${apiUrl}/users/me/sessions`, 200, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    live += data.filter((session) => session.via === 'terminal').length;
  }
  return live;
}

/** The account the `index`th caller dials in as: round the accounts, so each holds as many callers. */
function accountFor(accounts: readonly CallerAccount[], index: number): CallerAccount {
  const caller = accounts[index % accounts.length];
  if (!caller) throw new Error('no bench account to dial in with');
  return caller;
}

/** Dials `logins` callers one after another and hangs each up at the menu, timing both spans. */
async function timeLogins(
  ssh: SshEndpoint,
  method: TerminalLoginTimes['method'],
  accounts: readonly CallerAccount[],
  logins: number,
  progress: Progress,
): Promise<TerminalLoginTimes> {
  const readyToMenu: number[] = [];
  const connectToMenu: number[] = [];
  const failures: string[] = [];
  for (let login = 0; login < logins; login += 1) {
    const { account, privateKey } = accountFor(accounts, login);
    const proof = method === 'key' ? { privateKey } : { password: account.password };
    try {
      const call = await dial(ssh, account.username, proof);
      readyToMenu.push(call.readyToMenuMs);
      connectToMenu.push(call.connectToMenuMs);
      call.client.end();
      await call.closed;
    } catch (error) {
      failures.push((error as Error).message);
    }
    progress.update(
      `  terminal callers: ${login + 1} / ${logins} logins with ${method === 'key' ? 'a key' : 'a password'}`,
    );
  }
  return {
    method,
    logins: readyToMenu.length,
    failures: failures.length,
    firstFailure: failures[0] ?? null,
    readyToMenu: spreadOf(readyToMenu),
    connectToMenu: spreadOf(connectToMenu),
  };
}

/**
 * Terminal callers over SSH on one node (`ssh`, its API at `apiUrl`, process `serverPid`):
 *
 * 1. Idle callers: reads the node's RSS, dials `callers` callers (OPENING_CONCURRENCY at a time,
 *    round the `accounts`, each with its registered key), each logged in and at the main menu,
 *    and reads the RSS again with all of them connected and idle; counts their live terminal
 *    sessions in the accounts' own session lists; hangs every one up, then checks the node still
 *    answers `GET /system/info` and that every session ended (SESSIONS_END_TIMEOUT_MS at most).
 * 2. Login to the main menu: `logins` calls one after another with a key, then as many with the
 *    password, each hung up at the menu before the next dials. Two spans each: from the
 *    client's `ready` (the node accepted the login) to the first `Your choice: ` (shell, welcome
 *    screen and menu), and from dialling (TCP, key exchange and the login itself too: with a
 *    password that is one argon2 verification).
 *
 * Give it a node of its own, freshly started: an RSS difference means little on a heap that
 * earlier work left to shrink. One-off costs of the first caller (code compiled on first use,
 * the node's event hub) count in the per-caller figure, which is an upper bound. The callers run
 * in this process, not the node's: both share the machine's cores, so times are upper bounds too.
 */
export async function measureTerminalCallers(options: {
  readonly ssh: SshEndpoint;
  readonly apiUrl: string;
  readonly serverPid: number;
  readonly accounts: readonly CallerAccount[];
  readonly callers: number;
  readonly logins: number;
  readonly progress: Progress;
}): Promise<TerminalCallersResult> {
  const { ssh, apiUrl, serverPid, accounts, progress } = options;
  const problems: string[] = [];
  const calls: Call[] = [];
  const refusals: string[] = [];
  let rssBeforeBytes = 0;
  let rssWithCallersBytes = 0;
  let openSeconds = 0;
  let held = 0;
  let sessionsWhileHeld = 0;
  try {
    await sleep(SETTLE_MS);
    rssBeforeBytes = residentBytes(serverPid);
    const openStarted = performance.now();
    for (let opened = 0; opened < options.callers; opened += OPENING_CONCURRENCY) {
      const batch = Math.min(OPENING_CONCURRENCY, options.callers - opened);
      const results = await Promise.allSettled(
        Array.from({ length: batch }, (_, index) => {
          const { account, privateKey } = accountFor(accounts, opened + index);
          return dial(ssh, account.username, { privateKey });
        }),
      );
      for (const result of results) {
        if (result.status === 'fulfilled') calls.push(result.value);
        else refusals.push((result.reason as Error).message);
      }
      progress.update(`  terminal callers: ${calls.length} / ${options.callers} at the main menu`);
    }
    openSeconds = (performance.now() - openStarted) / 1000;
    await sleep(SETTLE_MS);
    rssWithCallersBytes = residentBytes(serverPid);
    held = calls.filter((call) => !call.isClosed()).length;
    sessionsWhileHeld = await liveTerminalSessions(apiUrl, accounts);
  } finally {
    for (const call of calls) call.client.end();
  }
  if (refusals.length > 0)
    problems.push(`${refusals.length} of ${options.callers} callers never reached the menu (first: ${refusals[0]})`);
  if (held < calls.length) problems.push(`${calls.length - held} callers were hung up while idle`);
  if (sessionsWhileHeld !== held)
    problems.push(`${held} callers held, but their accounts had ${sessionsWhileHeld} live terminal sessions`);

  await Promise.all(calls.map((call) => call.closed));
  const closedAt = performance.now();
  const info = await requestOnce(`${apiUrl}/system/info`);
  if (info.status !== 200) problems.push(`after the callers hung up, /system/info answered ${info.status}`);
  let sessionsEndedMs: number | null = null;
  for (;;) {
    const live = await liveTerminalSessions(apiUrl, accounts);
    if (live === 0) {
      sessionsEndedMs = performance.now() - closedAt;
      break;
    }
    if (performance.now() - closedAt > SESSIONS_END_TIMEOUT_MS) {
      problems.push(
        `${live} terminal sessions still live ${SESSIONS_END_TIMEOUT_MS / 1000} s after every caller hung up`,
      );
      break;
    }
    await sleep(POLL_MS);
  }
  await sleep(SETTLE_MS);
  const rssAfterCloseBytes = residentBytes(serverPid);
  progress.log(
    `  terminal callers: ${held} / ${options.callers} held at the main menu (opened in ${openSeconds.toFixed(1)} s); server RSS ${mib(rssBeforeBytes)} → ${mib(rssWithCallersBytes)} MiB (${((rssWithCallersBytes - rssBeforeBytes) / Math.max(1, held) / 1024).toFixed(1)} KiB per caller), ${mib(rssAfterCloseBytes)} MiB after they hung up`,
  );

  const logins: TerminalLoginTimes[] = [];
  for (const method of ['key', 'password'] as const) {
    const times = await timeLogins(ssh, method, accounts, options.logins, progress);
    logins.push(times);
    if (times.failures > 0)
      problems.push(
        `${times.failures} of ${options.logins} logins with a ${method} failed (first: ${times.firstFailure})`,
      );
    progress.log(
      `  login → main menu with a ${method}, one at a time: ready → menu p50 ${times.readyToMenu.p50Ms.toFixed(1)} ms, p99 ${times.readyToMenu.p99Ms.toFixed(1)} ms; dial → menu p50 ${times.connectToMenu.p50Ms.toFixed(1)} ms, p99 ${times.connectToMenu.p99Ms.toFixed(1)} ms`,
    );
  }

  return {
    callers: options.callers,
    accounts: accounts.length,
    held,
    openSeconds,
    rssBeforeBytes,
    rssWithCallersBytes,
    rssAfterCloseBytes,
    bytesPerCaller: (rssWithCallersBytes - rssBeforeBytes) / Math.max(1, held),
    sessionsWhileHeld,
    sessionsEndedMs,
    logins,
    problem: problems.length > 0 ? problems.join('; ') : null,
  };
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
