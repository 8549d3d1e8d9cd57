import type { Caller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { EventHub } from './event-hub.js';
import type { BoardEvent, EventLog } from './event-log.js';
import type { EventVisibility } from './event-visibility.js';

/** How often a stream with credentials checks that they still hold (the caller cache is fresher than this). */
const CREDENTIAL_CHECK_MS = 1000;
/**
 * What one stream may hold for its client: bytes written that the client has not taken yet plus
 * events waiting to be written. Live events that would not fit are not held: the stream reads
 * them from the log later, at its client's pace. 1,000 streams on a node hold 1 GiB at worst.
 */
export const MAX_UNSENT_BYTES = 1024 * 1024;
/**
 * A stream whose client takes nothing for this long while data waits for it is destroyed (its
 * client resumes with Last-Event-ID): twice the longest heartbeat gap, long enough for a phone
 * between cells, short enough that a dead peer does not keep its budget for minutes.
 */
export const STALL_MS = 30_000;
/** How often a stream looks at whether its client took anything. */
const STALL_CHECK_MS = 1000;
/**
 * Events a catch-up reads from the log at once, of which it keeps at most `CATCH_UP_BATCH_BYTES`'
 * worth; the next batch is read only once the client has taken the previous one.
 */
const CATCH_UP_BATCH = 32;
/** A quarter of the budget: the rest is for what waits in the connection, heartbeats and live events. */
const CATCH_UP_BATCH_BYTES = MAX_UNSENT_BYTES / 4;
/** What an EventSource waits before it reconnects. */
const RECONNECT_MS = 3000;
const HEARTBEAT = ': heartbeat\n\n';

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
  /** Bytes the client has taken so far (handed on to the operating system): grows while it reads. */
  takenBytes(): number;
  /** Resolves once the client has taken what waits, or the connection is gone. */
  drained(): Promise<void>;
  /** Ends the response after what was written. */
  end(): void;
  /** Drops what was not sent and closes the connection at once. */
  destroy(): void;
}

