import type { BenchSettings, RequestScenarioResult } from './bench-results.js';
import type { Account } from './board-under-test.js';
import type { CeilingServer } from './ceiling.js';
import { JSON_HEADERS, requestOnce } from './http-client.js';
import type { LoadDriver, LoadFigures, LoadJob } from './load-driver.js';
import type { Progress } from './progress.js';

/** One request, sent over and over by every connection of a load run. */
export interface RequestScenario {
  readonly id: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  /** Relative to the API base URL (`/system/info`). */
  readonly path: string;
  /** Several paths sent in turn, `path` first (see `LoadJob.paths`); the ceiling answers `path`'s bytes to all. */
  readonly paths?: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly expectedStatus: number;
  readonly connections: number;
}

export interface ScenarioContext {
  readonly apiUrl: string;
  readonly driver: LoadDriver;
  readonly ceiling: CeilingServer;
  readonly settings: BenchSettings;
  readonly progress: Progress;
}

const NO_FIGURES: LoadFigures = {
  requests: 0,
  seconds: 0,
  reqPerSec: 0,
  bytesPerSec: 0,
  p50Ms: 0,
  p99Ms: 0,
  maxMs: 0,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: {},
};

function problemOf(target: string, figures: LoadFigures, expectedStatus: number): string | null {
  const unexpected = Object.entries(figures.statusCodes).filter(([code]) => Number(code) !== expectedStatus);
  if (figures.errors === 0 && unexpected.length === 0 && figures.requests > 0) return null;
  const statuses = unexpected.map(([code, count]) => `${count} × ${code}`).join(', ');
  return `${target}: ${figures.requests} answers, ${figures.errors} errors (${figures.timeouts} timeouts)${statuses ? `, ${statuses}` : ''}`;
}

/**
 * Measures `scenario` the way every request figure is measured: its real answer is fetched
 * once and handed to the bare ceiling server, then the same load (same connections, warm-up,
 * duration, request bytes) runs against the ceiling and then against baud. The ratio of the
 * two is the figure that survives a noisy machine.
 */
export async function measureRequestScenario(
  scenario: RequestScenario,
  context: ScenarioContext,
): Promise<RequestScenarioResult> {
  const { apiUrl, driver, ceiling, settings, progress } = context;
  const request = {
    method: scenario.method,
    headers: scenario.headers,
    ...(scenario.body === undefined ? {} : { body: scenario.body }),
  };
  const recorded = await requestOnce(`${apiUrl}${scenario.path}`, request);
  if (recorded.status !== scenario.expectedStatus) {
    const problem = `${scenario.title}: answered ${recorded.status}, not ${scenario.expectedStatus}: ${recorded.body.toString().slice(0, 200)}`;
    progress.log(`  ! ${problem}`);
    const { id, title, connections } = scenario;
    return { id, title, connections, ceiling: NO_FIGURES, baud: NO_FIGURES, ratio: 0, problem };
  }
  await ceiling.serveRecorded(recorded);
  const apiPath = new URL(apiUrl).pathname;
  const job = (origin: string): LoadJob => ({
    url: `${origin}${apiPath}${scenario.path}`,
    ...(scenario.paths ? { paths: scenario.paths.map((path) => `${apiPath}${path}`) } : {}),
    ...request,
    connections: scenario.connections,
    durationSeconds: settings.durationSeconds,
    warmupSeconds: settings.warmupSeconds,
  });
  const measure = (target: 'ceiling' | 'baud', origin: string) =>
    driver.run(job(origin), (tick) =>
      progress.update(
        `  ${scenario.title} · ${target} · ${tick.phase} ${tick.second}/${tick.seconds} s · ${tick.requests} req/s`,
      ),
    );
  const ceilingFigures = await measure('ceiling', ceiling.origin);
  const baudFigures = await measure('baud', new URL(apiUrl).origin);
  const problem =
    [
      problemOf('ceiling', ceilingFigures, scenario.expectedStatus),
      problemOf('baud', baudFigures, scenario.expectedStatus),
    ]
      .filter(Boolean)
      .join('; ') || null;
  const ratio = ceilingFigures.reqPerSec > 0 ? baudFigures.reqPerSec / ceilingFigures.reqPerSec : 0;
  progress.log(
    `  ${scenario.title.padEnd(34)} ceiling ${Math.round(ceilingFigures.reqPerSec).toLocaleString('en-US').padStart(7)} req/s · baud ${Math.round(baudFigures.reqPerSec).toLocaleString('en-US').padStart(7)} req/s (p50 ${baudFigures.p50Ms} ms, p99 ${baudFigures.p99Ms} ms) · ${(ratio * 100).toFixed(1)}%${problem ? `  ! ${problem}` : ''}`,
  );
  return {
    id: scenario.id,
    title: scenario.title,
    connections: scenario.connections,
    ceiling: ceilingFigures,
    baud: baudFigures,
    ratio,
    problem,
  };
}

/** What the post scenario posts (~400 bytes), and the FTN export scenario too. */
export const POST_BODY = Object.freeze({ subject: 'Benchmark post', message: 'Posted by npm run bench. '.repeat(16) });

