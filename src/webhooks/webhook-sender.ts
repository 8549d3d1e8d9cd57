import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import { compileEventFilter } from '../events/event-filter.js';
import type { BoardEvent, EventLog, EventType } from '../events/event-log.js';
import type { EventVisibility } from '../events/event-visibility.js';
import type { UserService } from '../users/user-service.js';
import { deliveryCaller, deliveryIdOf, deliveryRequest, webhookSecret } from './webhook-delivery.js';
import { postWebhook, type WebhookAttempt } from './webhook-request.js';
import type { AttemptOutcome, WebhookRow, WebhookStore } from './webhook-store.js';

/** Events a claim delivers at most before it lets go (so one busy webhook cannot hold a sender forever). */
const EVENTS_PER_CLAIM = 100;
/** A claim outlives the longest attempt by this much; a node that dies holding one loses it then. */
const CLAIM_MARGIN_MS = 30_000;

/** What the sender reports of each attempt (metrics). */
export type AttemptObserver = (outcome: 'success' | 'failure') => void;

/**
 * The retry delay after the `attempts`-th failure in a row: retryBaseSeconds, doubling up to
 * retryMaxSeconds, then ±20% so that receivers coming back are not hit by every sender at once.
 */
export function retryDelayMs(attempts: number, settings: Config['webhooks'], random = Math.random): number {
  const doubled = settings.retryBaseSeconds * 2 ** Math.min(attempts - 1, 40);
  return Math.min(doubled, settings.retryMaxSeconds) * 1000 * (0.8 + 0.4 * random());
}

/**
 * A node's webhook sender. Each webhook is claimed in the database before anything is sent, so
 * across every node one sender at a time works through it, in event id order: the next event
 * it may see is posted, and only once that one succeeded does the next go (order per webhook).
 * A failure schedules a retry of the same event, with the same delivery id (at-least-once;
 * receivers dedupe); failing for `giveUpAfterHours` or `maxConsecutiveFailures` times in a row
 * deactivates the webhook. Each event goes out only if the webhook's owner may see it then.
 */
