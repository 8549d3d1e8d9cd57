/**
 * `npm run bench:enigma`: how fast `baud import enigma` moves an ENiGMA½ board, timed as an
 * operator runs it (the real CLI, its own process, start-up included), on the fixture board
 * and on a synthetic board of the fixture copied over and over (test/support/enigma-synthetic.ts).
 * The synthetic board is imported a second time by the same build with its search index writes
 * taken out, for the share of that rate the import keeps with the index (issue 30: ≥ 70%).
 * Prints a table; writes nothing into the repository (docs/PERFORMANCE.md quotes a run by hand).
 *
 *   npm run bench:enigma                       # SQLite, 1,000,000 messages
 *   npm run bench:enigma -- --messages 200000
 *   npm run bench:enigma -- --pg               # PostgreSQL beside SQLite (fresh schema, dropped after)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildSyntheticEnigmaBoard, ENIGMA_FIXTURE } from '../test/support/enigma-synthetic.js';
import { stopChild } from './child-processes.js';
import { createCleanup } from './cleanup.js';
import { describeMachine } from './machine.js';
import {
  assertPostgresReachable,
  boardDatabaseUrl,
  DEFAULT_POSTGRES_URL,
  dropSchema,
  freshSchemaName,
} from './postgres-schema.js';
import { cpuSeconds, MiB, peakResidentBytes } from './process-memory.js';
import { createProgress } from './progress.js';
import { buildServer, buildWithoutMessageIndex } from './server-build.js';

const USAGE = `npm run bench:enigma [-- options]

Builds baud (HEAD, with tsc) and a synthetic ENiGMA½ board (the test fixture's messages copied
over and over), then times \`baud import enigma <dir> --json\` as its own process into a fresh
board, for the fixture and for the synthetic board, and the synthetic board once more by the same
build without its search index writes. Prints messages/s (messages imported / wall seconds of the
import process, start-up included), the import's own time, CPU seconds and peak RSS of the
importing process, and the share of the rate without the index kept with it.

  --messages <n>   messages of the synthetic board (default 1,000,000)
  --pg             also import into PostgreSQL (${DEFAULT_POSTGRES_URL}, fresh schema, dropped after)
  --pg-url <url>   PostgreSQL server to use with --pg
  --help           this text`;

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000000' },
    pg: { type: 'boolean', default: false },
    'pg-url': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const messageCount = Number(values.messages);
if (!Number.isSafeInteger(messageCount) || messageCount < 1) {
  throw new Error(`--messages must be a positive integer, not "${values.messages}"`);
}
const postgresUrl = values.pg || values['pg-url'] ? (values['pg-url'] ?? DEFAULT_POSTGRES_URL) : null;

const progress = createProgress();
const cleanup = createCleanup((text) => progress.log(text));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    progress.log(`\n${signal}: stopping the import and removing what the run created …`);
    cleanup.runAll().finally(() => process.exit(130));
  });
}

interface ImportRun {
  readonly database: 'sqlite' | 'postgres';
  readonly board: string;
  /** Whether the build wrote the search index (the bare build's runs are the reference of the share). */
  readonly withIndex: boolean;
  readonly messages: number;
  /** Spawn to exit of the `baud import enigma` process. */
  readonly wallSeconds: number;
  /** What the import reports of itself (`seconds` of its summary: after start-up and migrations). */
  readonly importSeconds: number;
  /** User + system CPU of the Node process that imports (not tsx's wrapper, not PostgreSQL). */
  readonly cpuSeconds: number | null;
  /** VmHWM of that process, read every 100 ms until it exits; null when it could not be read. */
  readonly peakRssBytes: number | null;
}