/**
 * The request scenarios of issue 16, in the order they run: reads first (so posting does not
 * change what they read), then posting and logging in. Each is built just before it runs, so
 * its access token is fresh (they live 15 minutes; a full run is longer).
 */
export function issueScenarios(board: {
  readonly listPath: string;
  readonly deepPath: string;
  readonly deepPageAfterMessage: number;
  /** The newest page (`order=newest`), and the page of that order next to the area's oldest message. */
  readonly newestPath: string;
  readonly newestDeepPath: string;
  /** Pages all over the area (each a cursor and a limit), more than a node remembers at once. */
  readonly spreadPaths: readonly string[];
  readonly detailUuid: string;
  /** A word in exactly one message of the area (its line number). */
  readonly rareWord: string;
  /** The first and the last page of a 10,000-message, 50-level thread. */
  readonly threadFirstPath: string;
  readonly threadLastPath: string;
  /** The reader's new-scan pointer sits here: half the area unread, which its unreadCount must not count one by one. */
  readonly pointerAfterMessage: number;
  readonly areaPath: string;
  readonly apiKey: string;
  readonly loginUser: Account;
  /** The reader's inbox holds mail (its page 1 is full); `send` mails this user. */
  readonly mailRecipient: string;
  readonly bearer: () => Promise<Record<string, string>>;
  readonly readConnections: number;
  readonly writeConnections: number;
}): (() => Promise<RequestScenario>)[] {
  const read = board.readConnections;
  const write = board.writeConnections;
  const get = (id: string, title: string, path: string, headers: Record<string, string>): RequestScenario => ({
    id,
    title,
    method: 'GET',
    path,
    headers,
    expectedStatus: 200,
    connections: read,
  });
  return [
    async () => get('system-info', 'GET /system/info, anonymous', '/system/info', {}),
    async () => get('page-jwt', 'message page 1 (25), JWT', board.listPath, await board.bearer()),
    async () => get('page-api-key', 'message page 1 (25), API key', board.listPath, { 'x-baud-api-key': board.apiKey }),
    async () =>
      get(
        'deep-page',
        `deep page (after message ${board.deepPageAfterMessage.toLocaleString('en-US')}), JWT`,
        board.deepPath,
        await board.bearer(),
      ),
    async () => get('newest-page', 'newest page (25, order=newest), JWT', board.newestPath, await board.bearer()),
    async () =>
      get(
        'newest-deep-page',
        'deep newest-first page (next to the oldest message), JWT',
        board.newestDeepPath,
        await board.bearer(),
      ),
    async () => ({
      ...get(
        'spread-pages',
        `${board.spreadPaths.length.toLocaleString('en-US')} pages in turn (not remembered), JWT`,
        board.spreadPaths[0] ?? board.listPath,
        await board.bearer(),
      ),
      paths: board.spreadPaths,
    }),
    async () => get('detail', 'message detail, JWT', `/messages/${board.detailUuid}`, await board.bearer()),
    async () =>
      get(
        'unread-count',
        `area with unreadCount (pointer after message ${board.pointerAfterMessage.toLocaleString('en-US')}), JWT`,
        board.areaPath,
        await board.bearer(),
      ),
    async () =>
      get('thread-first', 'first page of a 10,000-message thread, JWT', board.threadFirstPath, await board.bearer()),
    async () => get('thread-last', 'last page of that thread, JWT', board.threadLastPath, await board.bearer()),
    async () =>
      get(
        'search-rare',
        `search a rare word ("${board.rareWord}"), JWT`,
        `/messages/search?q=${board.rareWord}`,
        await board.bearer(),
      ),
    async () =>
      get(
        'search-relevance',
        `search a rare word ("${board.rareWord}") by relevance, JWT`,
        `/messages/search?q=${board.rareWord}&sort=relevance`,
        await board.bearer(),
      ),
    async () =>
      get('search-common', 'search a common word ("modem"), JWT', '/messages/search?q=modem', await board.bearer()),
    async () =>
      get(
        'search-phrase',
        'search a phrase ("lazy dog"), JWT',
        '/messages/search?q=%22lazy%20dog%22',
        await board.bearer(),
      ),
    async () => get('inbox-page', 'inbox page 1 (25), JWT', '/mail?limit=25', await board.bearer()),
    async () => ({
      id: 'post',
      title: `post a message, JWT (${write} connections)`,
      method: 'POST',
      path: board.listPath,
      headers: { ...JSON_HEADERS, ...(await board.bearer()) },
      body: JSON.stringify(POST_BODY),
      expectedStatus: 201,
      connections: write,
    }),
    async () => ({
      id: 'send',
      title: `send a mail, JWT (${write} connections)`,
      method: 'POST',
      path: '/mail',
      headers: { ...JSON_HEADERS, ...(await board.bearer()) },
      body: JSON.stringify({
        to: board.mailRecipient,
        subject: 'Benchmark mail',
        body: 'Sent by npm run bench. '.repeat(16),
      }),
      expectedStatus: 201,
      connections: write,
    }),
    async () => ({
      id: 'login',
      title: `log in (${write} connections)`,
      method: 'POST',
      path: '/auth/login',
      headers: JSON_HEADERS,
      body: JSON.stringify({ username: board.loginUser.username, password: board.loginUser.password }),
      expectedStatus: 200,
      connections: write,
    }),
  ];
}
