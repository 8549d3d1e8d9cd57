import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readBundle } from '../src/ftn/bundle.js';
import { unpackMessage } from '../src/ftn/ftn-message.js';
import { readPacket } from '../src/ftn/packet.js';
import type { EchomailPostingResult, PostTimes } from './bench-results.js';
import { JSON_HEADERS } from './http-client.js';
import type { Progress } from './progress.js';
import { POST_BODY } from './request-scenarios.js';

/**
 * Issue 35: exporting echomail must not slow the post path measurably. The post scenario's load
 * (its body, its connections, one account) into an area of no network and into an echomail area
 * of the board's network, in alternating rounds on one node, whose scanner exports the echomail
 * posts to the hub's outbound meanwhile; each post timed here.
 *
 * Why not the load driver: autocannon keeps latencies in whole milliseconds, and a post's p50 is
 * a few of them, so a 10% difference would hide inside one step of its histogram.
 */

/** How long the scanner may take, after an echomail round, to have exported every post so far. */
const EXPORT_DEADLINE_MS = 60_000;

/** Echomail of `echoTag` in the bundles of one outbound, each bundle read once (their names never repeat). */
function outboundCounter(directory: string, echoTag: string) {
  const counted = new Map<string, number>();
  return {
    async count(): Promise<{ messages: number; packets: number }> {
      let names: string[] = [];
      try {
        names = await readdir(directory);
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
      }
      for (const name of names) {
        // Dot names are bundles still being written.
        if (name.startsWith('.') || counted.has(name)) continue;
        // Bundles (zip archives of packets), as the scanner writes them.
        let messages = 0;
        for (const entry of readBundle(await readFile(path.join(directory, name)))) {
          for (const packed of readPacket(entry.data).messages) {
            if (unpackMessage(packed).body.area === echoTag) messages += 1;
          }
        }
        counted.set(name, messages);
      }
      let messages = 0;
      for (const count of counted.values()) messages += count;
      return { messages, packets: counted.size };
    },
  };
}

/** Nearest-rank percentile of sorted times. */
function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

interface Burst {
  readonly times: number[];
  readonly failures: string[];
}

/** `connections` loops posting `body` to `url` one after another for `seconds`, each post timed. */
async function postFor(
  url: string,
  headers: Readonly<Record<string, string>>,
  connections: number,
  seconds: number,
  agent: http.Agent,
): Promise<Burst> {
  const burst: Burst = { times: [], failures: [] };
  const body = JSON.stringify(POST_BODY);
  const deadline = performance.now() + seconds * 1000;
  const postOnce = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const request = http.request(url, { method: 'POST', headers, agent });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode === 201) burst.times.push(performance.now() - started);
          else burst.failures.push(`${response.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 200)}`);
          resolve();
        });
      });
      request.on('error', (error) => {
        burst.failures.push(error.message);
        resolve();
      });
      request.end(body);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) await postOnce();
    }),
  );
  return burst;
}

function postTimes(areaTag: string, times: readonly number[], seconds: number): PostTimes {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    areaTag,
    posts: sorted.length,
    seconds,
    reqPerSec: seconds > 0 ? sorted.length / seconds : 0,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
  };
}

/**
 * Posts into `plainAreaTag` and `echoAreaTag` in `rounds` rounds of `roundSeconds` each, the two
 * taking turns at going first, after a warm-up of each. After every echomail round it waits until
 * the hub's outbound holds every echomail post so far, so the next round starts with the scanner
 * idle: no round pays for the export of another's posts. Every echomail post must be found in the
 * outbound at the end, or the figure proves nothing and the result carries a problem.
 */
