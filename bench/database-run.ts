import os from 'node:os';
import path from 'node:path';
import { verify } from '@node-rs/argon2';
import { startBaudServer } from './baud-process.js';
import type {
  BenchSettings,
  DatabaseKind,
  DatabaseRun,
  EchomailPostingResult,
  EventFanoutResult,
  FtnTossResult,
  LoginCost,
  RequestScenarioResult,
  TerminalCallersResult,
} from './bench-results.js';
import {
  type BoardUnderTest,
  createBenchAccount,
  FILE_AREA,
  MESSAGE_AREA,
  startBoardUnderTest,
  TERMINAL_NODE_CALLERS,
} from './board-under-test.js';
import type { CeilingServer } from './ceiling.js';
import type { Cleanup } from './cleanup.js';
import { measureEventFanout } from './event-fanout.js';
import { measureEchomailPosting } from './ftn-export.js';
import { ECHO_AREAS, ftnSpool, measureFtnToss, POSTED_ECHO_AREA, type TossFixture } from './ftn-toss.js';
import { JSON_HEADERS, logIn, requestJson } from './http-client.js';
import type { LoadDriver } from './load-driver.js';
import { THREAD_LEVELS, THREAD_MESSAGES } from './message-fixture.js';
import { peakResidentBytes, residentBytes } from './process-memory.js';
import type { Progress } from './progress.js';
import { issueScenarios, measureRequestScenario } from './request-scenarios.js';
import { measureTerminalCallers, prepareCallerAccounts } from './terminal-callers.js';
import { measureDownload, measureUpload, type TransferFile } from './transfers.js';
import { measureTwoFactorLogin } from './two-factor-login.js';

interface MessagePage {
  readonly data: readonly { readonly uuid: string; readonly messageId: number }[];
  readonly meta: { readonly nextCursor: string | null };
}

interface ThreadPage {
  readonly data: readonly { readonly depth: number }[];
  readonly meta: { readonly nextCursor: string | null };
}

const WALK_LIMIT = 100;
const listPath = `/messages/areas/${MESSAGE_AREA}/messages`;
/** Mails in the reader's inbox: more than a page. (That a 100,000-mail box pages alike is a query-plan test's.) */
const INBOX_MAILS = 40;
/** Accounts the terminal callers dial in as: 125 callers each on the full run (the terminal node allows 1,000 sessions a user). */
const TERMINAL_CALLER_ACCOUNTS = 4;

/**
 * Follows `nextCursor` through the whole area in `order`, 100 messages a page, counting them
 * (so the seeding is checked end to end), and returns the cursor that fetched the last page:
 * the deep page starts there, 100 messages before the far end.
 */
async function walkArea(apiUrl: string, accessToken: string, progress: Progress, order: 'oldest' | 'newest') {
  const orderQuery = order === 'oldest' ? '' : '&order=newest';
  const started = performance.now();
  const headers = { authorization: `Bearer ${accessToken}` };
  let cursor: string | null = null;
  const cursors: string[] = [];
  let pages = 0;
  let messagesSeen = 0;
  let lastPageSize = 0;
  let oldestUuid: string | undefined;
  for (;;) {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page: MessagePage = await requestJson<MessagePage>(
      `${apiUrl}${listPath}?limit=${WALK_LIMIT}${orderQuery}${query}`,
      200,
      { headers },
    );
    pages += 1;
    oldestUuid ??= page.data[0]?.uuid;
    messagesSeen += page.data.length;
    lastPageSize = page.data.length;
    if (pages % 200 === 0)
      progress.update(
        `  walking the area ${order} first for the deep cursor: ${messagesSeen.toLocaleString('en-US')} messages`,
      );
    if (page.meta.nextCursor === null) break;
    cursor = page.meta.nextCursor;
    cursors.push(cursor);
  }
  if (cursor === null || oldestUuid === undefined) throw new Error('the area has a single page: no deep cursor');
  return {
    oldestUuid,
    deepCursor: cursor,
    cursors,
    walk: { pages, messagesSeen, seconds: (performance.now() - started) / 1000 },
    deepPageAfterMessage: messagesSeen - lastPageSize,
  };
}

