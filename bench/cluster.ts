/**
 * `npm run bench:cluster`: what more nodes buy on this machine. One board on PostgreSQL,
 * seeded through `baud message import`, served by 1, then 2, then 3 `baud serve` processes;
 * each load runs from one autocannon process per node, all at once, and the figures are the
 * sums. Also checks (EXPLAIN ANALYZE) that the deepest page of the area is an index range scan.
 * Rewrites the generated part of docs/SCALING.md.
 *
 *   npm run bench:cluster                # 1,000,000 messages, 10 s per figure
 *   npm run bench:cluster -- --quick     # 100,000 messages, 3 s per figure
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type RunningServer, startBaudServer } from './baud-process.js';
import { MESSAGE_AREA, startBoardUnderTest } from './board-under-test.js';
import { createCleanup } from './cleanup.js';
import { type DeepPagePlan, explainDeepPage } from './deep-page-plan.js';
import { closeConnections, JSON_HEADERS, logIn, requestJson } from './http-client.js';
import { type LoadDriver, type LoadFigures, startLoadDriver } from './load-driver.js';
import { describeMachine, type Machine } from './machine.js';
import { writeMessageFixture } from './message-fixture.js';
import { assertPostgresReachable, DEFAULT_POSTGRES_URL } from './postgres-schema.js';
import { cpuSeconds, machineCpuSeconds } from './process-memory.js';
import { createProgress } from './progress.js';
import { updateGeneratedSection } from './report.js';
import type { RequestScenario } from './request-scenarios.js';
import { buildServer } from './server-build.js';

const REPO = path.resolve(import.meta.dirname, '..');
const SCALING_DOC = path.join(REPO, 'docs/SCALING.md');
const MAX_NODES = 3;
/** Divisible by 1, 2 and 3: every node gets the same share. */
const READ_CONNECTIONS = 48;
const WRITE_CONNECTIONS = 12;
/** Messages whose detail the read scenario asks for in turn: far more than a node remembers in a second. */
const DETAIL_MESSAGES = 20_000;

const USAGE = `npm run bench:cluster [-- options]

Seeds one board on PostgreSQL, serves it with 1, 2 and 3 nodes in turn and measures three
loads against all nodes at once (one autocannon process per node). Prints a table, writes
bench/results/cluster-<time>.json and regenerates the generated part of docs/SCALING.md.

  --quick           100,000 messages, 1 s warm-up + 3 s per figure
  --pg-url <url>    PostgreSQL server (default ${DEFAULT_POSTGRES_URL}; a fresh schema, dropped after)
  --messages <n>    messages in the area (default 1,000,000; --quick 100,000)
  --duration <s>    measured seconds per figure (default 10; --quick 3)
  --worktree        measure src/ as it is on disk, not the committed HEAD
  --no-docs         leave docs/SCALING.md alone
  --help            this text`;

interface ClusterFigure {
  readonly scenario: string;
  readonly title: string;
  readonly nodes: number;
  readonly reqPerSec: number;
  readonly p99Ms: number;
  /** Share of the whole machine's CPU that was busy during the run (warm-up included). */
  readonly machineBusy: number;
  /** CPU the nodes used together, in cores (1.0 = one core all the time). */
  readonly nodeCores: number;
  /** CPU the load generators used together, in cores. */
  readonly driverCores: number;
  readonly problem: string | null;
}

interface ClusterRun {
  readonly startedAt: string;
  readonly machine: Machine;
  readonly postgresVersion: string;
  readonly messageCount: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly deepPage: DeepPagePlan;
  readonly figures: readonly ClusterFigure[];
}

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'pg-url': { type: 'string', default: DEFAULT_POSTGRES_URL },
    messages: { type: 'string' },
    duration: { type: 'string' },
    worktree: { type: 'boolean', default: false },
    'no-docs': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const quick = values.quick === true;
const postgresUrl = values['pg-url'] ?? DEFAULT_POSTGRES_URL;
const messageCount = Number(values.messages ?? (quick ? 100_000 : 1_000_000));
const durationSeconds = Number(values.duration ?? (quick ? 3 : 10));
const warmupSeconds = quick ? 1 : 3;
if (!Number.isSafeInteger(messageCount) || messageCount < DETAIL_MESSAGES) {
  throw new Error(`--messages must be an integer of at least ${DETAIL_MESSAGES}`);
}
if (!Number.isSafeInteger(durationSeconds) || durationSeconds < 1)
  throw new Error('--duration must be a positive integer');