export function createWebhookSender(deps: {
  store: WebhookStore;
  log: EventLog;
  users: Pick<UserService, 'loadCallerUser'>;
  mayCallerSee: EventVisibility;
  config: Config;
  clock: Clock;
  boardSecret: Uint8Array;
  onError: (error: unknown) => void;
  onAttempt?: AttemptObserver;
}) {
  const { store, log, clock, config } = deps;
  const settings = config.webhooks;
  const timeoutMs = settings.timeoutSeconds * 1000;
  const me = randomUUID();
  const sending = new Map<number, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let looking = false;
  let isStopped = false;
  let stopHearingAppends: () => void = () => {};

  /** Claims what is due, up to the concurrency, and starts sending each. */
  async function sendWhatIsDue(): Promise<void> {
    if (looking || isStopped) return;
    looking = true;
    try {
      const free = settings.concurrency - sending.size;
      if (free <= 0) return;
      const now = clock.now();
      const due = await store.due(await log.latestId(), now.toISOString(), free + sending.size);
      for (const id of due.filter((candidate) => !sending.has(candidate)).slice(0, free)) {
        const until = new Date(now.getTime() + timeoutMs + CLAIM_MARGIN_MS).toISOString();
        if (!(await store.claim(id, me, now.toISOString(), until))) continue;
        const work = workThrough(id)
          .catch(deps.onError)
          .then(() => store.release(id, me))
          .catch(deps.onError)
          .finally(() => sending.delete(id));
        sending.set(id, work);
      }
    } catch (error) {
      deps.onError(error);
    } finally {
      looking = false;
    }
  }

  /** Delivers a claimed webhook's next events, in order, until it is caught up, fails, or has sent its share. */
  async function workThrough(id: number): Promise<void> {
    const row = await store.find(id);
    if (!row || row.deactivatedAt !== null) return;
    const state: AttemptOutcome = {
      deliveredThrough: row.deliveredThrough,
      attempts: row.attempts,
      failingSince: row.failingSince,
      consecutiveFailures: row.consecutiveFailures,
      nextAttemptAt: row.nextAttemptAt,
      deactivatedAt: null,
      deactivationReason: null,
    };
    const accepts = compileEventFilter({
      types: JSON.parse(row.events) as EventType[],
      areas: JSON.parse(row.areas) as string[],
    });
    const user = await deps.users.loadCallerUser(row.userId);
    if (user === null) {
      const now = clock.now().toISOString();
      await store.recordOutcome(id, me, { ...state, deactivatedAt: now, deactivationReason: 'its owner is disabled' });
      return;
    }
    const owner = deliveryCaller(user, row.url);
    let sent = 0;
    while (sent < EVENTS_PER_CLAIM && !isStopped) {
      const events = await log.readAfter(state.deliveredThrough, EVENTS_PER_CLAIM);
      if (events.length === 0) break;
      const next = events.find((event) => accepts(event) && deps.mayCallerSee(owner, event));
      if (next === undefined) {
        // None of these is for this webhook: its place moves past them.
        Object.assign(state, { deliveredThrough: events[events.length - 1]?.id ?? state.deliveredThrough });
        if (!(await store.recordOutcome(id, me, state))) return;
        continue;
      }
      const attempt = await deliver(row, next, state.attempts + 1);
      sent += 1;
      const now = clock.now();
      if (attempt.isSuccess) {
        Object.assign(state, { deliveredThrough: next.id, attempts: 0, failingSince: null, consecutiveFailures: 0 });
        if (!(await store.recordOutcome(id, me, state))) return;
        continue;
      }
      const failingSince = state.failingSince ?? now.toISOString();
      const consecutiveFailures = state.consecutiveFailures + 1;
      const failingMs = now.getTime() - Date.parse(failingSince);
      const givesUp =
        consecutiveFailures >= settings.maxConsecutiveFailures
          ? `${consecutiveFailures} failed deliveries in a row`
          : failingMs >= settings.giveUpAfterHours * 3_600_000
            ? `failing for ${settings.giveUpAfterHours} hours`
            : null;
      Object.assign(state, {
        // Before the failed event: it is tried again, unless the webhook is given up.
        deliveredThrough: next.id - 1 > state.deliveredThrough ? next.id - 1 : state.deliveredThrough,
        attempts: state.attempts + 1,
        failingSince,
        consecutiveFailures,
        nextAttemptAt: new Date(now.getTime() + retryDelayMs(state.attempts + 1, settings)).toISOString(),
        deactivatedAt: givesUp === null ? null : now.toISOString(),
        deactivationReason: givesUp,
      });
      await store.recordOutcome(id, me, state);
      return;
    }
  }

  async function deliver(row: WebhookRow, event: BoardEvent, attemptNumber: number): Promise<WebhookAttempt> {
    const now = clock.now();
    const deliveryId = deliveryIdOf(row.id, event.id);
    const request = deliveryRequest(event, deliveryId, webhookSecret(deps.boardSecret, row.id, row.secretSalt), now);
    const attempt = await postWebhook({
      url: row.url,
      body: request.body,
      headers: request.headers,
      allowPrivateTargets: settings.allowPrivateTargets,
      timeoutMs,
    });
    deps.onAttempt?.(attempt.isSuccess ? 'success' : 'failure');
    await store.logAttempt({
      webhookId: row.id,
      eventId: event.id,
      deliveryId,
      attempt: attemptNumber,
      statusCode: attempt.statusCode,
      durationMs: Math.round(attempt.durationMs),
      error: attempt.error,
      attemptedAt: now.toISOString(),
    });
    return attempt;
  }

  return {
    /** Looks for due deliveries every `intervalMs`, and after every local append (SQLite). */
    start(intervalMs: number): void {
      timer = setInterval(() => void sendWhatIsDue(), intervalMs);
      timer.unref();
      stopHearingAppends = log.onAppend(() => void sendWhatIsDue());
      void sendWhatIsDue();
    },
    /** Sends nothing more, and waits for the attempts on their way (each ends within the timeout). */
    async stop(): Promise<void> {
      isStopped = true;
      clearInterval(timer);
      stopHearingAppends();
      await Promise.all(sending.values());
    },
  };
}
