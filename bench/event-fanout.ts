import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventFanoutResult } from './bench-results.js';
import { JSON_HEADERS, requestOnce } from './http-client.js';
import { residentBytes } from './process-memory.js';
import type { Progress } from './progress.js';

/** Streams opened at once: enough to keep the node busy, few enough not to overflow its listen backlog (511). */
const OPENING_CONCURRENCY = 50;
/** A stream without its `retry:` greeting after this long counts as not opened. */
const OPEN_TIMEOUT_MS = 10_000;
/** Quiet time before each RSS reading, so start-up's (or the opening's) garbage and buffers have settled. */
const SETTLE_MS = 2_000;
/** How long after the last post every stream may take to show every message. */
const DELIVERY_GRACE_MS = 5_000;

/** One Server-Sent Events frame, as far as the bench reads it. */
interface SseFrame {
  readonly event: string | null;
  readonly data: string | null;
  readonly hasRetry: boolean;
}

/** Splits what a stream has sent so far into whole frames (they end with a blank line) and the unfinished rest. */
function splitFrames(buffered: string): { frames: SseFrame[]; rest: string } {
  const parts = buffered.split('\n\n');
  const rest = parts.pop() ?? '';
  const frames = parts.map((part) => {
    let event: string | null = null;
    let data: string | null = null;
    let hasRetry = false;
    for (const line of part.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data = line.slice(line.startsWith('data: ') ? 6 : 5);
      else if (line.startsWith('retry:')) hasRetry = true;
    }
    return { event, data, hasRetry };
  });
  return { frames, rest };
}

/** One open stream and, per messageId, when its frame arrived here (`performance.now()`). */
interface FollowedStream {
  readonly request: http.ClientRequest;
  readonly receivedAt: Map<number, number>;
}

/** What went wrong while streams were open; the first reason of each kind makes the problem text. */
interface StreamTrouble {
  readonly refused: string[];
  endedEarly: number;
  duplicateFrames: number;
  unreadableFrames: number;
}

/**
 * Opens one stream and resolves once its `retry:` greeting arrived; anything else (a status
 * other than 200, an error, no greeting within OPEN_TIMEOUT_MS) resolves null and is noted in
 * `trouble`. The request is added to `requests` at once, so it is closed whatever happens.
 */
function followStream(
  url: string,
  headers: Readonly<Record<string, string>>,
  requests: http.ClientRequest[],
  trouble: StreamTrouble,
  isClosing: () => boolean,
): Promise<FollowedStream | null> {
  return new Promise((resolve) => {
    const receivedAt = new Map<number, number>();
    // agent: false: one connection per stream, none pooled or kept for later.
    const request = http.request(url, { headers, agent: false });
    requests.push(request);
    let isSettled = false;
    let isGreeted = false;
    const settle = (stream: FollowedStream | null, why = '') => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timeout);
      if (stream === null && !isClosing()) trouble.refused.push(why);
      resolve(stream);
    };
    const timeout = setTimeout(() => settle(null, `no greeting within ${OPEN_TIMEOUT_MS / 1000} s`), OPEN_TIMEOUT_MS);
    request.on('error', (error) => settle(null, error.message));
    request.on('response', (response) => {
      response.setEncoding('utf8');
      if (response.statusCode !== 200) {
        let body = '';
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => settle(null, `HTTP ${response.statusCode} ${body.slice(0, 200)}`));
        return;
      }
      let buffered = '';
      response.on('data', (chunk: string) => {
        // One reading per chunk: every frame in it arrived at the same moment.
        const now = performance.now();
        const { frames, rest } = splitFrames(buffered + chunk);
        buffered = rest;
        for (const frame of frames) {
          if (frame.hasRetry && !isGreeted) {
            isGreeted = true;
            settle({ request, receivedAt });
          }
          if (frame.event !== 'message.created' || frame.data === null) continue;
          const messageId = messageIdOf(frame.data);
          if (messageId === null) trouble.unreadableFrames += 1;
          else if (receivedAt.has(messageId)) trouble.duplicateFrames += 1;
          else receivedAt.set(messageId, now);
        }
      });
      // Destroying the request at the end errors the response (aborted): expected, nothing to report.
      response.on('error', () => {});
      response.on('close', () => {
        if (isGreeted && !isClosing()) trouble.endedEarly += 1;
        else settle(null, 'the stream ended before its greeting');
      });
    });
    request.end();
  });
}

/** The `messageId` of a `message.created` frame's data, or null when the data is not that. */
function messageIdOf(data: string): number | null {
  try {
    const { messageId } = JSON.parse(data) as { messageId?: unknown };
    return typeof messageId === 'number' ? messageId : null;
  } catch {
    return null;
  }
}

/** Nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

/**
 * Event fan-out: opens `streams` `GET /events?types=message.created` streams on one node (as
 * one user) and reads the node's RSS before and with them open and idle; then posts
 * `postsPerSecond` messages for `seconds` and times, on every stream, each message's frame
 * from the post's 201. Every stream is closed before it returns, whatever happened.
 *
 * Give it a node of its own, freshly started: an RSS difference means little on a heap that
 * earlier work left to shrink. One-off costs of the first stream (the node's event hub, code
 * compiled on first use) are counted in the per-stream figure, which is an upper bound.
 *
 * The frame is timed when its chunk reaches this process, so the bench's own event loop
 * (a thousand sockets to read per post) is part of the delay: that figure is an upper bound too.
 */
