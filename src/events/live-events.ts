import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Database } from '../db/database.js';
import { createEventHub } from './event-hub.js';
import type { EventLog } from './event-log.js';
import { createEventStreamService, type EventStreamService } from './event-stream-service.js';
import type { EventVisibility } from './event-visibility.js';
import { createStreamRegistry, type StreamObserver, type StreamRegistry } from './stream-registry.js';

/** How often a node prunes the event log (each node does; deleting what another already deleted is harmless). */
const PRUNE_INTERVAL_MS = 60_000;

/** A serving node's live events (see `startLiveEvents`). */
export interface LiveEvents {
  /** The node's open streams: ended when it drains or stops. */
  readonly streams: Pick<StreamRegistry, 'endOpen' | 'closeAll'>;
  /** Opens new streams under the limits. */
  readonly eventStreams: EventStreamService;
  /** Ends every stream, stops reading the log and pruning it. */
  stop(): Promise<void>;
}

/**
 * What a serving node runs for live events: the hub that reads the event log once for all its
 * streams, the registry of its open streams, and the log's pruning. Started with the HTTP app
 * and stopped with it; the CLI never starts one.
 */
export function startLiveEvents(deps: {
  log: EventLog;
  database: Database;
  clock: Clock;
  mayCallerSee: EventVisibility;
  settings: Config['events'];
  onError: (error: unknown) => void;
  /** Told of every stream opened and closed (metrics). */
  streamObserver?: StreamObserver;
}): LiveEvents {
  const { log, settings, onError } = deps;
  const hub = createEventHub({ log, database: deps.database, pollIntervalMs: settings.pollIntervalMs, onError });
  const streams = createStreamRegistry(
    { maxPerOwner: settings.maxStreamsPerUser, maxPerNode: settings.maxStreamsPerNode },
    deps.streamObserver,
  );
  // One prune at a time, and `stop` waits for the one under way: the database closes after
  // `stop`, and a prune still running then (the first one starts at once) would fail.
  let pruneUnderWay: Promise<void> | null = null;
  const prune = () => {
    pruneUnderWay ??= log
      .prune()
      .then(() => undefined, onError)
      .finally(() => {
        pruneUnderWay = null;
      });
  };
  const pruning = setInterval(prune, PRUNE_INTERVAL_MS);
  pruning.unref();
  prune();

  return {
    streams,
    eventStreams: createEventStreamService({
      hub,
      streams,
      log,
      mayCallerSee: deps.mayCallerSee,
      clock: deps.clock,
      settings,
    }),
    async stop() {
      clearInterval(pruning);
      streams.closeAll();
      await pruneUnderWay;
      await hub.close();
    },
  };
}