const progress = createProgress();
const cleanup = createCleanup((text) => progress.log(text));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    progress.log(`\n${signal}: stopping every process and removing what the run created …`);
    closeConnections();
    cleanup.runAll().finally(() => process.exit(130));
  });
}

/** The first DETAIL_MESSAGES messages of the area, walked page by page. */
async function detailPaths(apiUrl: string, token: string): Promise<string[]> {
  const paths: string[] = [];
  let cursor: string | null = null;
  while (paths.length < DETAIL_MESSAGES) {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page: { data: { uuid: string }[]; meta: { nextCursor: string | null } } = await requestJson(
      `${apiUrl}/messages/areas/${MESSAGE_AREA}/messages?limit=100${query}`,
      200,
      { headers: { authorization: `Bearer ${token}` } },
    );
    paths.push(...page.data.map((message) => `/messages/${message.uuid}`));
    cursor = page.meta.nextCursor;
    if (cursor === null) break;
  }
  return paths;
}

/** Runs `scenario` against every node at once, one load generator each, and sums what they counted. */
async function measureAcrossNodes(
  scenario: RequestScenario,
  nodes: readonly RunningServer[],
  drivers: readonly LoadDriver[],
): Promise<ClusterFigure> {
  const perNode = scenario.connections / nodes.length;
  const machineBefore = machineCpuSeconds();
  const pids = [...nodes.map((node) => node.pid), ...drivers.slice(0, nodes.length).map((driver) => driver.pid)];
  const cpuBefore = pids.map(cpuSeconds);
  const started = performance.now();
  const figures: LoadFigures[] = await Promise.all(
    nodes.map((node, index) => {
      const apiPath = new URL(node.apiUrl).pathname;
      const driver = drivers[index] as LoadDriver;
      return driver.run(
        {
          url: `${node.apiUrl}${scenario.path}`,
          ...(scenario.paths ? { paths: scenario.paths.map((each) => `${apiPath}${each}`) } : {}),
          method: scenario.method,
          headers: scenario.headers,
          ...(scenario.body === undefined ? {} : { body: scenario.body }),
          connections: perNode,
          durationSeconds,
          warmupSeconds,
        },
        (tick) =>
          index === 0 &&
          progress.update(
            `  ${scenario.title}, ${nodes.length} node(s): ${tick.phase} ${tick.second}/${tick.seconds} s`,
          ),
      );
    }),
  );
  const wallSeconds = (performance.now() - started) / 1000;
  const machineAfter = machineCpuSeconds();
  const cores = pids.map((pid, index) => (cpuSeconds(pid) - (cpuBefore[index] ?? 0)) / wallSeconds);
  const unexpected = figures.flatMap((figure) =>
    Object.entries(figure.statusCodes).filter(([code]) => Number(code) !== scenario.expectedStatus),
  );
  const errors = figures.reduce((sum, figure) => sum + figure.errors, 0);
  const reqPerSec = figures.reduce((sum, figure) => sum + figure.reqPerSec, 0);
  return {
    scenario: scenario.id,
    title: scenario.title,
    nodes: nodes.length,
    reqPerSec,
    p99Ms: Math.max(...figures.map((figure) => figure.p99Ms)),
    machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
    nodeCores: cores.slice(0, nodes.length).reduce((sum, value) => sum + value, 0),
    driverCores: cores.slice(nodes.length).reduce((sum, value) => sum + value, 0),
    problem:
      errors > 0 || unexpected.length > 0 || reqPerSec === 0
        ? `${scenario.title} on ${nodes.length} node(s): ${errors} errors, ${unexpected.map(([code, count]) => `${count} × ${code}`).join(', ')}`
        : null,
  };
}

const number = (value: number) => Math.round(value).toLocaleString('en-US');
const percent = (value: number) => `${(value * 100).toFixed(0)}%`;

