import type { DatabaseKind, DatabaseRun, RequestScenarioResult } from './bench-results.js';
import { TERMINAL_NODE_CALLERS } from './board-under-test.js';
import { MiB } from './process-memory.js';

/** A target's verdict on one run: met, not met, or not measurable (the scenario failed). */
export interface TargetOutcome {
  readonly measured: string;
  readonly isMet: boolean | null;
}

/** One target of issue 16 ("Targets": same-run ratios on SQLite; PostgreSQL reported beside). */
export interface Target {
  readonly id: string;
  readonly text: string;
  /** Where the issue makes it a target; on the other database it is reported beside. */
  readonly bindsOn: readonly DatabaseKind[];
  /** An aim beyond the target (page 1 at 40%), reported but never a failure. */
  readonly isAim: boolean;
  evaluate(run: DatabaseRun): TargetOutcome;
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
const reqs = (value: number) => Math.round(value).toLocaleString('en-US');
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
const unmeasured = (why: string): TargetOutcome => ({ measured: why, isMet: null });

function scenario(run: DatabaseRun, id: string): RequestScenarioResult | null {
  const found = run.scenarios.find((result) => result.id === id);
  return found && !found.problem ? found : null;
}

function ratioAtLeast(id: string, minimum: number) {
  return (run: DatabaseRun): TargetOutcome => {
    const result = scenario(run, id);
    if (!result) return unmeasured(`${id} failed`);
    return {
      measured: `${percent(result.ratio)} (${reqs(result.baud.reqPerSec)} of ${reqs(result.ceiling.reqPerSec)} req/s)`,
      isMet: result.ratio >= minimum,
    };
  };
}

/**
 * A later page answered as fast as the first, within 15%: neither slower nor faster. A deep
 * page much faster than the first is as suspicious as a slow one (the first may have lost its
 * index), so that is not met either.
 */
function sameSpeed(laterId: string, firstId: string, firstName: string) {
  return (run: DatabaseRun): TargetOutcome => {
    const later = scenario(run, laterId);
    const first = scenario(run, firstId);
    if (!later || !first) return unmeasured(`${laterId} or ${firstId} failed`);
    const ratio = later.baud.reqPerSec / first.baud.reqPerSec;
    return {
      measured: `${percent(ratio)} of ${firstName} (${reqs(later.baud.reqPerSec)} vs ${reqs(first.baud.reqPerSec)} req/s)`,
      isMet: Math.abs(ratio - 1) <= 0.15,
    };
  };
}

export const TARGETS: readonly Target[] = [
  {
    id: 'system-info',
    text: '`/system/info` ≥ 60% of the ceiling',
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate: ratioAtLeast('system-info', 0.6),
  },
  {
    id: 'page-jwt',
    text: 'message page 1 with JWT ≥ 25% of the ceiling',
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate: ratioAtLeast('page-jwt', 0.25),
  },
  {
    id: 'page-jwt-aim',
    text: 'aim: message page 1 with JWT ≥ 40% of the ceiling',
    bindsOn: ['sqlite'],
    isAim: true,
    evaluate: ratioAtLeast('page-jwt', 0.4),
  },
  {
    id: 'detail',
    text: 'message detail ≥ 30% of the ceiling',
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate: ratioAtLeast('detail', 0.3),
  },
  {
    id: 'deep-vs-first',
    text: 'deep page within 15% of page 1 (req/s)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate: sameSpeed('deep-page', 'page-jwt', 'page 1'),
  },
  {
    id: 'newest-vs-first',
    text: 'newest page (order=newest) within 15% of page 1 (req/s)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate: sameSpeed('newest-page', 'page-jwt', 'page 1'),
  },
  {
    id: 'newest-deep-vs-first',
    text: 'deep newest-first page within 15% of page 1 (req/s)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate: sameSpeed('newest-deep-page', 'page-jwt', 'page 1'),
  },
  {
    id: 'thread-last-vs-first',
    text: 'last page of a 10,000-message, 50-level thread within 15% of its first page (req/s)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate: sameSpeed('thread-last', 'thread-first', 'the first page'),
  },
  {
    id: 'deep-p99',
    text: 'deep page p99 ≤ 4 × p50',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const deep = scenario(run, 'deep-page');
      if (!deep) return unmeasured('deep-page failed');
      const { p50Ms, p99Ms } = deep.baud;
      return {
        measured: `p50 ${p50Ms} ms, p99 ${p99Ms} ms (${(p99Ms / p50Ms).toFixed(1)}×)`,
        isMet: p99Ms <= 4 * p50Ms,
      };
    },
  },
  {
    id: 'idle-rss',
    text: 'idle RSS < 120 MiB',
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate: (run) => ({ measured: mib(run.idleRssBytes), isMet: run.idleRssBytes < 120 * MiB }),
  },
  {
    id: 'crawl-rss',
    text: 'issue 30: RSS after one client walks the whole area < 200 MiB',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate: ({ crawlMemory }) => ({
      measured: `${mib(crawlMemory.afterWalkBytes)} (${mib(crawlMemory.afterSecondWalkBytes)} after a second walk)`,
      isMet: crawlMemory.afterWalkBytes < 200 * MiB && crawlMemory.afterSecondWalkBytes < 200 * MiB,
    }),
  },
  {
    id: 'upload-rss',
    text: 'upload: server RSS growth < 64 MiB',
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate(run) {
      if (!run.upload || run.upload.problem) return unmeasured('the upload failed');
      return {
        measured: `+${mib(run.upload.rssGrowthBytes)} for ${mib(run.upload.bytes)}`,
        isMet: run.upload.rssGrowthBytes < 64 * MiB,
      };
    },
  },
  {
    id: 'upload-throughput',
    text: "upload ≥ 50% of a plain copy's throughput",
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate(run) {
      if (!run.upload || run.upload.problem) return unmeasured('the upload failed');
      const { baudBytesPerSec, referenceBytesPerSec, ratio } = run.upload;
      return {
        measured: `${percent(ratio)} (${(baudBytesPerSec / MiB).toFixed(0)} vs ${(referenceBytesPerSec / MiB).toFixed(0)} MiB/s)`,
        isMet: ratio >= 0.5,
      };
    },
  },
  {
    id: 'event-fanout-p99',
    text: 'event fan-out: p99 delay from post acknowledgement to receipt < 250 ms over 1,000 streams',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const fanout = run.eventFanout;
      if (!fanout || fanout.problem) return unmeasured('the event fan-out failed');
      return {
        measured: `p50 ${fanout.p50Ms.toFixed(1)} ms, p99 ${fanout.p99Ms.toFixed(1)} ms over ${reqs(fanout.streams)} streams`,
        isMet: fanout.p99Ms < 250,
      };
    },
  },
  {
    id: 'event-stream-memory',
    text: '< 50 KiB of server RSS per idle stream',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const fanout = run.eventFanout;
      if (!fanout || fanout.problem) return unmeasured('the event fan-out failed');
      // The heap shrank more than the streams took: the difference says nothing about them.
      if (fanout.bytesPerStream <= 0)
        return unmeasured(
          `RSS fell while the streams opened (${mib(fanout.rssBeforeBytes)} → ${mib(fanout.rssWithStreamsBytes)})`,
        );
      return {
        measured: `${(fanout.bytesPerStream / 1024).toFixed(1)} KiB (${mib(fanout.rssBeforeBytes)} → ${mib(fanout.rssWithStreamsBytes)} with ${reqs(fanout.streams)} streams)`,
        isMet: fanout.bytesPerStream < 50 * 1024,
      };
    },
  },
  {
    id: 'terminal-idle-callers',
    text: `terminal: ≥ ${reqs(TERMINAL_NODE_CALLERS)} idle SSH callers at the main menu on one node, server RSS growth < 100 MiB`,
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const terminal = run.terminalCallers;
      if (!terminal) return unmeasured('the terminal callers failed');
      const growthBytes = terminal.rssWithCallersBytes - terminal.rssBeforeBytes;
      const measured = `${reqs(terminal.held)} of ${reqs(terminal.callers)} held, RSS +${mib(growthBytes)} (${(terminal.bytesPerCaller / 1024).toFixed(1)} KiB per caller)`;
      // --quick opens fewer: what they cost is worth seeing, but it says nothing of holding 500.
      if (terminal.callers < TERMINAL_NODE_CALLERS) return unmeasured(`${measured}; only ${terminal.callers} opened`);
      return { measured, isMet: terminal.held >= TERMINAL_NODE_CALLERS && growthBytes < 100 * MiB };
    },
  },
  {
    id: 'terminal-login-p99',
    text: 'terminal: SSH login → main menu p99 < 300 ms (from the accepted login to `Your choice: `, with a key)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const withKey = run.terminalCallers?.logins.find((times) => times.method === 'key');
      if (!withKey || withKey.logins === 0) return unmeasured('the terminal logins failed');
      if (withKey.failures > 0) return unmeasured(`${withKey.failures} logins failed`);
      const { readyToMenu, connectToMenu } = withKey;
      return {
        measured: `p50 ${readyToMenu.p50Ms.toFixed(1)} ms, p99 ${readyToMenu.p99Ms.toFixed(1)} ms over ${reqs(withKey.logins)} logins (dial → menu p99 ${connectToMenu.p99Ms.toFixed(1)} ms)`,
        isMet: readyToMenu.p99Ms < 300,
      };
    },
  },
  {
    id: 'search-rare-p99',
    text: 'issue 18: search for a rare word, p99 < 50 ms',
    bindsOn: ['sqlite'],
    isAim: false,
    evaluate(run) {
      const result = scenario(run, 'search-rare');
      if (!result) return unmeasured('search-rare failed');
      return {
        measured: `p50 ${result.baud.p50Ms} ms, p99 ${result.baud.p99Ms} ms (${reqs(result.baud.reqPerSec)} req/s)`,
        isMet: result.baud.p99Ms < 50,
      };
    },
  },
  {
    id: 'import-with-search',
    text: 'issue 30: `baud message import` with the search index ≥ 70% of the rate without it (same fixture, same run)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const without = run.importWithoutIndex;
      if (without === null) return unmeasured('the import without the index was not measured');
      const ratio = run.seeding.messagesPerSec / without.messagesPerSec;
      return {
        measured: `${percent(ratio)} (${reqs(run.seeding.messagesPerSec)} of ${reqs(without.messagesPerSec)} messages/s)`,
        isMet: ratio >= 0.7,
      };
    },
  },
  {
    id: 'ftn-toss',
    text: 'issue 35: `baud ftn toss` ≥ 5,000 echomail messages/s (generated bundles, start-up included)',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const toss = run.ftnToss;
      if (!toss || toss.problem) return unmeasured('the toss failed');
      return {
        measured: `${reqs(toss.messagesPerSec)} messages/s (${reqs(toss.tossed)} in ${toss.seconds.toFixed(1)} s), peak RSS ${mib(toss.peakRssBytes)}`,
        isMet: toss.messagesPerSec >= 5000,
      };
    },
  },
  {
    // 1.10 is the edge of the noise: the same measurement with the plain area on both sides (10
    // rounds of 2 s each, SQLite, the 2-core machine shared with other work) gave ×0.977, ×1.026
    // and ×1.080. The posts are the post scenario's, 10 connections back to back: the machine is
    // saturated, so the scanner's work shows in the posts' p50 as whatever CPU it takes.
    id: 'ftn-export-post-p50',
    text: 'issue 35: post p50 into an echomail area (its scanner exporting) ≤ 1.10 × post p50 into an area of no network',
    bindsOn: ['sqlite', 'postgres'],
    isAim: false,
    evaluate(run) {
      const posting = run.echomailPosting;
      if (!posting || posting.problem) return unmeasured('posting with an echomail area failed');
      return {
        measured: `×${posting.ratio.toFixed(3)} (p50 ${posting.echomail.p50Ms.toFixed(2)} vs ${posting.plain.p50Ms.toFixed(2)} ms; ${reqs(posting.exported)} exported)`,
        isMet: posting.ratio <= 1.1,
      };
    },
  },
];

/** Every target judged on every run, in the order of `TARGETS`. */
export function evaluateTargets(runs: readonly DatabaseRun[]) {
  return TARGETS.map((target) => ({
    target,
    outcomes: runs.map((run) => ({ database: run.database, ...target.evaluate(run) })),
  }));
}

export type TargetReport = ReturnType<typeof evaluateTargets>;

/** Binding targets (not aims) that a run measured and missed. */
export function missedTargets(report: TargetReport): string[] {
  return report.flatMap(({ target, outcomes }) =>
    outcomes
      .filter((outcome) => !target.isAim && target.bindsOn.includes(outcome.database) && outcome.isMet === false)
      .map((outcome) => `${target.text} on ${outcome.database}: ${outcome.measured}`),
  );
}
