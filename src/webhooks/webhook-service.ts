import { randomBytes } from 'node:crypto';
import { type Caller, isSysop, type UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../errors.js';
import { checkEventFilter } from '../events/event-filter.js';
import type { EventLog } from '../events/event-log.js';
import { mapPage, type Page, type PageRequest } from '../page.js';
import { deliveryIdOf, deliveryRequest, TEST_EVENT_TYPE, webhookSecret } from './webhook-delivery.js';
import { postWebhook } from './webhook-request.js';
import type { DeliveryRow, WebhookRow, WebhookStore } from './webhook-store.js';
import { checkWebhookUrl, resolveWebhookTarget, WebhookTargetError } from './webhook-target.js';

/** A webhook as its owner (or a sysop) sees it; the secret is shown once, at creation. */
export interface WebhookView {
  readonly id: number;
  readonly owner: string;
  readonly url: string;
  readonly events: string[];
  readonly areas: string[];
  readonly description: string;
  readonly createdAt: string;
  readonly active: boolean;
  /** Why it stopped (failing for 24 h, 50 failures in a row, its owner disabled or their password reset), or null. */
  readonly deactivationReason: string | null;
  readonly consecutiveFailures: number;
}

export interface CreatedWebhook extends WebhookView {
  readonly secret: string;
}

export interface WebhookInput {
  readonly url: string;
  readonly events: readonly string[];
  readonly areas?: readonly string[] | undefined;
  readonly description?: string | undefined;
}

export interface WebhookPatch {
  readonly url?: string | undefined;
  readonly events?: readonly string[] | undefined;
  readonly areas?: readonly string[] | undefined;
  readonly description?: string | undefined;
  readonly active?: boolean | undefined;
}

/** One attempt of the delivery log. */
export interface DeliveryView {
  readonly eventId: number;
  readonly deliveryId: string;
  readonly attempt: number;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly attemptedAt: string;
}

/** The answer of a test delivery. */
export interface TestDelivery {
  readonly deliveryId: string;
  readonly success: boolean;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
}

export interface WebhookService {
  /**
   * `POST /webhooks`: the new webhook, its secret shown this once. Over the per-user limit → 409;
   * a credential that may not read → 403.
   */
  create(caller: Caller, input: WebhookInput): Promise<CreatedWebhook>;
  /** The operator's `baud webhook add`, for any user. */
  createFor(userId: number, input: WebhookInput): Promise<CreatedWebhook>;
  /** The caller's webhooks (a sysop's: everyone's), by id. */
  list(caller: Caller, request: PageRequest): Promise<Page<WebhookView>>;
  /** Every webhook (the operator's CLI). */
  listAll(request: PageRequest): Promise<Page<WebhookView>>;
  /** A webhook the caller may manage; anyone else's is a 404. */
  get(caller: Caller, id: number): Promise<WebhookView>;
  /**
   * Changes what was given; `active: true` revives a deactivated webhook with its failures
   * forgotten. A credential that may not read → 403, as for `create`.
   */
  update(caller: Caller, id: number, patch: WebhookPatch): Promise<WebhookView>;
  remove(caller: Caller, id: number): Promise<void>;
  /** The operator's `baud webhook remove`. */
  removeById(id: number): Promise<void>;
  /**
   * Sends a `webhook.test` event now and answers how it went; it is logged with event id 0.
   * At most TEST_DELIVERIES_PER_WINDOW per webhook per window, else 429.
   */
  test(caller: Caller, id: number): Promise<TestDelivery>;
  /** The delivery log, newest first. */
  deliveries(caller: Caller, id: number, request: PageRequest): Promise<Page<DeliveryView>>;
  /** The operator's `baud webhook deliveries`. */
  deliveriesById(id: number, request: PageRequest): Promise<Page<DeliveryView>>;
}

/**
 * Test deliveries one webhook may send per window, counted across nodes: enough to debug a
 * receiver, too few to turn the board into a flood of POSTs at someone else's (the attack run
 * sent 50 in 173 ms).
 */
export const TEST_DELIVERIES_PER_WINDOW = 5;
export const TEST_WINDOW_SECONDS = 60;

export function toWebhookView(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    owner: row.username,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    areas: JSON.parse(row.areas) as string[],
    description: row.description,
    createdAt: row.createdAt,
    active: row.deactivatedAt === null,
    deactivationReason: row.deactivationReason,
    consecutiveFailures: row.consecutiveFailures,
  };
}