function renderMarkdown(run: ClusterRun, resultsFile: string): string {
  const { machine } = run;
  const scenarios = [...new Set(run.figures.map((figure) => figure.scenario))];
  const figureOf = (scenario: string, nodes: number) =>
    run.figures.find((figure) => figure.scenario === scenario && figure.nodes === nodes);
  const nodeCounts = Array.from({ length: MAX_NODES }, (_, index) => index + 1);
  const throughput = scenarios.map((scenario) => {
    const single = figureOf(scenario, 1)?.reqPerSec ?? 0;
    const cells = nodeCounts.map((nodes) => {
      const figure = figureOf(scenario, nodes);
      if (!figure) return '—';
      const gain = nodes === 1 || single === 0 ? '' : ` (×${(figure.reqPerSec / single).toFixed(2)})`;
      return `${number(figure.reqPerSec)} req/s${gain}, p99 ${figure.p99Ms.toFixed(0)} ms`;
    });
    return `| ${figureOf(scenario, 1)?.title ?? scenario} | ${cells.join(' | ')} |`;
  });
  const cpu = scenarios.map((scenario) => {
    const cells = nodeCounts.map((nodes) => {
      const figure = figureOf(scenario, nodes);
      if (!figure) return '—';
      const rest = figure.machineBusy * machine.cores - figure.nodeCores - figure.driverCores;
      return `${percent(figure.machineBusy)}: nodes ${figure.nodeCores.toFixed(2)}, load ${figure.driverCores.toFixed(2)}, PostgreSQL and the rest ${Math.max(rest, 0).toFixed(2)}`;
    });
    return `| ${figureOf(scenario, 1)?.title ?? scenario} | ${cells.join(' | ')} |`;
  });
  const plan = run.deepPage;
  return [
    `Measured ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC by \`npm run bench:cluster\` at commit \`${machine.commit}\`: ${machine.cpuModel}, ${machine.cores} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, Node ${machine.node}, PostgreSQL ${run.postgresVersion} on the same machine, load average ${machine.loadAverage.toFixed(2)} at the start. One area of ${run.messageCount.toLocaleString('en-US')} messages; each figure is ${run.durationSeconds} s after ${run.warmupSeconds} s of warm-up, all nodes loaded at once, one autocannon process per node on the same machine. Raw figures: \`${resultsFile}\`.`,
    '',
    '**Throughput** (sum over the nodes; ×: against one node):',
    '',
    `| load | ${nodeCounts.map((nodes) => `${nodes} node${nodes === 1 ? '' : 's'}`).join(' | ')} |`,
    `| --- | ${nodeCounts.map(() => '---').join(' | ')} |`,
    ...throughput,
    '',
    `**Where the CPU went** (machine busy, then cores used by the nodes together, by the load generators, and by PostgreSQL and everything else; ${machine.cores} cores in all):`,
    '',
    `| load | ${nodeCounts.map((nodes) => `${nodes} node${nodes === 1 ? '' : 's'}`).join(' | ')} |`,
    `| --- | ${nodeCounts.map(() => '---').join(' | ')} |`,
    ...cpu,
    '',
    `**The deepest page** of the ${run.messageCount.toLocaleString('en-US')}-message area on PostgreSQL (\`EXPLAIN ANALYZE\` of the store's own page query, after the import's ANALYZE): ${plan.nodes.join(' › ')} — ${plan.isIndexRangeScan ? 'an index range scan, no sort' : '**not an index range scan**'}, ${plan.executionMs.toFixed(3)} ms, ${plan.sharedBuffers} buffers.`,
  ].join('\n');
}