/** Runs `baud import enigma` as an operator does and times it; fails on a non-zero exit. */
async function timeImport(
  baudCommand: string,
  source: string,
  configPath: string,
): Promise<Omit<ImportRun, 'database' | 'board' | 'withIndex'>> {
  const started = performance.now();
  // The `baud` command execs node through its shebang, in the same process: it is the importer.
  const child = spawn(baudCommand, ['import', 'enigma', source, '--config', configPath, '--json'], {
    cwd: path.dirname(configPath),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = cleanup.defer(`stop the import (pid ${child.pid})`, () => stopChild(child));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const importer = child.pid ?? null;
  let peakRssBytes: number | null = null;
  let cpu: number | null = null;
  // VmHWM only grows, so the last reading before the process exits is its peak (to within 100 ms).
  const sampler = setInterval(() => {
    try {
      if (importer === null) return;
      peakRssBytes = peakResidentBytes(importer);
      cpu = cpuSeconds(importer);
    } catch {
      // The importer has exited; the last readings stand.
    }
  }, 100);
  const [code] = (await once(child, 'exit')) as [number | null];
  const wallSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await stop();
  if (code !== 0) throw new Error(`baud import enigma exited with ${code}:\n${stderr}`);
  const summary = JSON.parse(stdout) as { counts: { messages: { imported: number } }; seconds: number };
  return {
    messages: summary.counts.messages.imported,
    wallSeconds,
    importSeconds: summary.seconds,
    cpuSeconds: cpu,
    peakRssBytes,
  };
}

/**
 * A fresh baud board in `dir` (its config.hjson; SQLite in `dir` or a fresh PostgreSQL schema);
 * `discard` removes it, and the run's end does if nothing did before.
 */
function freshBoard(
  dir: string,
  database: ImportRun['database'],
): { configPath: string; discard: () => Promise<void> } {
  mkdirSync(dir, { recursive: true });
  let url = `sqlite:${path.join(dir, 'baud.db')}`;
  const removeDir = cleanup.defer(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
  let dropBoardSchema = async () => {};
  if (database === 'postgres' && postgresUrl) {
    const schema = freshSchemaName();
    url = boardDatabaseUrl(postgresUrl, schema);
    dropBoardSchema = cleanup.defer(`drop schema ${schema}`, () => dropSchema(postgresUrl, schema));
  }
  const configPath = path.join(dir, 'config.hjson');
  writeFileSync(configPath, `${JSON.stringify({ database: { url }, logging: { level: 'silent' } })}\n`);
  return {
    configPath,
    discard: async () => {
      await dropBoardSchema();
      await removeDir();
    },
  };
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');

function renderTable(runs: readonly ImportRun[]): string {
  const header = [
    'database',
    'board',
    'search index',
    'messages',
    'wall s',
    'messages/s',
    'import s (own)',
    'messages/s (own)',
    'CPU s',
    'peak RSS',
  ];
  const rows = runs.map((run) => [
    run.database,
    run.board,
    run.withIndex ? 'written' : 'left out',
    count(run.messages),
    run.wallSeconds.toFixed(1),
    count(run.messages / run.wallSeconds),
    run.importSeconds.toFixed(1),
    count(run.messages / run.importSeconds),
    run.cpuSeconds === null ? '—' : run.cpuSeconds.toFixed(1),
    run.peakRssBytes === null ? '—' : `${(run.peakRssBytes / MiB).toFixed(0)} MiB`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => (column < 3 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)));
  return [header, ...rows].map((cells) => line(cells).join('  ')).join('\n');
}

async function main(): Promise<void> {
  const machine = describeMachine();
  progress.log(
    `${machine.cpuModel}, ${machine.cores} cores, ${(machine.memoryBytes / 1024 ** 3).toFixed(0)} GiB, Node ${machine.node}; load ${machine.loadAverage.toFixed(2)}; commit ${machine.commit} (${machine.uncommittedSrcFiles} uncommitted src files)`,
  );
  if (postgresUrl) progress.log(`PostgreSQL ${await assertPostgresReachable(postgresUrl)} at ${postgresUrl}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'baud-enigma-bench-'));
  cleanup.defer(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));

  progress.log('building baud (tsc) …');
  const build = buildServer(path.join(dir, 'build'), 'head', machine.commit);
  const bare = buildWithoutMessageIndex(build, path.join(dir, 'build-without-index'));

  const synthetic = path.join(dir, 'enigma-synthetic');
  progress.log(`building a ${count(messageCount)}-message ENiGMA½ board …`);
  const buildStarted = performance.now();
  buildSyntheticEnigmaBoard(synthetic, messageCount, {
    onProgress: (messages) => progress.update(`  ${count(messages)} messages`),
  });
  const buildSeconds = (performance.now() - buildStarted) / 1000;
  progress.log(`  built in ${buildSeconds.toFixed(1)} s`);

  const runs: ImportRun[] = [];
  const databases: Array<ImportRun['database']> = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];
  for (const database of databases) {
    for (const [board, source, withIndex] of [
      ['fixture', ENIGMA_FIXTURE, true],
      [`synthetic ${count(messageCount)}`, synthetic, false],
      [`synthetic ${count(messageCount)}`, synthetic, true],
    ] as const) {
      progress.log(`${database}: importing the ${board} board${withIndex ? '' : ' without the search index'} …`);
      const target = freshBoard(path.join(dir, `${database}-${runs.length}`), database);
      const baudCommand = withIndex ? build.baudCommand : bare.baudCommand;
      const run: ImportRun = {
        database,
        board,
        withIndex,
        ...(await timeImport(baudCommand, source, target.configPath)),
      };
      runs.push(run);
      progress.log(`  ${count(run.messages)} messages in ${run.wallSeconds.toFixed(1)} s`);
      // Free the disk (or the schema) before the next import.
      await target.discard();
    }
  }

  console.log(
    `\nbaud import enigma — ${machine.cores} cores (${machine.cpuModel}), Node ${machine.node}, commit ${machine.commit}`,
  );
  console.log(`synthetic board: ${count(messageCount)} messages built in ${buildSeconds.toFixed(1)} s\n`);
  console.log(renderTable(runs));
  for (const database of databases) {
    const rate = (withIndex: boolean) => {
      const run = runs.find(
        (each) => each.database === database && each.board !== 'fixture' && each.withIndex === withIndex,
      );
      return run ? run.messages / run.wallSeconds : Number.NaN;
    };
    const share = rate(true) / rate(false);
    console.log(
      `${database}: with the search index ${(share * 100).toFixed(1)}% of the rate without it (${count(rate(true))} of ${count(rate(false))} messages/s; target ≥ 70%: ${share >= 0.7 ? 'met' : 'NOT MET'})`,
    );
  }
  console.log(
    '\nmessages/s: messages imported / wall seconds of the import process (start-up, migrations and the rest of the board included);' +
      '\n(own): the import’s own `seconds`; CPU s and peak RSS (VmHWM): the Node process that imports, not PostgreSQL.',
  );
}

try {
  await main();
} catch (error) {
  progress.log(`bench failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanup.runAll();
}
