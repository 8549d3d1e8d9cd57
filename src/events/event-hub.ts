import type { Database } from '../db/database.js';
import { type BoardEvent, EVENT_BATCH, type EventLog } from './event-log.js';

export type EventListener = (events: readonly BoardEvent[]) => void;

/** A node's one reader of the event log, handing each new event to its listeners. */
export interface EventHub {
  /**
   * Starts (once; later calls wait for the first) after the newest event there is now: history
   * is read by whoever needs it (a resume). A node starts its hub for its first stream, so a
   * node nobody follows holds no LISTEN connection.
   */
  start(): Promise<void>;
  /** Every event read from now on goes to `listener`, in id order; returns the unsubscribe. */
  subscribe(listener: EventListener): () => void;
  /** The id of the newest event handed to the listeners: a new subscriber gets every later one. */
  readonly position: number;
  /** Reads the log now (or once more when a read is going on). */
  wake(): void;
  /** Stops reading and listening, and waits for a read going on. */
  close(): Promise<void>;
}

/**
 * A node's one reader of the event log: it reads each new event once and hands it to every
 * local listener (the node's streams, its webhook sender). It reads when woken — by PostgreSQL
 * NOTIFY from any node, or by a local append on SQLite — and on a timer, which covers what no
 * wake-up announces (another process writing the SQLite file, a NOTIFY lost while reconnecting).
 */
export function createEventHub(deps: {
  log: EventLog;
  database: Database;
  pollIntervalMs: number;
  onError: (error: unknown) => void;
}): EventHub {
  const { log } = deps;
  const listeners = new Set<EventListener>();
  let position = 0;
  let reading: Promise<void> | null = null;
  let readAgain = false;
  let timer: NodeJS.Timeout | undefined;
  let stopListening: (() => Promise<void>) | null = null;
  let started: Promise<void> | null = null;
  let stopHearingAppends: () => void = () => {};
  let isClosed = false;

  async function start(): Promise<void> {
    position = await log.latestId();
    stopHearingAppends = log.onAppend(wake);
    const stop = await deps.database.listen(log.channel, wake);
    if (isClosed) {
      await stop();
      return;
    }
    stopListening = stop;
    timer = setInterval(wake, deps.pollIntervalMs);
    timer.unref();
  }

  async function readNewEvents(): Promise<void> {
    do {
      readAgain = false;
      for (;;) {
        const batch = await log.readAfter(position);
        const last = batch[batch.length - 1];
        if (last === undefined) break;
        position = last.id;
        for (const listener of listeners) listener(batch);
        if (batch.length < EVENT_BATCH) break;
      }
    } while (readAgain);
  }

  function wake(): void {
    if (isClosed) return;
    if (reading) {
      readAgain = true;
      return;
    }
    reading = readNewEvents()
      .catch(deps.onError)
      .finally(() => {
        reading = null;
      });
  }

  return {
    start() {
      started ??= start();
      return started;
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    get position() {
      return position;
    },

    wake,

    async close() {
      isClosed = true;
      await started?.catch(() => {});
      stopHearingAppends();
      clearInterval(timer);
      listeners.clear();
      await stopListening?.();
      await reading;
    },
  };
}