/**
 * Follows the big thread of the fixture (rooted at its first message) page by page, counting
 * its messages and its deepest level, and returns the path of its last page.
 */
async function walkThread(apiUrl: string, accessToken: string, rootUuid: string) {
  const headers = { authorization: `Bearer ${accessToken}` };
  const threadPath = `/messages/${rootUuid}/thread`;
  let cursor: string | null = null;
  let lastPath = threadPath;
  let messagesSeen = 0;
  let deepest = 0;
  for (;;) {
    const path: string = cursor === null ? threadPath : `${threadPath}?cursor=${encodeURIComponent(cursor)}`;
    const page: ThreadPage = await requestJson<ThreadPage>(`${apiUrl}${path}`, 200, { headers });
    messagesSeen += page.data.length;
    deepest = page.data.reduce((most, message) => Math.max(most, message.depth), deepest);
    if (page.meta.nextCursor === null) return { firstPath: threadPath, lastPath, messagesSeen, levels: deepest + 1 };
    lastPath = path;
    cursor = page.meta.nextCursor;
  }
}

/**
 * Memory after a crawl: the server's RSS after start, after the walk that found the deep
 * cursor (one client reading the whole area, 100 messages a page) and after a second such
 * walk, each read from /proc right after the walk ends — what the node's read caches keep of
 * pages no one will ask for again.
 */
async function measureCrawlMemory(
  board: BoardUnderTest,
  apiUrl: string,
  accessToken: string,
  progress: Progress,
): Promise<DatabaseRun['crawlMemory']> {
  const { pid } = board.server;
  const afterWalkBytes = residentBytes(pid);
  await walkArea(apiUrl, accessToken, progress, 'oldest');
  const afterSecondWalkBytes = residentBytes(pid);
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  progress.log(
    `  memory after a crawl: RSS ${mib(board.idleRssBytes)} MiB after start → ${mib(afterWalkBytes)} MiB after one walk → ${mib(afterSecondWalkBytes)} MiB after a second`,
  );
  return { afterStartBytes: board.idleRssBytes, afterWalkBytes, afterSecondWalkBytes };
}

/** Page sizes of the spread scenario: with every walk cursor, each one a different page to remember. */
const SPREAD_LIMITS = [21, 22, 23, 24, 25, 26, 27, 28, 29];

/**
 * Pages all over the area, as many different readers paging through it ask for them: every
 * cursor of the walk with each of SPREAD_LIMITS, so each path comes round again only after
 * thousands of others — longer than a node remembers a page (one second), even on --quick.
 */
function spreadPagePaths(cursors: readonly string[]): string[] {
  return SPREAD_LIMITS.flatMap((limit) =>
    cursors.map((cursor) => `${listPath}?limit=${limit}&cursor=${encodeURIComponent(cursor)}`),
  );
}

async function medianRequestMs(url: string, headers: Record<string, string>, rounds = 3): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const started = performance.now();
    await requestJson<MessagePage>(url, 200, { headers });
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)] ?? 0;
}

/**
 * PostgreSQL only: times page 1 and page 2 (a cursor page, as every deep page is) right after
 * the import, runs ANALYZE (see `analyzeSchema`), and times them again. Measuring without
 * statistics would measure the planner's guess, not baud; the before figure is kept because
 * it is what a board sees after an import until autovacuum (if on) gets to the table.
 */