export async function measureEchomailPosting(options: {
  readonly apiUrl: string;
  readonly bearer: () => Promise<Record<string, string>>;
  readonly plainAreaTag: string;
  readonly echoAreaTag: string;
  readonly echoTag: string;
  /** The hub's outbound directory. */
  readonly outbound: string;
  readonly connections: number;
  readonly rounds: number;
  readonly roundSeconds: number;
  readonly warmupSeconds: number;
  readonly progress: Progress;
}): Promise<EchomailPostingResult> {
  const { connections, rounds, roundSeconds, progress } = options;
  const counter = outboundCounter(options.outbound, options.echoTag);
  const before = await counter.count();
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const headers = { ...JSON_HEADERS, ...(await options.bearer()) };
  const urlOf = (areaTag: string) => `${options.apiUrl}/messages/areas/${areaTag}/messages`;
  const failures: string[] = [];
  const plainTimes: number[] = [];
  const echoTimes: number[] = [];
  let echomailPosted = 0;
  let exportLagSeconds = 0;
  let exportedSoFar = before;

  /** Waits until the outbound holds every echomail post so far; false when the deadline passed first. */
  const awaitExport = async (): Promise<boolean> => {
    const started = performance.now();
    for (;;) {
      exportedSoFar = await counter.count();
      if (exportedSoFar.messages - before.messages >= echomailPosted) {
        exportLagSeconds = Math.max(exportLagSeconds, (performance.now() - started) / 1000);
        return true;
      }
      if (performance.now() - started > EXPORT_DEADLINE_MS) return false;
      await sleep(50);
    }
  };
  const phase = async (areaTag: string, seconds: number, times: number[] | null): Promise<boolean> => {
    const isEcho = areaTag === options.echoAreaTag;
    progress.update(`  posting into ${areaTag} (${isEcho ? 'echomail, exported' : 'no network'}) for ${seconds} s …`);
    const burst = await postFor(urlOf(areaTag), headers, connections, seconds, agent);
    times?.push(...burst.times);
    failures.push(...burst.failures);
    if (!isEcho) return true;
    echomailPosted += burst.times.length;
    return awaitExport();
  };

  let isExported = true;
  try {
    if (options.warmupSeconds > 0) {
      isExported = (await phase(options.plainAreaTag, options.warmupSeconds, null)) && isExported;
      isExported = (await phase(options.echoAreaTag, options.warmupSeconds, null)) && isExported;
    }
    for (let round = 0; round < rounds && isExported; round += 1) {
      const plainFirst = round % 2 === 0;
      const order = plainFirst
        ? [options.plainAreaTag, options.echoAreaTag]
        : [options.echoAreaTag, options.plainAreaTag];
      for (const areaTag of order) {
        const times = areaTag === options.echoAreaTag ? echoTimes : plainTimes;
        isExported = (await phase(areaTag, roundSeconds, times)) && isExported;
      }
    }
  } finally {
    agent.destroy();
  }

  const measuredSeconds = rounds * roundSeconds;
  const plain = postTimes(options.plainAreaTag, plainTimes, measuredSeconds);
  const echomail = postTimes(options.echoAreaTag, echoTimes, measuredSeconds);
  const exported = exportedSoFar.messages - before.messages;
  const problems: string[] = [];
  if (failures.length > 0) problems.push(`${failures.length} posts failed (first: ${failures[0]})`);
  if (exported !== echomailPosted) {
    problems.push(
      `the scanner exported ${exported} of ${echomailPosted} echomail posts within ${EXPORT_DEADLINE_MS / 1000} s`,
    );
  }
  if (plain.posts === 0 || echomail.posts === 0) problems.push('no post was measured');
  const result: EchomailPostingResult = {
    connections,
    rounds,
    roundSeconds,
    plain,
    echomail,
    ratio: plain.p50Ms > 0 ? echomail.p50Ms / plain.p50Ms : 0,
    echomailPosted,
    exported,
    packets: exportedSoFar.packets - before.packets,
    exportLagSeconds,
    problem: problems.length > 0 ? `posting with an echomail area: ${problems.join('; ')}` : null,
  };
  progress.log(
    `  post p50 into ${plain.areaTag} ${plain.p50Ms.toFixed(2)} ms (${Math.round(plain.reqPerSec)}/s), into echomail ${echomail.areaTag} ${echomail.p50Ms.toFixed(2)} ms (${Math.round(echomail.reqPerSec)}/s): ×${result.ratio.toFixed(3)}; exported ${exported} of ${echomailPosted} in ${result.packets} packets${result.problem ? `  ! ${result.problem}` : ''}`,
  );
  return result;
}
