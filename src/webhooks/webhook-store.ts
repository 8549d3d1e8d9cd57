import type { Selectable } from 'kysely';
import type { Db, Dialect, Executor } from '../db/database.js';
import { pageFromRows, rowsToFetch } from '../db/keyset.js';
import type { WebhookDeliveriesTable, WebhooksTable } from '../db/schema.js';
import type { Page, PageRequest } from '../page.js';

export type WebhookRow = Selectable<WebhooksTable> & { readonly username: string };
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export interface NewWebhook {
  readonly userId: number;
  readonly url: string;
  readonly events: readonly string[];
  readonly areas: readonly string[];
  readonly description: string;
  readonly secretSalt: string;
  readonly createdAt: string;
  /** The newest event now: a webhook hears what happens after it is made. */
  readonly deliveredThrough: number;
}

export interface WebhookChanges {
  readonly url?: string;
  readonly events?: readonly string[];
  readonly areas?: readonly string[];
  readonly description?: string;
}

/** The retry state after an attempt, written only while the node still holds its claim. */
export interface AttemptOutcome {
  readonly deliveredThrough: number;
  readonly attempts: number;
  readonly failingSince: string | null;
  readonly consecutiveFailures: number;
  readonly nextAttemptAt: string;
  readonly deactivatedAt: string | null;
  readonly deactivationReason: string | null;
}

export interface WebhookStore {
  /**
   * Inserts a webhook unless its owner has `maxPerUser` already: null then. Parallel creations
   * on any number of nodes are counted one after the other and never pass the limit together.
   */
  insertWithinLimit(webhook: NewWebhook, maxPerUser: number): Promise<number | null>;
  find(id: number): Promise<WebhookRow | undefined>;
  /** One page by id, of one user's webhooks or (null) everyone's. */
  list(userId: number | null, request: PageRequest): Promise<Page<WebhookRow>>;
  update(id: number, changes: WebhookChanges): Promise<void>;
  /** Active again: failures forgotten, the next event due now. */
  reactivate(id: number, now: string): Promise<void>;
  deactivate(id: number, now: string, reason: string): Promise<void>;
  /** Deactivates every active webhook of a user, inside `trx` (a password reset's); the number deactivated. */
  deactivateOwnedBy(trx: Executor, userId: number, now: string, reason: string): Promise<number>;
  /**
   * Takes a slot in the webhook's window of test deliveries, opening a new window if the last
   * one started at or before `windowOverAt`, atomically (racing tests on any node are counted
   * one after the other); true when taken, false when the window is full.
   */
  takeTestSlot(id: number, slot: { now: string; windowOverAt: string; maxTests: number }): Promise<boolean>;
  remove(id: number): Promise<void>;
  /** Active webhooks with events after their place, due now and not claimed by a live node. */
  due(latestEventId: number, now: string, limit: number): Promise<number[]>;
  /**
   * Claims a webhook for `owner` until `until`: of several nodes (or several loops of one)
   * exactly one wins. A node that dies holding it loses it at `until`.
   */
  claim(id: number, owner: string, now: string, until: string): Promise<boolean>;
  /**
   * Writes the state after an attempt (or a skip); false when the claim was lost meanwhile, or
   * the webhook was deactivated meanwhile (by its owner, a password reset): a sender in the
   * middle of a batch must not switch it on again, and stops there.
   */
  recordOutcome(id: number, owner: string, outcome: AttemptOutcome): Promise<boolean>;
  /** Gives up `owner`'s claim. */
  release(id: number, owner: string): Promise<void>;
  /** Adds an attempt to the delivery log. */
  logAttempt(attempt: Omit<DeliveryRow, 'id'>): Promise<void>;
  /** The delivery log of a webhook, newest first, one keyset page. */
  deliveries(webhookId: number, request: PageRequest): Promise<Page<DeliveryRow>>;
  /** Deletes the attempts of the delivery log made before `cutoff` (the event log's retention). */
  pruneDeliveries(cutoff: string): Promise<void>;
}

/** A keyset page of rows keyed by their id. */
function pageById<Row extends { readonly id: number }>(rows: readonly Row[], request: PageRequest): Page<Row> {
  return pageFromRows(
    rows,
    request,
    (row) => row.id,
    (row) => row,
  );
}