async function gatherStatistics(
  board: BoardUnderTest,
  apiUrl: string,
  headers: Record<string, string>,
  progress: Progress,
): Promise<DatabaseRun['statistics']> {
  const { analyzeStatistics } = board;
  if (analyzeStatistics === null) return null;
  const firstUrl = `${apiUrl}${listPath}`;
  const first = await requestJson<MessagePage>(firstUrl, 200, { headers });
  const cursorUrl = `${firstUrl}?cursor=${encodeURIComponent(first.meta.nextCursor ?? '')}`;
  const firstBefore = await medianRequestMs(firstUrl, headers);
  const cursorBefore = await medianRequestMs(cursorUrl, headers);
  const started = performance.now();
  const { autovacuum } = await analyzeStatistics();
  const analyzeSeconds = (performance.now() - started) / 1000;
  const statistics = {
    autovacuum,
    analyzeSeconds,
    firstPageMs: { before: firstBefore, after: await medianRequestMs(firstUrl, headers) },
    cursorPageMs: { before: cursorBefore, after: await medianRequestMs(cursorUrl, headers) },
  };
  progress.log(
    `  ANALYZE after the import (autovacuum is ${autovacuum} here) took ${analyzeSeconds.toFixed(1)} s: page 1 ${statistics.firstPageMs.before.toFixed(0)} → ${statistics.firstPageMs.after.toFixed(0)} ms, page 2 ${statistics.cursorPageMs.before.toFixed(0)} → ${statistics.cursorPageMs.after.toFixed(0)} ms`,
  );
  return statistics;
}

function argon2Parameters(hash: string): string {
  const match = /^\$(argon2\w+)\$v=\d+\$([^$]+)\$/.exec(hash);
  return match ? `${match[1]} ${match[2]}` : 'unknown';
}

/** Times argon2 verifications of the stored hash one after another, here, while the server idles. */
async function measureLoginCost(board: BoardUnderTest, rounds: number, loginReqPerSec: number): Promise<LoginCost> {
  const hash = await board.passwordHashOf(board.loginUser.username);
  const times: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const started = performance.now();
    if (!(await verify(hash, board.loginUser.password))) throw new Error('argon2 rejected the login password');
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const argon2Ms = times[Math.floor(times.length / 2)] ?? 0;
  const argon2BoundReqPerSec = (os.availableParallelism() * 1000) / argon2Ms;
  return {
    argon2Ms,
    argon2Parameters: argon2Parameters(hash),
    argon2BoundReqPerSec,
    ratioToArgon2Bound: loginReqPerSec / argon2BoundReqPerSec,
  };
}

/**
 * Everything measured on one database: a seeded, started board; the request scenarios,
 * each against the ceiling in the same minute; posting with and without an echomail area (the
 * board is in an FTN network); login's argon2 cost; upload and download; event fan-out to 1,000
 * streams on a second node of the board; idle SSH callers and login → main menu on a third; and,
 * once no node runs, `baud ftn toss` of the generated packet set.
 */