/** An open event stream, as the node that holds it sees it. */
export interface EventStream {
  /** Ends the stream after what was written (and `lastWords`); its client reconnects with Last-Event-ID. */
  close(lastWords?: string): void;
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
 * Writing waits for a client that is behind. The stream is either live — holding the events the
 * node's hub hands it, within {@link MAX_UNSENT_BYTES} with what waits in the connection — or
 * catching up: reading the log itself, a batch at a time once the client took the last, up to
 * the hub's position, then live again. A resume starts by catching up, and a live stream that
 * would go over its budget (a burst read at once, a slow client) drops what it holds and catches
 * up from the last event it wrote: every event once, in order, at the client's own pace. Only a
 * client that takes nothing for {@link STALL_MS} while data waits loses its stream, destroyed,
 * not ended, so nothing more is kept for it.
 */
export async function openEventStream(
  deps: { hub: EventHub; log: EventLog; mayCallerSee: EventVisibility; clock: Clock },
  options: EventStreamOptions,
): Promise<EventStream> {
  const { hub, log, mayCallerSee, clock } = deps;
  const { sink } = options;
  let caller = options.caller;
  /** The newest event written or passed over: the next one the client gets is after it. */
  let deliveredThrough = 0;
  /** The newest event the hub handed this stream: a catch-up reads the log up to here. */
  let hubThrough = 0;
  /** Reading the log instead of holding what the hub hands on. */
  let isCatchingUp = false;
  let isClosed = false;
  /** Live events read while an earlier write is still going, oldest first. */
  const live: BoardEvent[] = [];
  /** Bytes of the frames of events held but not yet written: `live` and the catch-up's batch. */
  let heldBytes = 0;
  let writing: Promise<void> = Promise.resolve();

  const stop = () => {
    if (isClosed) return false;
    isClosed = true;
    unsubscribe();
    clearInterval(heartbeat);
    clearInterval(credentialCheck);
    clearInterval(stallCheck);
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

  /** Drops what was not sent and closes the connection: nothing more is kept for this client. */
  const destroy = () => {
    if (stop()) sink.destroy();
  };

  /** Whether `bytes` more fit in what the stream may hold. */
  const fits = (bytes: number) => sink.unsentBytes() + heldBytes + bytes <= MAX_UNSENT_BYTES;

  /**
   * Whether a catch-up's first event of a batch fits; one that does not, once the client took
   * everything before it, never will: the stream is destroyed.
   */
  function admits(bytes: number): boolean {
    if (isClosed) return false;
    if (fits(bytes)) return true;
    destroy();
    return false;
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

  /** One thing written at a time, in order: deliveries and catch-ups queue behind each other. */
  const queueWriting = (write: () => Promise<void>) => {
    writing = writing.then(write).catch(() => close());
  };

  /**
   * Holds the live events this stream wants; when they do not fit, holds none (not those held
   * before either: they are older) and catches up from the log instead. Returns whether it held.
   */
  function holdLive(events: readonly BoardEvent[]): boolean {
    for (const event of events) {
      if (event.id <= deliveredThrough || !options.accepts(event)) continue;
      const { bytes } = frameOf(event);
      if (!fits(bytes)) {
        for (const dropped of live.splice(0)) heldBytes -= frameOf(dropped).bytes;
        startCatchUp();
        return false;
      }
      heldBytes += bytes;
      live.push(event);
    }
    return true;
  }

  /**
   * Live events are written in order, by one delivery at a time: while one is queued (or
   * waiting for the client), new events join `live` instead of queueing another.
   */
  let isDeliveryQueued = false;
  const enqueue = (events: readonly BoardEvent[]) => {
    hubThrough = Math.max(hubThrough, events[events.length - 1]?.id ?? 0);
    if (isClosed || isCatchingUp || !holdLive(events) || live.length === 0 || isDeliveryQueued) return;
    isDeliveryQueued = true;
    queueWriting(() => {
      isDeliveryQueued = false;
      return deliver(live);
    });
  };

  function startCatchUp(): void {
    if (isCatchingUp) return;
    isCatchingUp = true;
    queueWriting(catchUp);
  }

  /**
   * Reads the log after `deliveredThrough` up to the hub's position, a batch at a time, each
   * only once the client took the last; the hub may move on meanwhile, and the catch-up follows
   * it. When the hub's position is reached, the stream is live again — with no wait between the
   * last look and the switch, so every later event comes from the hub. When the log no longer
   * holds what comes next (pruned while the client was behind), says `reset` and goes on from
   * the hub's position.
   */
  async function catchUp(): Promise<void> {
    const batch: BoardEvent[] = [];
    while (!isClosed && deliveredThrough < hubThrough) {
      const after = deliveredThrough;
      const target = hubThrough;
      const events = await log.readAfter(after, CATCH_UP_BATCH);
      // Looked at after the read: a prune that took what the read missed has been recorded by then.
      if (after < (await log.prunedThrough())) {
        deliveredThrough = hubThrough;
        // Written once, right after the client took the last batch: it fits.
        sink.write(
          sseFrame(
            'reset',
            { detail: `Events after ${after} are no longer kept: reload what you show, then follow from here.` },
            deliveredThrough,
          ),
        );
        break;
      }
      let readThrough = after;
      let batchBytes = 0;
      let isBatchFull = false;
      for (const event of events) {
        if (event.id > target) break;
        if (options.accepts(event)) {
          const { bytes } = frameOf(event);
          // As many as fit the batch's share; the rest are read again with the next batch.
          if (batch.length > 0 && (batchBytes + bytes > CATCH_UP_BATCH_BYTES || !fits(bytes))) {
            isBatchFull = true;
            break;
          }
          if (!admits(bytes)) return;
          batchBytes += bytes;
          heldBytes += bytes;
          batch.push(event);
        }
        readThrough = event.id;
      }
      // A read short of a whole batch, or one past the target, saw every event up to the target.
      const last = events[events.length - 1];
      if (!isBatchFull && (events.length < CATCH_UP_BATCH || (last !== undefined && last.id > target))) {
        readThrough = target;
      }
      await deliver(batch);
      // Events the filter left out move the cursor too.
      deliveredThrough = Math.max(deliveredThrough, readThrough);
    }
    isCatchingUp = false;
  }

  // Subscribed first, so nothing read from now on is missed; a catch-up fills in before it.
  const unsubscribe = hub.subscribe(enqueue);
  hubThrough = hub.position;
  // A heartbeat keeps an idle connection open: while data waits for the client it is not needed.
  const heartbeat = setInterval(() => {
    if (fits(HEARTBEAT.length)) sink.write(HEARTBEAT);
  }, options.heartbeatMs);
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
  let takenBytes = sink.takenBytes();
  let tookAt = clock.now().getTime();
  const stallCheck = setInterval(() => {
    const taken = sink.takenBytes();
    const now = clock.now().getTime();
    if (taken !== takenBytes || sink.unsentBytes() === 0) {
      takenBytes = taken;
      tookAt = now;
    } else if (now - tookAt >= STALL_MS) {
      destroy();
    }
  }, STALL_CHECK_MS);
  heartbeat.unref();
  credentialCheck.unref();
  stallCheck.unref();

  sink.write(`retry: ${RECONNECT_MS}\n: baud event stream\n\n`);
  const { lastEventId } = options;
  if (lastEventId === null || lastEventId >= hubThrough) {
    deliveredThrough = lastEventId === null ? hubThrough : Math.min(lastEventId, hubThrough);
  } else {
    deliveredThrough = lastEventId;
    startCatchUp();
  }

  return { close };
}