/** Every query of webhooks and their delivery log. */
export function createWebhookStore(db: Db, dialect: Dialect): WebhookStore {
  const withOwner = () =>
    db
      .selectFrom('webhooks')
      .innerJoin('users', 'users.id', 'webhooks.userId')
      .selectAll('webhooks')
      .select('users.username');

  return {
    // The owner's row is locked first (PostgreSQL; SQLite writes one at a time).
    insertWithinLimit(webhook, maxPerUser) {
      return db.transaction().execute(async (trx) => {
        const lock = trx.selectFrom('users').select('id').where('id', '=', webhook.userId);
        await (dialect === 'postgres' ? lock.forUpdate() : lock).execute();
        const counted = await trx
          .selectFrom('webhooks')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('userId', '=', webhook.userId)
          .executeTakeFirst();
        if (Number(counted?.count ?? 0) >= maxPerUser) return null;
        const { id } = await trx
          .insertInto('webhooks')
          .values({
            ...webhook,
            events: JSON.stringify(webhook.events),
            areas: JSON.stringify(webhook.areas),
            nextAttemptAt: webhook.createdAt,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return id;
      });
    },

    find: (id) => withOwner().where('webhooks.id', '=', id).executeTakeFirst(),

    async list(userId, request) {
      const rows = await withOwner()
        .$if(userId !== null, (query) => query.where('webhooks.userId', '=', userId as number))
        .$if(request.afterKey !== null, (query) => query.where('webhooks.id', '>', request.afterKey as number))
        .orderBy('webhooks.id')
        .limit(rowsToFetch(request))
        .execute();
      return pageById(rows, request);
    },

    async update(id, changes) {
      const { events, areas, ...plain } = changes;
      if (Object.keys(changes).length === 0) return;
      await db
        .updateTable('webhooks')
        .set({
          ...plain,
          ...(events === undefined ? {} : { events: JSON.stringify(events) }),
          ...(areas === undefined ? {} : { areas: JSON.stringify(areas) }),
        })
        .where('id', '=', id)
        .execute();
    },

    async reactivate(id, now) {
      await db
        .updateTable('webhooks')
        .set({
          deactivatedAt: null,
          deactivationReason: null,
          attempts: 0,
          failingSince: null,
          consecutiveFailures: 0,
          nextAttemptAt: now,
        })
        .where('id', '=', id)
        .execute();
    },

    async deactivate(id, now, reason) {
      await db
        .updateTable('webhooks')
        .set({ deactivatedAt: now, deactivationReason: reason })
        .where('id', '=', id)
        .execute();
    },

    async deactivateOwnedBy(trx, userId, now, reason) {
      const result = await trx
        .updateTable('webhooks')
        .set({ deactivatedAt: now, deactivationReason: reason })
        .where('userId', '=', userId)
        .where('deactivatedAt', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async takeTestSlot(id, slot) {
      const result = await db
        .updateTable('webhooks')
        .set((eb) => {
          const windowIsOver = eb.or([
            eb('testWindowStartedAt', 'is', null),
            eb('testWindowStartedAt', '<=', slot.windowOverAt),
          ]);
          return {
            testWindowStartedAt: eb.case().when(windowIsOver).then(slot.now).else(eb.ref('testWindowStartedAt')).end(),
            testCount: eb
              .case()
              .when(windowIsOver)
              .then(eb.lit(1))
              .else(eb('testCount', '+', 1))
              .end(),
          };
        })
        .where('id', '=', id)
        .where((eb) =>
          eb.or([
            eb('testWindowStartedAt', 'is', null),
            eb('testWindowStartedAt', '<=', slot.windowOverAt),
            eb('testCount', '<', slot.maxTests),
          ]),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async remove(id) {
      await db.deleteFrom('webhooks').where('id', '=', id).execute();
    },

    async due(latestEventId, now, limit) {
      const rows = await db
        .selectFrom('webhooks')
        .select('id')
        .where('deactivatedAt', 'is', null)
        .where('deliveredThrough', '<', latestEventId)
        .where('nextAttemptAt', '<=', now)
        .where((eb) => eb.or([eb('leaseUntil', 'is', null), eb('leaseUntil', '<', now)]))
        .orderBy('nextAttemptAt')
        .limit(limit)
        .execute();
      return rows.map((row) => row.id);
    },

    // One atomic compare-and-set.
    async claim(id, owner, now, until) {
      const result = await db
        .updateTable('webhooks')
        .set({ leaseOwner: owner, leaseUntil: until })
        .where('id', '=', id)
        .where('deactivatedAt', 'is', null)
        .where((eb) => eb.or([eb('leaseUntil', 'is', null), eb('leaseUntil', '<', now)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async recordOutcome(id, owner, outcome) {
      const result = await db
        .updateTable('webhooks')
        .set(outcome)
        .where('id', '=', id)
        .where('leaseOwner', '=', owner)
        .where('deactivatedAt', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async release(id, owner) {
      await db
        .updateTable('webhooks')
        .set({ leaseOwner: null, leaseUntil: null })
        .where('id', '=', id)
        .where('leaseOwner', '=', owner)
        .execute();
    },

    async logAttempt(attempt) {
      await db.insertInto('webhookDeliveries').values(attempt).execute();
    },

    async pruneDeliveries(cutoff) {
      await db.deleteFrom('webhookDeliveries').where('attemptedAt', '<', cutoff).execute();
    },

    async deliveries(webhookId, request) {
      const rows = await db
        .selectFrom('webhookDeliveries')
        .selectAll()
        .where('webhookId', '=', webhookId)
        .$if(request.afterKey !== null, (query) => query.where('id', '<', request.afterKey as number))
        .orderBy('id', 'desc')
        .limit(rowsToFetch(request))
        .execute();
      return pageById(rows, request);
    },
  };
}
