/**
 * `npm run bench`: the server benchmark of issue 16. One run builds the current src/, seeds a
 * board through the real CLI, starts `baud serve` as its own process and drives it with
 * autocannon from another, next to a bare node:http server (a third process) that answers the
 * same bytes; every figure is a ratio to that ceiling, measured minutes apart on the same
 * machine. See docs/PERFORMANCE.md, whose generated part each run rewrites.
 *
 *   npm run bench                 # SQLite, 1,000,000 messages, 512 MiB transfers
 *   npm run bench -- --quick      # 100,000 messages, 64 MiB, short runs (< 3 min)
 *   npm run bench -- --pg         # PostgreSQL beside SQLite
 *   npm run bench -- --help
 *
 * Exit code 1 when a scenario fails (an error, an unexpected status, a miscount), and with
 * --strict also when a target is missed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BenchOptions, parseBenchOptions, USAGE } from './bench-options.js';
import type { BenchRun, DatabaseKind, DatabaseRun } from './bench-results.js';
import { startCeilingServer } from './ceiling.js';
import { createCleanup } from './cleanup.js';
import { measureCredentialCosts } from './credential-costs.js';
import { runDatabase } from './database-run.js';
import { writeTossFixture } from './ftn-toss.js';
import { closeConnections } from './http-client.js';
import { startLoadDriver } from './load-driver.js';
import { describeMachine } from './machine.js';
import { writeMessageFixture } from './message-fixture.js';
import { assertPostgresReachable } from './postgres-schema.js';
import { MiB } from './process-memory.js';
import { createProgress } from './progress.js';
import { renderMarkdown, renderText, updateGeneratedSection, writeResultsJson } from './report.js';
import { buildServer, buildWithoutMessageIndex } from './server-build.js';
import { evaluateTargets, missedTargets } from './targets.js';
import { writeTransferFile } from './transfers.js';

const REPO = path.resolve(import.meta.dirname, '..');
const RESULTS_DIR = path.join(REPO, 'bench/results');
const PERFORMANCE_DOC = path.join(REPO, 'docs/PERFORMANCE.md');

const parsed = parseBenchOptions(process.argv.slice(2));
if (parsed === null) {
  console.log(USAGE);
  process.exit(0);
}
const options: BenchOptions = parsed;
const { settings } = options;
const progress = createProgress();
const cleanup = createCleanup((text) => progress.log(text));

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    progress.log(`\n${signal}: stopping every process and removing what the run created …`);
    closeConnections();
    cleanup.runAll().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const startedAt = new Date().toISOString();
  const machine = describeMachine();
  if (options.postgresUrl) {
    const version = await assertPostgresReachable(options.postgresUrl);
    progress.log(`PostgreSQL ${version} at ${options.postgresUrl}`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'baud-bench-'));
  cleanup.defer(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));

  progress.log(
    `compiling ${options.buildSource === 'head' ? `the committed HEAD (${machine.commit})` : 'src/ as it is on disk'} with tsc into ${dir}/build …`,
  );
  const build = buildServer(path.join(dir, 'build'), options.buildSource, machine.commit);
  progress.log(
    `  ${build.seconds.toFixed(1)} s${build.typeErrors.length > 0 ? `, ${build.typeErrors.length} type errors (emitted anyway): ${build.typeErrors[0]}` : ''}`,
  );

  const withoutIndex = buildWithoutMessageIndex(build, path.join(dir, 'build-without-index'));

  const fixture = path.join(dir, 'messages.jsonl');
  progress.log(
    `writing ${settings.messageCount.toLocaleString('en-US')} messages as JSON Lines${settings.quick ? ' (--quick: the full run has 1,000,000)' : ''} …`,
  );
  const fixtureBytes = await writeMessageFixture(fixture, settings.messageCount, (written) =>
    progress.update(`  ${written.toLocaleString('en-US')} messages written`),
  );
  progress.log(`  ${(fixtureBytes / MiB).toFixed(0)} MiB`);
  progress.log(
    `writing the ${(settings.transferBytes / MiB).toFixed(0)} MiB transfer file${settings.quick ? ' (--quick: the full run uses 512 MiB)' : ''} …`,
  );
  const transferFile = await writeTransferFile(path.join(dir, 'transfer.bin'), settings.transferBytes, progress);
  progress.log(
    `packing ${settings.ftnTossMessages.toLocaleString('en-US')} echomail messages into bundles for baud ftn toss${settings.quick ? ' (--quick: the full run has 100,000)' : ''} …`,
  );
  const tossFixture = await writeTossFixture(path.join(dir, 'ftn-inbound'), settings.ftnTossMessages, progress);
  progress.log(
    `  ${tossFixture.files.length} bundles, ${tossFixture.packets} packets, ${(tossFixture.bytes / MiB).toFixed(1)} MiB`,
  );

  const driver = await startLoadDriver(cleanup);
  const ceiling = await startCeilingServer(cleanup);
  const databases: DatabaseKind[] = options.postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];
  const runs: DatabaseRun[] = [];
  for (const database of databases) {
    progress.log(`\n== ${database}`);
    runs.push(
      await runDatabase({
        database,
        postgresUrl: options.postgresUrl ?? '',
        dir: path.join(dir, database),
        baudCommand: build.baudCommand,
        baudCommandWithoutIndex: withoutIndex.baudCommand,
        fixture,
        tossFixture,
        transferFile,
        settings,
        driver,
        ceiling,
        progress,
        cleanup,
      }),
    );
  }

  progress.log('\nmeasuring what checking a credential costs …');
  const credentials = await measureCredentialCosts(build.dir);

  const run: BenchRun = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings,
    machine,
    build: { source: build.source, seconds: build.seconds, typeErrors: build.typeErrors },
    runs,
    credentials,
  };
  const report = evaluateTargets(runs);
  const resultsFile = writeResultsJson(RESULTS_DIR, run, report);
  progress.log('');
  console.log(renderText(run, report));
  progress.log(`\nresults: ${path.relative(REPO, resultsFile)}`);
  if (options.writeDocs) {
    updateGeneratedSection(PERFORMANCE_DOC, renderMarkdown(run, report, path.relative(REPO, resultsFile)));
    progress.log(`updated ${path.relative(REPO, PERFORMANCE_DOC)}`);
  }

  const problems = runs.flatMap((databaseRun) =>
    databaseRun.problems.map((problem) => `${databaseRun.database}: ${problem}`),
  );
  for (const problem of problems) progress.log(`FAILED: ${problem}`);
  const missed = missedTargets(report);
  if (options.strict) for (const target of missed) progress.log(`MISSED: ${target}`);
  return problems.length > 0 || (options.strict && missed.length > 0) ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  // After Ctrl-C the helpers die with their process group: that is no failure worth a stack.
  if (!interrupted) progress.log(`bench failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  closeConnections();
  if (!interrupted) await cleanup.runAll();
}
