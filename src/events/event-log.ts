import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, Executor } from '../db/database.js';
import { readSetting, writeSetting } from '../db/settings-store.js';

/** Every kind of event, in the order docs/api-notes.md lists them. */
export const EVENT_TYPES = [
  'message.created',
  'message.deleted',
  'file.created',
  'file.deleted',
  'user.login',
  'user.registered',
  'pointer.updated',
  'mail.received',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event of the log: what streams and webhooks deliver. */
export interface BoardEvent {
  /** Strictly increasing, in the order the changes committed, the same on every node. */
  readonly id: number;
  readonly type: EventType;
  /** The message or file area it happened in; null for logins. */
  readonly areaTag: string | null;
  /**
   * The user it belongs to: a pointer's owner, the user who logged in or registered, a mail's
   * recipient; else null.
   */
  readonly userId: number | null;
  readonly createdAt: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export type NewEvent = Omit<BoardEvent, 'id' | 'createdAt'>;

/** The setting that remembers the newest id pruned: a resume from before it missed events. */
const PRUNED_THROUGH = 'eventsPrunedThrough';

/**
 * PostgreSQL: the transaction-scoped advisory lock every event writer takes just before it
 * takes its id. Sequence values are handed out at insert time but become visible at commit, so
 * without it a reader could see event 8 commit before event 7 and move on past 7 for good. The
 * lock is taken last in the transaction and held until commit, so ids are taken in commit
 * order. (SQLite has one writer at a time: its ids are in commit order already.)
 */
const EVENT_ORDER_LOCK = 0x6261_7564;

/** Rows read from the log at once, and written by one statement of `appendMany` (5 parameters a row). */
export const EVENT_BATCH = 500;

/** The board's durable event log: appended with each change, read in id order, pruned. */
export interface EventLog {
  /** The PostgreSQL NOTIFY channel that wakes the nodes of this board. */
  readonly channel: string;
  /**
   * Calls `listener` soon after each local append on SQLite (PostgreSQL's NOTIFY does this for
   * every node): readers then need not wait for their timers. Returns the unsubscribe.
   */
  onAppend(listener: () => void): () => void;
  /** Appends an event inside `trx`, the transaction of the change; call it last in that transaction. */
  append(trx: Executor, event: NewEvent): Promise<number>;
  /**
   * Appends `events` in their order, as `append` would one by one, in a few statements: a toss
   * announces each packet's hundreds of messages this way (on PostgreSQL one by one took three
   * round trips each, 9 of a 100,000-message toss's 36 s). Call it last in the transaction.
   */
  appendMany(trx: Executor, events: readonly NewEvent[]): Promise<void>;
  /** The newest event's id, 0 for an empty log. */
  latestId(): Promise<number>;
  /** Up to `limit` events after `afterId`, oldest first. */
  readAfter(afterId: number, limit?: number): Promise<BoardEvent[]>;
  /** The newest id pruned so far (0: none): a client resuming from an earlier id missed events. */
  prunedThrough(): Promise<number>;
  /**
   * Deletes events older than the retention or beyond the newest `maxEvents`, and (through the
   * log's `onPrune`) what ages with them. Returns how many events went. Safe on several nodes at once.
   */
  prune(): Promise<number>;
}

/**
 * The durable event log: appended in the transaction of the change it describes (a rolled-back
 * change leaves no event; a committed one always has its event), read in id order by every
 * node's streams and webhook senders, pruned by age and count.
 */
export function createEventLog(deps: {
  database: Database;
  clock: Clock;
  retentionDays: number;
  maxEvents: number;
  /**
   * Prunes what ages with the events, given the cutoff of each prune: the webhook delivery log,
   * which the board wires in (the log knows nothing of webhooks).
   */
  onPrune: (cutoff: string) => Promise<void>;
}): EventLog {
  const { database, clock } = deps;
  const { db, dialect } = database;
  const channel = notifyChannel(database.schema);
  const appendListeners = new Set<() => void>();
  const appended = () => {
    for (const listener of appendListeners) listener();
  };

  return {
    channel,

    onAppend(listener) {
      appendListeners.add(listener);
      return () => appendListeners.delete(listener);
    },

    async append(trx, event) {
      if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${EVENT_ORDER_LOCK})`.execute(trx);
      const { id } = await trx
        .insertInto('events')
        .values({
          type: event.type,
          areaTag: event.areaTag,
          userId: event.userId,
          createdAt: clock.now().toISOString(),
          data: JSON.stringify(event.data),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // Delivered at commit, to every node listening (this one too); nothing if it rolls back.
      if (dialect === 'postgres') await sql`SELECT pg_notify(${channel}, ${String(id)})`.execute(trx);
      // SQLite: this transaction commits in the microtasks that follow, before a timer fires.
      else setTimeout(appended, 0);
      return id;
    },

    async appendMany(trx, batch) {
      if (batch.length === 0) return;
      if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${EVENT_ORDER_LOCK})`.execute(trx);
      const createdAt = clock.now().toISOString();
      for (let start = 0; start < batch.length; start += EVENT_BATCH) {
        await trx
          .insertInto('events')
          .values(
            batch.slice(start, start + EVENT_BATCH).map((event) => ({
              type: event.type,
              areaTag: event.areaTag,
              userId: event.userId,
              createdAt,
              data: JSON.stringify(event.data),
            })),
          )
          .execute();
      }
      // One wake-up for the batch: listeners read the log from where they are, whatever the payload.
      if (dialect === 'postgres') await sql`SELECT pg_notify(${channel}, ${String(batch.length)})`.execute(trx);
      else setTimeout(appended, 0);
    },

    async latestId() {
      const row = await db
        .selectFrom('events')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst();
      return Number(row?.id ?? 0);
    },

    async readAfter(afterId, limit = EVENT_BATCH) {
      const rows = await db
        .selectFrom('events')
        .selectAll()
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        type: row.type as EventType,
        areaTag: row.areaTag,
        userId: row.userId,
        createdAt: row.createdAt,
        data: JSON.parse(row.data) as Record<string, unknown>,
      }));
    },

    async prunedThrough() {
      return Number((await readSetting(db, PRUNED_THROUGH)) ?? 0);
    },

    async prune() {
      const cutoff = new Date(clock.now().getTime() - deps.retentionDays * 86_400_000).toISOString();
      const byAge = await db
        .selectFrom('events')
        .select((eb) => eb.fn.max('id').as('id'))
        .where('createdAt', '<', cutoff)
        .executeTakeFirst();
      const byCount = (await this.latestId()) - deps.maxEvents;
      const through = Math.max(Number(byAge?.id ?? 0), byCount);
      await deps.onPrune(cutoff);
      if (through <= 0) return 0;
      return db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom('events').where('id', '<=', through).executeTakeFirst();
        const known = Number((await readSetting(trx, PRUNED_THROUGH)) ?? 0);
        await writeSetting(trx, PRUNED_THROUGH, String(Math.max(through, known)));
        return Number(deleted.numDeletedRows);
      });
    },
  };
}

/** One channel per board: boards (or test runs) sharing a PostgreSQL database in their own schemas never wake each other. */
function notifyChannel(schema: string | null): string {
  return schema === null
    ? 'baud_events'
    : `baud_events_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
}