export async function measureEventFanout(options: {
  readonly apiUrl: string;
  readonly accessToken: string;
  readonly areaTag: string;
  readonly serverPid: number;
  readonly streams: number;
  readonly postsPerSecond: number;
  readonly seconds: number;
  readonly progress: Progress;
}): Promise<EventFanoutResult> {
  const { apiUrl, serverPid, progress } = options;
  const authorization = `Bearer ${options.accessToken}`;
  const requests: http.ClientRequest[] = [];
  const trouble: StreamTrouble = { refused: [], endedEarly: 0, duplicateFrames: 0, unreadableFrames: 0 };
  let isClosing = false;
  try {
    await sleep(SETTLE_MS);
    const rssBeforeBytes = residentBytes(serverPid);
    const openStarted = performance.now();
    const followed: FollowedStream[] = [];
    const streamUrl = `${apiUrl}/events?types=message.created`;
    const streamHeaders = { authorization, accept: 'text/event-stream' };
    for (let opened = 0; opened < options.streams; opened += OPENING_CONCURRENCY) {
      const batch = Math.min(OPENING_CONCURRENCY, options.streams - opened);
      const results = await Promise.all(
        Array.from({ length: batch }, () => followStream(streamUrl, streamHeaders, requests, trouble, () => isClosing)),
      );
      for (const stream of results) if (stream) followed.push(stream);
      progress.update(`  event fan-out: ${followed.length} / ${options.streams} streams open`);
    }
    const openSeconds = (performance.now() - openStarted) / 1000;
    await sleep(SETTLE_MS);
    const rssWithStreamsBytes = residentBytes(serverPid);

    // Posts on a fixed schedule (not one after the other), so a slow answer does not slow the rate.
    const posts = Math.round(options.postsPerSecond * options.seconds);
    const acknowledgedAt = new Map<number, number>();
    const postFailures: string[] = [];
    const postHeaders = { ...JSON_HEADERS, authorization };
    const postStarted = performance.now();
    const pending: Promise<void>[] = [];
    for (let post = 0; post < posts; post += 1) {
      await sleep(Math.max(0, postStarted + (post * 1000) / options.postsPerSecond - performance.now()));
      pending.push(
        requestOnce(`${apiUrl}/messages/areas/${options.areaTag}/messages`, {
          method: 'POST',
          headers: postHeaders,
          body: JSON.stringify({ subject: `fanout ${post}`, message: `Event fan-out post ${post} of the bench.` }),
        }).then(
          (response) => {
            const at = performance.now();
            if (response.status !== 201) postFailures.push(`HTTP ${response.status} ${response.body.toString()}`);
            else acknowledgedAt.set((JSON.parse(response.body.toString()) as { messageId: number }).messageId, at);
          },
          (error: Error) => {
            postFailures.push(error.message);
          },
        ),
      );
      progress.update(`  event fan-out: ${post + 1} / ${posts} posts to ${followed.length} streams`);
    }
    await Promise.all(pending);

    const expectedDeliveries = options.streams * posts;
    const countDeliveries = () => {
      const messageIds = [...acknowledgedAt.keys()];
      return followed.reduce(
        (sum, stream) => sum + messageIds.filter((messageId) => stream.receivedAt.has(messageId)).length,
        0,
      );
    };
    const graceEnds = performance.now() + DELIVERY_GRACE_MS;
    let deliveries = countDeliveries();
    while (deliveries < expectedDeliveries && performance.now() < graceEnds) {
      await sleep(50);
      deliveries = countDeliveries();
    }
    const rssAfterPostsBytes = residentBytes(serverPid);

    // A frame may be read before the 201 of its post (both race over different sockets): its
    // delay is negative. It is counted as early and as 0 in the percentiles, not dropped.
    const delays: number[] = [];
    let earlyDeliveries = 0;
    for (const stream of followed) {
      for (const [messageId, receivedAt] of stream.receivedAt) {
        const acknowledged = acknowledgedAt.get(messageId);
        if (acknowledged === undefined) continue;
        const delay = receivedAt - acknowledged;
        if (delay < 0) earlyDeliveries += 1;
        delays.push(Math.max(0, delay));
      }
    }
    const sorted = Float64Array.from(delays).sort();

    const problems: string[] = [];
    if (trouble.refused.length > 0) {
      problems.push(
        `${trouble.refused.length} of ${options.streams} streams not opened (first: ${trouble.refused[0]})`,
      );
    }
    if (postFailures.length > 0) problems.push(`${postFailures.length} posts failed (first: ${postFailures[0]})`);
    if (trouble.endedEarly > 0) problems.push(`${trouble.endedEarly} streams ended by the server`);
    if (deliveries < expectedDeliveries) {
      problems.push(
        `${expectedDeliveries - deliveries} of ${expectedDeliveries} deliveries missing ${DELIVERY_GRACE_MS / 1000} s after the last post`,
      );
    }
    if (trouble.duplicateFrames > 0) problems.push(`${trouble.duplicateFrames} frames delivered twice`);
    if (trouble.unreadableFrames > 0)
      problems.push(`${trouble.unreadableFrames} message.created frames without a messageId`);

    return {
      streams: options.streams,
      posts,
      postsPerSecond: options.postsPerSecond,
      openSeconds,
      expectedDeliveries,
      deliveries,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      maxMs: sorted[sorted.length - 1] ?? 0,
      earlyDeliveries,
      rssBeforeBytes,
      rssWithStreamsBytes,
      rssAfterPostsBytes,
      bytesPerStream: (rssWithStreamsBytes - rssBeforeBytes) / options.streams,
      problem: problems.length > 0 ? problems.join('; ') : null,
    };
  } finally {
    isClosing = true;
    for (const request of requests) request.destroy();
  }
}