export async function runDatabase(options: {
  readonly database: DatabaseKind;
  readonly postgresUrl: string;
  readonly dir: string;
  readonly baudCommand: string;
  /** The same build with no search index writes, whose import rate is measured first. */
  readonly baudCommandWithoutIndex: string;
  readonly fixture: string;
  /** The echomail bundles `baud ftn toss` takes at the end. */
  readonly tossFixture: TossFixture;
  readonly transferFile: TransferFile;
  readonly settings: BenchSettings;
  readonly driver: LoadDriver;
  readonly ceiling: CeilingServer;
  readonly progress: Progress;
  readonly cleanup: Cleanup;
}): Promise<DatabaseRun> {
  const { settings, progress, driver, ceiling } = options;
  const board = await startBoardUnderTest({
    database: options.database,
    postgresUrl: options.postgresUrl,
    dir: options.dir,
    baudCommand: options.baudCommand,
    baudCommandWithoutIndex: options.baudCommandWithoutIndex,
    fixture: options.fixture,
    messageCount: settings.messageCount,
    logLevel: settings.logLevel,
    isInFtnNetwork: true,
    progress,
    cleanup: options.cleanup,
  });
  const { server, reader } = board;
  const apiUrl = server.apiUrl;
  const problems: string[] = [];
  // Access tokens live 15 minutes: each scenario gets one fresh from a real login.
  const freshToken = () => logIn(apiUrl, reader.username, reader.password);
  const bearer = async () => ({ authorization: `Bearer ${await freshToken()}` });

  const statistics = await gatherStatistics(board, apiUrl, await bearer(), progress);
  const { oldestUuid, deepCursor, cursors, walk, deepPageAfterMessage } = await walkArea(
    apiUrl,
    await freshToken(),
    progress,
    'oldest',
  );
  progress.log(
    `  walked ${walk.pages.toLocaleString('en-US')} pages (${walk.messagesSeen.toLocaleString('en-US')} messages) in ${walk.seconds.toFixed(1)} s`,
  );
  const crawlMemory = await measureCrawlMemory(board, apiUrl, await freshToken(), progress);
  if (walk.messagesSeen !== settings.messageCount) {
    problems.push(`walking the area saw ${walk.messagesSeen} messages, not ${settings.messageCount}`);
  }
  const thread = await walkThread(apiUrl, await freshToken(), oldestUuid);
  progress.log(`  the big thread: ${thread.messagesSeen.toLocaleString('en-US')} messages, ${thread.levels} levels`);
  if (thread.messagesSeen !== THREAD_MESSAGES || thread.levels !== THREAD_LEVELS) {
    problems.push(`the big thread holds ${thread.messagesSeen} messages in ${thread.levels} levels`);
  }
  // The same area from its newest end: the deep page is the one next to its oldest message.
  const newestWalk = await walkArea(apiUrl, await freshToken(), progress, 'newest');
  if (newestWalk.walk.messagesSeen !== settings.messageCount) {
    problems.push(
      `walking the area newest first saw ${newestWalk.walk.messagesSeen} messages, not ${settings.messageCount}`,
    );
  }
  const newestDeepPath = `${listPath}?order=newest&cursor=${encodeURIComponent(newestWalk.deepCursor)}`;
  const deepPath = `${listPath}?cursor=${encodeURIComponent(deepCursor)}`;
  const deepPage = await requestJson<MessagePage>(`${apiUrl}${deepPath}`, 200, { headers: await bearer() });
  const detailUuid = deepPage.data[0]?.uuid;
  if (deepPage.data.length !== 25 || !detailUuid) problems.push(`the deep page holds ${deepPage.data.length} messages`);

  // Half the area read: unreadCount must cost what it costs at either end (no count of the other half).
  const pointerAfterMessage = Math.floor(settings.messageCount / 2);
  await requestJson(`${apiUrl}/messages/areas/${MESSAGE_AREA}/pointer`, 200, {
    method: 'PUT',
    headers: { ...JSON_HEADERS, ...(await bearer()) },
    body: JSON.stringify({ lastReadMessageId: pointerAfterMessage }),
  });
  // A full inbox page 1 for the reader: mail from the login user (its own session, its own token).
  const mailSender = {
    authorization: `Bearer ${await logIn(apiUrl, board.loginUser.username, board.loginUser.password)}`,
  };
  for (let n = 0; n < INBOX_MAILS; n += 1) {
    await requestJson(`${apiUrl}/mail`, 201, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...mailSender },
      body: JSON.stringify({ to: reader.username, subject: `Mail ${n}`, body: 'A mail for the inbox page.' }),
    });
  }
  const scenarios = issueScenarios({
    listPath,
    deepPath,
    deepPageAfterMessage,
    newestPath: `${listPath}?order=newest`,
    newestDeepPath,
    rareWord: String(Math.floor(settings.messageCount / 3)),
    pointerAfterMessage,
    threadFirstPath: thread.firstPath,
    threadLastPath: thread.lastPath,
    areaPath: `/messages/areas/${MESSAGE_AREA}`,
    spreadPaths: spreadPagePaths(cursors),
    detailUuid: detailUuid ?? 'missing',
    apiKey: board.apiKey,
    loginUser: board.loginUser,
    mailRecipient: board.loginUser.username,
    bearer,
    readConnections: settings.readConnections,
    writeConnections: settings.writeConnections,
  });
  const results: RequestScenarioResult[] = [];
  for (const scenario of scenarios) {
    const result = await measureRequestScenario(await scenario(), { apiUrl, driver, ceiling, settings, progress });
    results.push(result);
    if (result.problem) problems.push(result.problem);
  }

  // Issue 35: the post scenario with and without an echomail area, the node's scanner exporting.
  let echomailPosting: EchomailPostingResult | null = null;
  try {
    echomailPosting = await measureEchomailPosting({
      apiUrl,
      bearer,
      plainAreaTag: MESSAGE_AREA,
      echoAreaTag: POSTED_ECHO_AREA,
      echoTag: ECHO_AREAS[POSTED_ECHO_AREA] ?? '',
      outbound: ftnSpool(options.dir).hubOutbound,
      connections: settings.writeConnections,
      // Short rounds, taking turns often: both areas see the same neighbours on a shared machine.
      rounds: settings.quick ? 6 : 10,
      roundSeconds: settings.quick ? 1 : 2,
      warmupSeconds: settings.warmupSeconds,
      progress,
    });
    if (echomailPosting.problem) problems.push(echomailPosting.problem);
  } catch (error) {
    problems.push(`posting with an echomail area: ${(error as Error).message}`);
  }

  const loginResult = results.find((result) => result.id === 'login');
  let login =
    loginResult && !loginResult.problem
      ? await measureLoginCost(board, settings.quick ? 5 : 15, loginResult.baud.reqPerSec)
      : null;
  if (login) {
    progress.log(
      `  argon2 (${login.argon2Parameters}): ${login.argon2Ms.toFixed(1)} ms per verification → at most ${Math.round(login.argon2BoundReqPerSec)} logins/s on ${os.availableParallelism()} cores; measured ${(login.ratioToArgon2Bound * 100).toFixed(0)}% of that`,
    );
    const twoFactor = await measureTwoFactorLogin({
      apiUrl,
      plain: board.loginUser,
      newAccount: (username) => createBenchAccount(board.baud, username),
      rounds: settings.quick ? 6 : 16,
    }).catch((error: unknown) => {
      problems.push(`login with TOTP: ${(error as Error).message}`);
      return null;
    });
    login = { ...login, twoFactor };
    if (twoFactor) {
      progress.log(
        `  login with a TOTP code ${twoFactor.totpLoginMs.toFixed(1)} ms, without ${twoFactor.plainLoginMs.toFixed(1)} ms (median of ${twoFactor.rounds} each, one at a time): ×${twoFactor.ratio.toFixed(2)}`,
      );
    }
  }

  const { transferFile } = options;
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  progress.update(`  uploading ${mib(transferFile.bytes)} MiB (and copying it as the reference) …`);
  const uploaded = await measureUpload({
    apiUrl,
    accessToken: await freshToken(),
    areaTag: FILE_AREA,
    file: transferFile,
    serverPid: server.pid,
    scratchFile: path.join(options.dir, 'copy.bin'),
  });
  const upload = uploaded.result;
  if (upload.problem) problems.push(upload.problem);
  progress.log(
    `  upload ${mib(upload.bytes)} MiB: ${mib(upload.baudBytesPerSec)} MiB/s vs stream copy ${mib(upload.referenceBytesPerSec)} MiB/s (${(upload.ratio * 100).toFixed(0)}%), server RSS +${mib(upload.rssGrowthBytes)} MiB`,
  );
  let download = null;
  if (uploaded.fileId !== null) {
    download = await measureDownload({
      apiUrl,
      accessToken: await freshToken(),
      fileId: uploaded.fileId,
      file: transferFile,
      ceiling,
      serverPid: server.pid,
      rounds: 3,
      progress,
    });
    if (download.problem) problems.push(download.problem);
    progress.log(
      `  download ${mib(download.bytes)} MiB: ${mib(download.baudBytesPerSec)} MiB/s vs raw createReadStream server ${mib(download.referenceBytesPerSec)} MiB/s (${(download.ratio * 100).toFixed(0)}%)`,
    );
  }

  // Issue: 1,000 streams on one node (on --quick too: opening them takes seconds), 20 posts/s.
  // They get a node of their own, started now on the same board: after the scenarios and the
  // transfers this node's heap shrinks and grows on its own (a quick run read 286 MiB before the
  // streams and 256 MiB with them), which drowns what 1,000 idle streams cost.
  let eventFanout: EventFanoutResult | null = null;
  try {
    const node = await startBaudServer(board.baud, path.join(options.dir, 'event-fanout-node.log'), options.cleanup);
    try {
      eventFanout = await measureEventFanout({
        apiUrl: node.apiUrl,
        accessToken: await freshToken(),
        areaTag: MESSAGE_AREA,
        serverPid: node.pid,
        streams: 1000,
        postsPerSecond: 20,
        seconds: settings.quick ? 5 : 15,
        progress,
      });
    } finally {
      await node.stop();
    }
  } catch (error) {
    // Kept apart from the figures measured before it, which still get reported.
    problems.push(`event fan-out: ${(error as Error).message}`);
  }
  if (eventFanout) {
    const { p50Ms, p99Ms, maxMs, deliveries, expectedDeliveries, streams } = eventFanout;
    if (eventFanout.problem) problems.push(`event fan-out: ${eventFanout.problem}`);
    progress.log(
      `  event fan-out to ${streams} streams on a fresh node: ${deliveries.toLocaleString('en-US')} / ${expectedDeliveries.toLocaleString('en-US')} delivered, p50 ${p50Ms.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms; server RSS ${mib(eventFanout.rssBeforeBytes)} → ${mib(eventFanout.rssWithStreamsBytes)} MiB (${(eventFanout.bytesPerStream / 1024).toFixed(1)} KiB per idle stream)`,
    );
  }

  // Issue: how many idle SSH callers one node holds (500), and login → main menu. A node of
  // their own again (the board's terminal node: SSH on, see terminalNodeConfig), for the same
  // reason as the streams; the accounts' keys are registered through this node's API first, so
  // the argon2 of those logins stays out of the measured node's memory.
  let terminalCallers: TerminalCallersResult | null = null;
  try {
    const accounts = await prepareCallerAccounts({
      apiUrl,
      count: TERMINAL_CALLER_ACCOUNTS,
      newAccount: (username) => createBenchAccount(board.baud, username),
    });
    const node = await startBaudServer(
      board.terminalNode,
      path.join(options.dir, 'terminal-node.log'),
      options.cleanup,
    );
    try {
      if (node.ssh === null) throw new Error('the terminal node printed no SSH line');
      terminalCallers = await measureTerminalCallers({
        ssh: node.ssh,
        apiUrl: node.apiUrl,
        serverPid: node.pid,
        accounts,
        callers: settings.quick ? 100 : TERMINAL_NODE_CALLERS,
        logins: settings.quick ? 50 : 200,
        progress,
      });
    } finally {
      await node.stop();
    }
  } catch (error) {
    problems.push(`terminal callers: ${(error as Error).message}`);
  }
  if (terminalCallers?.problem) problems.push(`terminal callers: ${terminalCallers.problem}`);

  const peakRssBytes = peakResidentBytes(server.pid);
  await server.stop();

  // Issue 35: the toss, as an operator runs it, once no node of the board runs (a serving node
  // tosses the inbound itself: the two would share the files).
  let ftnToss: FtnTossResult | null = null;
  try {
    ftnToss = await measureFtnToss({ baud: board.baud, dataDir: options.dir, fixture: options.tossFixture, progress });
    if (ftnToss.problem) problems.push(ftnToss.problem);
  } catch (error) {
    problems.push(`FTN toss: ${(error as Error).message}`);
  }
  return {
    database: options.database,
    messageCount: settings.messageCount,
    seeding: board.seeding,
    importWithoutIndex: board.importWithoutIndex,
    walk,
    deepPageAfterMessage,
    idleRssBytes: board.idleRssBytes,
    crawlMemory,
    statistics,
    scenarios: results,
    login,
    upload,
    download,
    eventFanout,
    terminalCallers,
    echomailPosting,
    ftnToss,
    peakRssBytes,
    problems,
  };
}
