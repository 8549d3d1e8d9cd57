import type { Caller } from '../caller.js';
import type { EventHub } from './event-hub.js';
import type { BoardEvent, EventLog } from './event-log.js';
import type { EventVisibility } from './event-visibility.js';

/** How often a stream with credentials checks that they still hold (the caller cache is fresher than this). */
const CREDENTIAL_CHECK_MS = 1000;
/** A client this far behind (events read but not yet written out) is cut off; it resumes with Last-Event-ID. */
const MAX_PENDING_EVENTS = 10_000;
/** What an EventSource waits before it reconnects. */
const RECONNECT_MS = 3000;

/** One Server-Sent Events frame. `data` is one line: JSON never holds a raw newline. */
export function sseFrame(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface EventStreamOptions {
  readonly caller: Caller;
  /** The caller as its credential stands now, or null once it is no longer valid (expired, ended, revoked). */
  readonly recheckCaller: (() => Promise<Caller | null>) | null;
  readonly accepts: (event: BoardEvent) => boolean;
  /** `Last-Event-ID`: replay what came after it, or null to start live. */
  readonly lastEventId: number | null;
  readonly heartbeatMs: number;
  /** Writes to the client; false when its buffer is full (the data is still queued). */
  readonly write: (chunk: string) => boolean;
  /** Ends the response. */
  readonly end: () => void;
}

/**
 * One client's stream: replays from `Last-Event-ID` (or announces a `reset` when the log no
 * longer reaches back that far), then writes every new event the caller may see — judged at
 * delivery with the credential as it stands then — with heartbeats in between, until the
 * client goes, the credential ends (`auth.expired`) or the node closes it.
 */
export async function openEventStream(
  deps: { hub: EventHub; log: EventLog; mayCallerSee: EventVisibility },
  options: EventStreamOptions,
) {
  const { hub, log, mayCallerSee } = deps;
  let caller = options.caller;
  let deliveredThrough = 0;
  let isClosed = false;
  const pending: BoardEvent[] = [];
  let writing: Promise<void> = Promise.resolve();

  const close = (lastWords?: string) => {
    if (isClosed) return;
    isClosed = true;
    unsubscribe();
    clearInterval(heartbeat);
    clearInterval(credentialCheck);
    if (lastWords) options.write(lastWords);
    options.end();
  };

  /** Writes the events after `deliveredThrough` that the caller may see, credential checked first. */
  async function deliver(events: readonly BoardEvent[]): Promise<void> {
    if (isClosed || events.length === 0) return;
    if (!(await credentialHolds())) return;
    for (const event of events) {
      if (event.id <= deliveredThrough) continue;
      deliveredThrough = event.id;
      if (options.accepts(event) && mayCallerSee(caller, event))
        options.write(sseFrame(event.type, event.data, event.id));
    }
  }

  async function credentialHolds(): Promise<boolean> {
    if (options.recheckCaller === null) return true;
    const current = await options.recheckCaller();
    if (current === null) {
      close(sseFrame('auth.expired', { detail: 'Your credential is no longer valid: log in again, then reconnect.' }));
      return false;
    }
    caller = current;
    return true;
  }

  /** Events are written one batch at a time, in order, whatever the credential checks cost. */
  const enqueue = (events: readonly BoardEvent[]) => {
    if (isClosed) return;
    pending.push(...events);
    if (pending.length > MAX_PENDING_EVENTS) {
      close(': too far behind; reconnect with Last-Event-ID\n\n');
      return;
    }
    writing = writing.then(() => deliver(pending.splice(0))).catch(() => close());
  };

  // Subscribed first, so nothing read from now on is missed; the replay below fills in before it.
  const unsubscribe = hub.subscribe(enqueue);
  const liveFrom = hub.position;
  const heartbeat = setInterval(() => options.write(': heartbeat\n\n'), options.heartbeatMs);
  const credentialCheck = setInterval(() => {
    writing = writing.then(async () => void (await credentialHolds())).catch(() => close());
  }, CREDENTIAL_CHECK_MS);
  heartbeat.unref();
  credentialCheck.unref();

  options.write(`retry: ${RECONNECT_MS}\n: baud event stream\n\n`);
  writing = writing.then(() => replay(options.lastEventId)).catch(() => close());

  async function replay(lastEventId: number | null): Promise<void> {
    if (lastEventId === null || lastEventId >= liveFrom) {
      deliveredThrough = lastEventId === null ? liveFrom : Math.min(lastEventId, liveFrom);
      return;
    }
    if (lastEventId < (await log.prunedThrough())) {
      deliveredThrough = liveFrom;
      options.write(
        sseFrame(
          'reset',
          { detail: `Events after ${lastEventId} are no longer kept: reload what you show, then follow from here.` },
          liveFrom,
        ),
      );
      return;
    }
    deliveredThrough = lastEventId;
    while (!isClosed && deliveredThrough < liveFrom) {
      const batch = (await log.readAfter(deliveredThrough)).filter((event) => event.id <= liveFrom);
      if (batch.length === 0) break;
      await deliver(batch);
    }
    deliveredThrough = Math.max(deliveredThrough, liveFrom);
  }

  return { close };
}

export type EventStream = Awaited<ReturnType<typeof openEventStream>>;
