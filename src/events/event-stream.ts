import type { Caller } from '../caller.js';
import type { EventHub } from './event-hub.js';
import type { BoardEvent, EventLog } from './event-log.js';
import type { EventVisibility } from './event-visibility.js';

/** How often a stream with credentials checks that they still hold (the caller cache is fresher than this). */
const CREDENTIAL_CHECK_MS = 1000;
/**
 * What one stream may hold for its client: bytes written that the client has not taken yet plus
 * events waiting to be written. A stream that would hold more is destroyed (its client resumes
 * with Last-Event-ID); 1,000 streams on a node hold 1 GiB at worst.
 */
export const MAX_UNSENT_BYTES = 1024 * 1024;
/**
 * Events a replay reads from the log at once, of which it keeps at most `REPLAY_BATCH_BYTES`'
 * worth; the next batch is read only once the client has taken the previous one.
 */
const REPLAY_BATCH = 32;
/** A quarter of the budget: the rest is for what waits in the connection, heartbeats and live events. */
const REPLAY_BATCH_BYTES = MAX_UNSENT_BYTES / 4;
/** What an EventSource waits before it reconnects. */
const RECONNECT_MS = 3000;

/** One Server-Sent Events frame. `data` is one line: JSON never holds a raw newline. */
export function sseFrame(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An event's frame with its size: made once per event on a node, however many streams send it. */
interface EventFrame {
  readonly text: string;
  readonly bytes: number;
}

const framesOfEvents = new WeakMap<BoardEvent, EventFrame>();

function frameOf(event: BoardEvent): EventFrame {
  let frame = framesOfEvents.get(event);
  if (frame === undefined) {
    const text = sseFrame(event.type, event.data, event.id);
    frame = { text, bytes: Buffer.byteLength(text) };
    framesOfEvents.set(event, frame);
  }
  return frame;
}

/** Where a stream's frames go: the client's connection. */
export interface StreamSink {
  /** Queues `chunk` for the client; false when the client is behind: wait for `drained()` before writing more. */
  write(chunk: string): boolean;
  /** Bytes written that the client has not taken yet (still in this process). */
  unsentBytes(): number;
  /** Resolves once the client has taken what waits, or the connection is gone. */
  drained(): Promise<void>;
  /** Ends the response after what was written. */
  end(): void;
  /** Drops what was not sent and closes the connection at once. */
  destroy(): void;
}

export interface EventStreamOptions {
  readonly caller: Caller;
  /** The caller as its credential stands now, or null once it is no longer valid (expired, ended, revoked). */
  readonly recheckCaller: (() => Promise<Caller | null>) | null;
  readonly accepts: (event: BoardEvent) => boolean;
  /** `Last-Event-ID`: replay what came after it, or null to start live. */
  readonly lastEventId: number | null;
  readonly heartbeatMs: number;
  readonly sink: StreamSink;
}

/**
 * One client's stream: replays from `Last-Event-ID` (or announces a `reset` when the log no
 * longer reaches back that far), then writes every new event the caller may see — judged at
 * delivery with the credential as it stands then — with heartbeats in between, until the
 * client goes, the credential ends (`auth.expired`) or the node closes it.
 *
 * Writing waits for a client that is behind, and the replay reads its next batch only then, so
 * a slow client gets everything in order at its own pace. What the stream holds meanwhile —
 * unsent bytes and live events waiting — is held to {@link MAX_UNSENT_BYTES}: past it the
 * stream is destroyed, not ended, so nothing more is kept for a client that does not read.
 */
export async function openEventStream(
  deps: { hub: EventHub; log: EventLog; mayCallerSee: EventVisibility },
  options: EventStreamOptions,
) {
  const { hub, log, mayCallerSee } = deps;
  const { sink } = options;
  let caller = options.caller;
  let deliveredThrough = 0;
  let isClosed = false;
  /** Live events read while the replay or an earlier write is still going, oldest first. */
  const live: BoardEvent[] = [];
  /** Bytes of the frames of events held but not yet written: `live` and the replay's batch. */
  let heldBytes = 0;
  let writing: Promise<void> = Promise.resolve();

  const stop = () => {
    if (isClosed) return false;
    isClosed = true;
    unsubscribe();
    clearInterval(heartbeat);
    clearInterval(credentialCheck);
    live.length = 0;
    heldBytes = 0;
    return true;
  };

  /** Ends the stream after what was written (and `lastWords`). */
  const close = (lastWords?: string) => {
    if (!stop()) return;
    if (lastWords) sink.write(lastWords);
    sink.end();
  };

  /** Whether `bytes` more fit in what the stream may hold. */
  const fits = (bytes: number) => sink.unsentBytes() + heldBytes + bytes <= MAX_UNSENT_BYTES;

  /** Whether `bytes` more fit; when they do not, the stream is destroyed: its client is that far behind. */
  function admits(bytes: number): boolean {
    if (isClosed) return false;
    if (fits(bytes)) return true;
    if (stop()) sink.destroy();
    return false;
  }

  /** Writes a frame that is no event (a heartbeat, a reset) within the budget. */
  function writeNote(text: string): void {
    if (admits(Buffer.byteLength(text))) sink.write(text);
  }

  /**
   * Writes the held events of `queue` (taking them out) that the caller may see, in order, each
   * once; waits whenever the client is behind, and checks the credential again after each wait.
   */
  async function deliver(queue: BoardEvent[]): Promise<void> {
    if (isClosed || queue.length === 0) return;
    if (!(await credentialHolds())) return;
    while (!isClosed) {
      const event = queue.shift();
      if (event === undefined) return;
      const frame = frameOf(event);
      heldBytes -= frame.bytes;
      if (event.id <= deliveredThrough) continue;
      deliveredThrough = event.id;
      if (!mayCallerSee(caller, event) || sink.write(frame.text)) continue;
      await sink.drained();
      if (!(await credentialHolds())) return;
    }
  }

  async function credentialHolds(): Promise<boolean> {
    if (isClosed) return false;
    if (options.recheckCaller === null) return true;
    const current = await options.recheckCaller();
    if (current === null) {
      close(sseFrame('auth.expired', { detail: 'Your credential is no longer valid: log in again, then reconnect.' }));
      return false;
    }
    caller = current;
    return true;
  }

  /** Holds the live events this stream wants; false (and the stream destroyed) when they do not fit. */
  function holdLive(events: readonly BoardEvent[]): boolean {
    for (const event of events) {
      if (event.id <= deliveredThrough || !options.accepts(event)) continue;
      const { bytes } = frameOf(event);
      if (!admits(bytes)) return false;
      heldBytes += bytes;
      live.push(event);
    }
    return true;
  }

  /**
   * Live events are written in order after the replay, by one delivery at a time: while one is
   * queued (or waiting for the client), new events join `live` instead of queueing another.
   */
  let isDeliveryQueued = false;
  const enqueue = (events: readonly BoardEvent[]) => {
    if (!holdLive(events) || live.length === 0 || isDeliveryQueued) return;
    isDeliveryQueued = true;
    writing = writing
      .then(() => {
        isDeliveryQueued = false;
        return deliver(live);
      })
      .catch(() => close());
  };

  // Subscribed first, so nothing read from now on is missed; the replay below fills in before it.
  const unsubscribe = hub.subscribe(enqueue);
  const liveFrom = hub.position;
  const heartbeat = setInterval(() => writeNote(': heartbeat\n\n'), options.heartbeatMs);
  // Beside the writing, not after it: a client that stopped reading still loses its stream when its credential ends.
  let isCheckingCredential = false;
  const credentialCheck = setInterval(() => {
    if (isCheckingCredential) return;
    isCheckingCredential = true;
    credentialHolds()
      .catch(() => close())
      .finally(() => {
        isCheckingCredential = false;
      });
  }, CREDENTIAL_CHECK_MS);
  heartbeat.unref();
  credentialCheck.unref();

  writeNote(`retry: ${RECONNECT_MS}\n: baud event stream\n\n`);
  writing = writing.then(() => replay(options.lastEventId)).catch(() => close());

  async function replay(lastEventId: number | null): Promise<void> {
    if (lastEventId === null || lastEventId >= liveFrom) {
      deliveredThrough = lastEventId === null ? liveFrom : Math.min(lastEventId, liveFrom);
      return;
    }
    if (lastEventId < (await log.prunedThrough())) {
      deliveredThrough = liveFrom;
      writeNote(
        sseFrame(
          'reset',
          { detail: `Events after ${lastEventId} are no longer kept: reload what you show, then follow from here.` },
          liveFrom,
        ),
      );
      return;
    }
    deliveredThrough = lastEventId;
    let readThrough = lastEventId;
    const batch: BoardEvent[] = [];
    while (!isClosed && readThrough < liveFrom) {
      const events = (await log.readAfter(readThrough, REPLAY_BATCH)).filter((event) => event.id <= liveFrom);
      if (events.length === 0) break;
      // As many as fit the batch's share; the rest are read again with the next batch.
      let batchBytes = 0;
      for (const event of events) {
        if (options.accepts(event)) {
          const { bytes } = frameOf(event);
          if (batch.length > 0 && (batchBytes + bytes > REPLAY_BATCH_BYTES || !fits(bytes))) break;
          if (!admits(bytes)) return;
          batchBytes += bytes;
          heldBytes += bytes;
          batch.push(event);
        }
        readThrough = event.id;
      }
      await deliver(batch);
      // Events the filter left out move the cursor too.
      deliveredThrough = Math.max(deliveredThrough, readThrough);
    }
    deliveredThrough = Math.max(deliveredThrough, liveFrom);
  }

  return { close };
}

export type EventStream = Awaited<ReturnType<typeof openEventStream>>;
