import type { Board } from '../board.js';
import { type AttemptObserver, createWebhookSender } from '../webhooks/webhook-sender.js';
import { createEventHub } from './event-hub.js';
import { createStreamRegistry, type StreamObserver } from './stream-registry.js';

/** How often a node prunes the event log (each node does; deleting what another already deleted is harmless). */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * What a serving node runs for live events: the hub that reads the event log once for all its
 * streams, the registry of its open streams, the webhook sender, and the log's pruning. Started with the HTTP app
 * and stopped with it; the CLI never starts one.
 */
export async function startLiveEvents(
  board: Board,
  options: { onError: (error: unknown) => void; streams?: StreamObserver; webhookAttempts?: AttemptObserver },
) {
  const { config } = board;
  const hub = createEventHub({
    log: board.events,
    database: board.database,
    pollIntervalMs: config.events.pollIntervalMs,
    onError: options.onError,
  });
  const streams = createStreamRegistry(
    { maxPerOwner: config.events.maxStreamsPerUser, maxPerNode: config.events.maxStreamsPerNode },
    options.streams,
  );
  const sender = createWebhookSender({
    ...board.webhookSending,
    log: board.events,
    users: board.users,
    mayCallerSee: board.mayCallerSee,
    config,
    clock: board.clock,
    onError: options.onError,
    ...(options.webhookAttempts ? { onAttempt: options.webhookAttempts } : {}),
  });
  sender.start(config.events.pollIntervalMs);
  const prune = () => board.events.prune().catch(options.onError);
  const pruning = setInterval(prune, PRUNE_INTERVAL_MS);
  pruning.unref();
  void prune();

  return {
    hub,
    streams,
    /** Ends every stream and stops reading the log. */
    async stop(): Promise<void> {
      clearInterval(pruning);
      streams.closeAll();
      await Promise.all([hub.close(), sender.stop()]);
    },
  };
}

export type LiveEvents = Awaited<ReturnType<typeof startLiveEvents>>;