async function main(): Promise<number> {
  const startedAt = new Date().toISOString();
  const machine = describeMachine();
  const postgresVersion = await assertPostgresReachable(postgresUrl);
  progress.log(`PostgreSQL ${postgresVersion} at ${postgresUrl}; ${os.availableParallelism()} cores`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'baud-cluster-bench-'));
  cleanup.defer(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));

  progress.log('compiling baud …');
  const build = buildServer(path.join(dir, 'build'), values.worktree ? 'worktree' : 'head', machine.commit);
  const fixture = path.join(dir, 'messages.jsonl');
  await writeMessageFixture(fixture, messageCount, (written) =>
    progress.update(`  ${written.toLocaleString('en-US')} messages written`),
  );
  const board = await startBoardUnderTest({
    database: 'postgres',
    postgresUrl,
    dir: path.join(dir, 'board'),
    baudCommand: build.baudCommand,
    fixture,
    messageCount,
    logLevel: 'info',
    progress,
    cleanup,
  });
  await board.analyzeStatistics?.();
  const deepPage = await explainDeepPage(board.databaseUrl, MESSAGE_AREA);
  progress.log(
    `  deepest page: ${deepPage.nodes.join(' › ')}, ${deepPage.executionMs.toFixed(3)} ms, ${deepPage.sharedBuffers} buffers`,
  );

  const nodes: RunningServer[] = [board.server];
  const { reader } = board;
  const bearer = async () => ({
    authorization: `Bearer ${await logIn(board.server.apiUrl, reader.username, reader.password)}`,
  });
  const paths = await detailPaths(
    board.server.apiUrl,
    await logIn(board.server.apiUrl, reader.username, reader.password),
  );
  const scenarios = async (): Promise<RequestScenario[]> => [
    {
      id: 'info',
      title: 'GET /system/info (no database)',
      method: 'GET',
      path: '/system/info',
      headers: {},
      expectedStatus: 200,
      connections: READ_CONNECTIONS,
    },
    {
      id: 'detail',
      title: `GET a message, ${DETAIL_MESSAGES.toLocaleString('en-US')} in turn (database reads)`,
      method: 'GET',
      path: paths[0] ?? '/messages/missing',
      paths,
      headers: await bearer(),
      expectedStatus: 200,
      connections: READ_CONNECTIONS,
    },
    {
      id: 'post',
      title: 'POST a message (database writes)',
      method: 'POST',
      path: `/messages/areas/${MESSAGE_AREA}/messages`,
      headers: { ...JSON_HEADERS, ...(await bearer()) },
      body: JSON.stringify({ subject: 'Cluster bench', message: 'One more message from the cluster benchmark.' }),
      expectedStatus: 201,
      connections: WRITE_CONNECTIONS,
    },
  ];

  const drivers = await Promise.all(Array.from({ length: MAX_NODES }, () => startLoadDriver(cleanup)));
  const figures: ClusterFigure[] = [];
  for (let count = 1; count <= MAX_NODES; count += 1) {
    while (nodes.length < count) {
      nodes.push(await startBaudServer(board.baud, path.join(dir, `node${nodes.length + 1}.log`), cleanup));
    }
    progress.log(`\n== ${count} node${count === 1 ? '' : 's'}`);
    for (const scenario of await scenarios()) {
      const figure = await measureAcrossNodes(scenario, nodes, drivers);
      figures.push(figure);
      progress.log(
        `  ${figure.title}: ${number(figure.reqPerSec)} req/s, p99 ${figure.p99Ms.toFixed(0)} ms, machine ${percent(figure.machineBusy)} busy (nodes ${figure.nodeCores.toFixed(2)} cores, load ${figure.driverCores.toFixed(2)})${figure.problem ? ` — FAILED: ${figure.problem}` : ''}`,
      );
    }
  }

  const run: ClusterRun = {
    startedAt,
    machine,
    postgresVersion,
    messageCount,
    durationSeconds,
    warmupSeconds,
    deepPage,
    figures,
  };
  const resultsDir = path.join(REPO, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const resultsFile = path.join(resultsDir, `cluster-${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(resultsFile, `${JSON.stringify(run, null, 2)}\n`);
  const markdown = renderMarkdown(run, path.relative(REPO, resultsFile));
  console.log(`\n${markdown}`);
  if (values['no-docs'] !== true) {
    updateGeneratedSection(SCALING_DOC, markdown);
    progress.log(`updated ${path.relative(REPO, SCALING_DOC)}`);
  }
  const problems = [
    ...figures.flatMap((figure) => (figure.problem ? [figure.problem] : [])),
    ...(deepPage.isIndexRangeScan
      ? []
      : [`the deepest page is not an index range scan: ${deepPage.nodes.join(' › ')}`]),
  ];
  for (const problem of problems) progress.log(`FAILED: ${problem}`);
  return problems.length > 0 ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  progress.log(`bench failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  closeConnections();
  await cleanup.runAll();
}