function toDeliveryView(row: DeliveryRow): DeliveryView {
  const { eventId, deliveryId, attempt, statusCode, durationMs, error, attemptedAt } = row;
  return { eventId, deliveryId, attempt, statusCode, durationMs, error, attemptedAt };
}

/**
 * Webhooks: who may make, see and change which (owners their own, sysops all; someone else's
 * is a 404), the checks on their targets and filters, test deliveries and the delivery log.
 * The HTTP routes and the operator's CLI share it; deliveries are sent by the webhook sender.
 */
export function createWebhookService(deps: {
  store: WebhookStore;
  log: EventLog;
  config: Config;
  clock: Clock;
  boardSecret: Uint8Array;
}): WebhookService {
  const { store, log, clock, boardSecret } = deps;
  const settings = deps.config.webhooks;

  function userOf(caller: Caller): UserCaller {
    if (caller.kind !== 'user') throw new UnauthorizedError('auth.required', 'Log in to manage webhooks.');
    return caller;
  }

  /**
   * A caller who may make or change what a webhook delivers and where: one who may read. A
   * delivery shows what its owner may read, so a write-only API key would otherwise read through
   * a webhook what it may not read itself.
   */
  function directorOf(caller: Caller): UserCaller {
    const user = userOf(caller);
    if (!user.scopes.has('read')) {
      throw new ForbiddenError(
        'auth.scope-insufficient',
        "Webhooks deliver what their owner may read: this API key's scope needs read as well as write.",
      );
    }
    return user;
  }

  /** The webhook if the caller may manage it; else 404, so others' webhooks stay unknown. */
  async function managed(caller: Caller, id: number): Promise<WebhookRow> {
    const user = userOf(caller);
    const row = await store.find(id);
    if (!row || (row.userId !== user.user.id && !isSysop(caller)))
      throw new NotFoundError('webhook.not-found', `No webhook ${id}.`);
    return row;
  }

  /** A target a delivery may go to: http(s), and (unless allowed) public after DNS resolution; else 400. */
  async function checkTarget(url: string): Promise<string> {
    try {
      const parsed = checkWebhookUrl(url);
      await resolveWebhookTarget(parsed, { allowPrivateTargets: settings.allowPrivateTargets });
      return parsed.toString();
    } catch (error) {
      if (!(error instanceof WebhookTargetError)) throw error;
      throw new BadRequestError(error.code, error.message, [{ pointer: '/body/url', message: error.reason }]);
    }
  }

  /** A slot for a test delivery of the webhook, or 429 with Retry-After until its window ends. */
  async function takeTestSlot(id: number): Promise<void> {
    const now = clock.now();
    const windowMs = TEST_WINDOW_SECONDS * 1000;
    const windowOverAt = new Date(now.getTime() - windowMs).toISOString();
    const slot = { now: now.toISOString(), windowOverAt, maxTests: TEST_DELIVERIES_PER_WINDOW };
    if (await store.takeTestSlot(id, slot)) return;
    const startedAt = (await store.find(id))?.testWindowStartedAt;
    const endsInMs = startedAt ? Date.parse(startedAt) + windowMs - now.getTime() : windowMs;
    throw new TooManyRequestsError(
      'rate-limit.exceeded',
      `Webhook ${id} has had ${TEST_DELIVERIES_PER_WINDOW} test deliveries in ${TEST_WINDOW_SECONDS} seconds: wait for the next.`,
      endsInMs / 1000,
    );
  }

  const filterOf = (events: readonly string[], areas: readonly string[]) =>
    checkEventFilter(events, areas, { types: '/body/events', areas: '/body/areas' });

  async function createFor(userId: number, input: WebhookInput): Promise<CreatedWebhook> {
    // The filter first: it is cheap, and a bad one should not cost a DNS lookup.
    const filter = filterOf(input.events, input.areas ?? []);
    const url = await checkTarget(input.url);
    const secretSalt = randomBytes(16).toString('base64url');
    const id = await store.insertWithinLimit(
      {
        userId,
        url,
        events: filter.types,
        areas: filter.areas,
        description: input.description ?? '',
        secretSalt,
        createdAt: clock.now().toISOString(),
        deliveredThrough: await log.latestId(),
      },
      settings.maxPerUser,
    );
    if (id === null)
      throw new ConflictError(
        'webhook.limit-reached',
        `You have ${settings.maxPerUser} webhooks already: remove one first.`,
      );
    const row = await store.find(id);
    if (!row) throw new NotFoundError('webhook.not-found', `No webhook ${id}.`);
    return { ...toWebhookView(row), secret: webhookSecret(boardSecret, id, secretSalt) };
  }

  return {
    create: (caller, input) => createFor(directorOf(caller).user.id, input),

    createFor,

    async list(caller, request) {
      const user = userOf(caller);
      return mapPage(await store.list(isSysop(caller) ? null : user.user.id, request), toWebhookView);
    },

    listAll: async (request) => mapPage(await store.list(null, request), toWebhookView),

    get: async (caller, id) => toWebhookView(await managed(caller, id)),

    async update(caller, id, patch) {
      directorOf(caller);
      const row = await managed(caller, id);
      const url = patch.url === undefined ? undefined : await checkTarget(patch.url);
      const filter =
        patch.events === undefined && patch.areas === undefined
          ? undefined
          : filterOf(
              patch.events ?? (JSON.parse(row.events) as string[]),
              patch.areas ?? (JSON.parse(row.areas) as string[]),
            );
      await store.update(id, {
        ...(url === undefined ? {} : { url }),
        ...(filter === undefined ? {} : { events: filter.types, areas: filter.areas }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
      });
      const now = clock.now().toISOString();
      if (patch.active === true && row.deactivatedAt !== null) await store.reactivate(id, now);
      if (patch.active === false && row.deactivatedAt === null)
        await store.deactivate(id, now, 'deactivated by its owner');
      return toWebhookView((await store.find(id)) ?? row);
    },

    async remove(caller, id) {
      await managed(caller, id);
      await store.remove(id);
    },

    async removeById(id) {
      if (!(await store.find(id))) throw new NotFoundError('webhook.not-found', `No webhook ${id}.`);
      await store.remove(id);
    },

    async test(caller, id) {
      const row = await managed(caller, id);
      await takeTestSlot(row.id);
      const now = clock.now();
      const deliveryId = deliveryIdOf(row.id, `test:${now.getTime()}`);
      const request = deliveryRequest(
        { id: 0, type: TEST_EVENT_TYPE, createdAt: now.toISOString(), data: { webhookId: row.id } },
        deliveryId,
        webhookSecret(boardSecret, row.id, row.secretSalt),
        now,
      );
      const attempt = await postWebhook({
        url: row.url,
        body: request.body,
        headers: request.headers,
        allowPrivateTargets: settings.allowPrivateTargets,
        timeoutMs: settings.timeoutSeconds * 1000,
      });
      await store.logAttempt({
        webhookId: row.id,
        eventId: 0,
        deliveryId,
        attempt: 1,
        statusCode: attempt.statusCode,
        durationMs: Math.round(attempt.durationMs),
        error: attempt.error,
        attemptedAt: now.toISOString(),
      });
      const { statusCode, error } = attempt;
      return { deliveryId, success: attempt.isSuccess, statusCode, durationMs: Math.round(attempt.durationMs), error };
    },

    async deliveries(caller, id, request) {
      await managed(caller, id);
      return mapPage(await store.deliveries(id, request), toDeliveryView);
    },

    async deliveriesById(id, request) {
      if (!(await store.find(id))) throw new NotFoundError('webhook.not-found', `No webhook ${id}.`);
      return mapPage(await store.deliveries(id, request), toDeliveryView);
    },
  };
}
