import { type ExpressionBuilder, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Db, Dialect, Executor } from '../db/database.js';
import { pageFromRows, rowsToFetch } from '../db/keyset.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { MessagesTable, Tables } from '../db/schema.js';
import { MAX_MESSAGE_ID } from '../messages/message-rules.js';
import type { Page, PageRequest } from '../page.js';
import { documentMatch, type IndexMatch, indexMatch } from '../search/full-text-index.js';
import type { SearchQuery } from '../search/search-query.js';
import { usernameKey } from '../users/username.js';

/** The area tag of private mail: ENiGMA½'s, kept so imported mail is mail here too. */
export const MAIL_AREA_TAG = 'private_mail';

export type MailBox = 'inbox' | 'sent';

/** A mail as a box lists it, read in exactly this shape. */
export interface MailRow {
  readonly messageId: number;
  readonly uuid: string;
  readonly fromUserName: string;
  readonly toUserName: string;
  readonly subject: string;
  readonly timestamp: string;
  /** 1 once read (the recipient's flag; a sent entry is always 1). */
  readonly isRead: number;
  readonly replyToUuid: string | null;
}

export interface MailDetailRow extends MailRow {
  readonly body: string;
}

/** Where a mail sits in its thread, for a reply to it. */
export interface MailPlace {
  readonly messageId: number;
  readonly threadRootId: number;
  readonly threadPath: string;
}

export interface MailEntry {
  readonly userId: number;
  readonly box: MailBox;
  readonly messageId: number;
  readonly isRead: number;
}

export interface BlockedRow {
  readonly blockedUserId: number;
  readonly blockedAt: string;
}

/** One page of a box: newest first; `unreadOnly` for the inbox's unread entries. */
export interface BoxPageRequest extends PageRequest {
  readonly box: MailBox;
  readonly unreadOnly: boolean;
}

export interface MailStore {
  /** Runs `work` in one transaction; methods that take an executor join it. */
  transaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /** One page of a user's box, newest first: a range scan of one key prefix (see boxPageQuery). */
  listBox(userId: number, request: BoxPageRequest): Promise<Page<MailRow>>;
  /**
   * The mail `uuid` if the user holds it (the inbox entry first, for a mail to oneself); one
   * statement, the same whether the uuid is unknown or someone else's mail.
   */
  findMail(userId: number, uuid: string): Promise<MailDetailRow | undefined>;
  /** The mail `uuid` held by the user, with its thread place (a reply's parent); in the reply's transaction. */
  heldMailPlace(trx: Executor, userId: number, uuid: string): Promise<MailPlace | undefined>;
  addEntries(trx: Executor, entries: readonly MailEntry[]): Promise<void>;
  /** Adds `delta` to the user's unread count (creating its row). Locks the row: senders to one user queue here. */
  addToUnreadCount(trx: Executor, userId: number, delta: number): Promise<void>;
  /**
   * Sets the read flag of the user's inbox entry of `uuid`; returns its message id and whether the
   * flag changed, or undefined when the user has no such inbox entry.
   */
  setRead(
    trx: Executor,
    userId: number,
    uuid: string,
    isRead: boolean,
  ): Promise<{ messageId: number; changed: boolean } | undefined>;
  /**
   * Deletes the user's entries of `uuid` (both boxes, for a mail to oneself); returns the mail's id
   * and how many of the entries were unread inbox entries, or undefined when the user held none.
   * On PostgreSQL it first locks the mail's row, whosever it is: two parties deleting at once run
   * one after the other, so the second sees that nobody holds the mail any more.
   */
  deleteEntries(
    trx: Executor,
    userId: number,
    uuid: string,
  ): Promise<{ messageId: number; unreadRemoved: number } | undefined>;
  /** Whether anybody still holds the mail in a box. */
  isHeld(trx: Executor, messageId: number): Promise<boolean>;
  /** Blanks the subject and body of a mail nobody holds any more (its row stays: replies hang on it). */
  blankMail(trx: Executor, messageId: number): Promise<void>;
  /** The user's unread inbox entries: one row by primary key. */
  unreadCount(userId: number): Promise<number>;
  /** Whether `userId` blocked `blockedUserId` (one primary key lookup). */
  isBlocked(trx: Executor, userId: number, blockedUserId: number): Promise<boolean>;
  /** Blocks; already blocked is no change. */
  block(userId: number, blockedUserId: number, blockedAt: string): Promise<void>;
  unblock(userId: number, blockedUserId: number): Promise<void>;
  /** One page of the users `userId` blocked, by their user id. */
  listBlocked(userId: number, request: PageRequest): Promise<Page<BlockedRow>>;
  /** One page of the user's mail (either box) that matches `query`, newest first. */
  searchMail(userId: number, query: SearchQuery, request: PageRequest): Promise<Page<MailDetailRow>>;
}

/** The columns of a box page, from `mailbox_entries e`, `messages m` and the replied-to `messages p`. */
const BOX_COLUMNS = [
  'e.messageId',
  'm.uuid',
  'm.fromUserName',
  'm.toUserName',
  'm.subject',
  'm.timestamp',
  'e.isRead',
  'p.uuid as replyToUuid',
] as const;

export interface BoxPageParams {
  readonly userId: number;
  /** Inclusive: an exclusive bound above the highest id would not fit PostgreSQL's `integer`. */
  readonly atMostId: number;
  readonly limit: number;
}

/**
 * The entries of imported mail (ENiGMA½'s, already in the board): the sender's in `sent` (by the
 * id the import kept, which is only ever an imported account's), the addressee's in `inbox` (by
 * name, as usernames are keyed); both read, since imported history is not news. A name that is
 * no account gets no entry. Migration 0014 does the same for boards imported before it.
 */
export function importedMailEntries(
  mails: readonly { readonly id: number; readonly fromUserId: number | null; readonly toUserName: string }[],
  recipientIdsByKey: ReadonlyMap<string, number>,
): MailEntry[] {
  return mails.flatMap((mail) => {
    const recipient = recipientIdsByKey.get(usernameKey(mail.toUserName));
    return [
      ...(mail.fromUserId === null
        ? []
        : [{ userId: mail.fromUserId, box: 'sent' as const, messageId: mail.id, isRead: 1 }]),
      ...(recipient === undefined ? [] : [{ userId: recipient, box: 'inbox' as const, messageId: mail.id, isRead: 1 }]),
    ];
  });
}

/** The entries of one box joined to their mails; `box` and the unread test are SQL literals so that PostgreSQL matches the partial index `mailbox_unread` in a prepared plan. */
function boxRows(db: Db, p: BoxPageParams, box: MailBox, unreadOnly: boolean) {
  return db
    .selectFrom('mailboxEntries as e')
    .innerJoin('messages as m', 'm.id', 'e.messageId')
    .leftJoin('messages as p', (join) =>
      join.onRef('p.id', '=', 'm.replyToMessageId').on('p.areaTag', '=', sql.lit(MAIL_AREA_TAG)),
    )
    .where('e.userId', '=', p.userId)
    .where('e.box', '=', sql.lit(box))
    .$if(unreadOnly, (query) => query.where('e.isRead', '=', sql.lit(0)))
    .where('e.messageId', '<=', p.atMostId);
}

/**
 * One page of a box, newest first: a backward range scan of the primary key (user_id, box,
 * message_id) — or of `mailbox_unread` for the unread inbox — from `atMostId`, each row joined to
 * its mail by primary key. Its cost is the page's, whether the box holds ten mails or 100,000
 * (test/db/mail-query-plans.test.ts checks the plans).
 */
export function boxPageQuery(db: Db, p: BoxPageParams, box: MailBox, unreadOnly: boolean) {
  return boxRows(db, p, box, unreadOnly).select(BOX_COLUMNS).orderBy('e.messageId', 'desc').limit(p.limit);
}

function isUnreadKey(box: MailBox, unreadOnly: boolean): `${MailBox} ${boolean}` {
  return `${box} ${unreadOnly}`;
}

/**
 * Mailboxes up to this many entries are searched from the mailbox (each mail tested against the
 * index by its id); bigger ones from the index. Reading the count stops here, so asking costs at
 * most this many index entries, and the mailbox walk at most this many id lookups.
 */
export const MAILBOX_DRIVEN_SEARCH_MAX = 5000;

type SearchedMailRow = MailDetailRow & Pick<MessagesTable, 'body'>;

/**
 * What a mail search answers of each hit to `userId`, from `messages m` (the mail) and `p` (what
 * it replies to): unread only when it waits unread in the caller's inbox.
 */
function mailHitColumns(userId: number) {
  return sql`m.id AS message_id, m.uuid, m.from_user_name, m.to_user_name, m.subject, m.timestamp, m.body,
    CASE WHEN EXISTS (SELECT 1 FROM mailbox_entries r WHERE r.user_id = ${userId} AND r.box = 'inbox'
                       AND r.message_id = m.id AND r.is_read = 0) THEN 0 ELSE 1 END AS is_read,
    p.uuid AS reply_to_uuid`;
}

/** A search of one caller's mail: the query, the page's upper bound (exclusive) and size. */
export interface MailSearch {
  readonly userId: number;
  readonly query: SearchQuery;
  readonly beforeId: number | null;
  readonly limit: number;
}

/**
 * A mailbox of a few thousand mails is the short list: each of its mails is tested against the
 * index by its id (documentMatch; FTS5 plans it as `=M`, a rowid lookup with the match), never a
 * walk of the board's matches, which for a word common on the board could be most of a million
 * messages. At most MAILBOX_DRIVEN_SEARCH_MAX lookups and a sort of what matched, whatever the
 * word. The joins are CROSS JOINs with their conditions in WHERE: SQLite then keeps the entries
 * outermost (its planner never moves a table across a CROSS JOIN); PostgreSQL plans them as inner
 * joins.
 */
export function mailboxDrivenSearch(dialect: Dialect, search: MailSearch): RawBuilder<SearchedMailRow> {
  const match = documentMatch(dialect, 'message_search', search.query);
  const before = search.beforeId === null ? sql`` : sql`AND e.message_id < ${search.beforeId}`;
  return sql<SearchedMailRow>`
    SELECT ${mailHitColumns(search.userId)}
      FROM (SELECT DISTINCT e.message_id FROM mailbox_entries e
             WHERE e.user_id = ${search.userId} AND e.box IN ('inbox', 'sent') ${before}) AS h
      CROSS JOIN messages m
      CROSS JOIN message_search s
      LEFT JOIN messages p ON p.id = m.reply_to_message_id AND p.area_tag = ${MAIL_AREA_TAG}
     WHERE m.id = h.message_id AND ${match.id} = h.message_id AND ${match.condition}
       AND m.area_tag = ${MAIL_AREA_TAG} AND m.deleted_at IS NULL
     ORDER BY h.message_id DESC
     LIMIT ${search.limit}`;
}

/**
 * A bigger mailbox: the index first (a rare word's few matches, see indexMatch), each match kept
 * only when the caller holds it — an EXISTS, a primary key lookup per match, never a join that
 * could repeat a mail to oneself. Ordered by the index's own key, as message search is: FTS5 then
 * hands out matches newest first and the walk stops at the page.
 */
export function indexDrivenSearch(match: IndexMatch, search: MailSearch): RawBuilder<SearchedMailRow> {
  const before = search.beforeId === null ? sql`` : sql`AND ${match.id} < ${search.beforeId}`;
  return sql<SearchedMailRow>`
    SELECT ${mailHitColumns(search.userId)}
      FROM message_search s
      JOIN messages m ON m.id = ${match.id}
      LEFT JOIN messages p ON p.id = m.reply_to_message_id AND p.area_tag = ${MAIL_AREA_TAG}
     WHERE ${match.condition} AND m.area_tag = ${MAIL_AREA_TAG} AND m.deleted_at IS NULL ${before}
       AND EXISTS (SELECT 1 FROM mailbox_entries e WHERE e.user_id = ${search.userId}
                    AND e.box IN ('inbox', 'sent') AND e.message_id = m.id)
     ORDER BY ${match.id} DESC
     LIMIT ${search.limit}`;
}

/** Every query of private mail: the mailbox entries, the unread counts and the block lists. */
export function createMailStore(db: Db, dialect: Dialect): MailStore {
  const boxPages = new Map(
    (['inbox', 'sent'] as const).flatMap((box) =>
      [false, true].map((unreadOnly) => [
        isUnreadKey(box, unreadOnly),
        prepareQuery(db, (p: BoxPageParams) => boxPageQuery(db, p, box, unreadOnly)),
      ]),
    ),
  );
  // The entry's user and the uuid decide together, in one statement: the uuid's unique index, then
  // the entries of that message (`mailbox_entries_message`), the caller's kept.
  const mailOf = prepareQuery(db, (p: { userId: number; uuid: string }) =>
    db
      .selectFrom('messages as m')
      .innerJoin('mailboxEntries as e', (join) => join.onRef('e.messageId', '=', 'm.id').on('e.userId', '=', p.userId))
      .leftJoin('messages as p', (join) =>
        join.onRef('p.id', '=', 'm.replyToMessageId').on('p.areaTag', '=', sql.lit(MAIL_AREA_TAG)),
      )
      .select([...BOX_COLUMNS, 'm.body'])
      .where('m.uuid', '=', p.uuid)
      .where('m.areaTag', '=', sql.lit(MAIL_AREA_TAG))
      .where('m.deletedAt', 'is', null)
      .orderBy('e.box')
      .limit(1),
  );
  const unreadOf = prepareQuery(db, (p: { userId: number }) =>
    db.selectFrom('mailCounts').select('unreadCount').where('userId', '=', p.userId),
  );

  /**
   * The id of the mail `uuid`, as a subquery: whether the uuid is unknown or another person's
   * mail, the statement that uses it is the same one, and finds no entry of the caller's.
   */
  const mailIdOf = (uuid: string) => (eb: ExpressionBuilder<Tables, 'mailboxEntries'>) =>
    eb
      .selectFrom('messages')
      .select('messages.id')
      .where('messages.uuid', '=', uuid)
      .where('messages.areaTag', '=', MAIL_AREA_TAG)
      .where('messages.deletedAt', 'is', null);

  return {
    transaction: (work) => db.transaction().execute(work),

    async listBox(userId, request) {
      const query = boxPages.get(isUnreadKey(request.box, request.unreadOnly));
      if (!query) throw new Error(`no box query for ${request.box}`);
      const atMostId = request.afterKey === null ? MAX_MESSAGE_ID : request.afterKey - 1;
      const rows = await query.all({ userId, atMostId, limit: rowsToFetch(request) });
      return pageFromRows(
        rows,
        request,
        (row) => row.messageId,
        (row) => row,
      );
    },

    findMail: (userId, uuid) => mailOf.first({ userId, uuid }),

    async heldMailPlace(trx, userId, uuid) {
      return trx
        .selectFrom('messages as m')
        .innerJoin('mailboxEntries as e', (join) => join.onRef('e.messageId', '=', 'm.id').on('e.userId', '=', userId))
        .select(['m.id as messageId', 'm.threadRootId', 'm.threadPath'])
        .where('m.uuid', '=', uuid)
        .where('m.areaTag', '=', MAIL_AREA_TAG)
        .where('m.deletedAt', 'is', null)
        .limit(1)
        .executeTakeFirst();
    },

    async addEntries(trx, entries) {
      if (entries.length === 0) return;
      await trx
        .insertInto('mailboxEntries')
        .values([...entries])
        .execute();
    },

    async addToUnreadCount(trx, userId, delta) {
      await trx
        .insertInto('mailCounts')
        .values({ userId, unreadCount: Math.max(0, delta) })
        .onConflict((conflict) =>
          conflict.column('userId').doUpdateSet((eb) => ({ unreadCount: eb('mailCounts.unreadCount', '+', delta) })),
        )
        .execute();
    },

    // Two statements whatever the uuid is: the update, and the look that tells "already so" from "not yours".
    async setRead(trx, userId, uuid, isRead) {
      const flag = isRead ? 1 : 0;
      const changed = await trx
        .updateTable('mailboxEntries')
        .set({ isRead: flag })
        .where('userId', '=', userId)
        .where('box', '=', 'inbox')
        .where('messageId', '=', mailIdOf(uuid))
        .where('isRead', '<>', flag)
        .returning('messageId')
        .executeTakeFirst();
      if (changed) return { messageId: changed.messageId, changed: true };
      const held = await trx
        .selectFrom('mailboxEntries')
        .select('messageId')
        .where('userId', '=', userId)
        .where('box', '=', 'inbox')
        .where('messageId', '=', mailIdOf(uuid))
        .executeTakeFirst();
      return held ? { messageId: held.messageId, changed: false } : undefined;
    },

    // The same statements whatever the uuid is: the lock (PostgreSQL), and the delete. SQLite
    // needs no lock (one writer at a time) and must not read first: a transaction that reads
    // before it writes cannot wait for another node's write lock, it fails at once.
    async deleteEntries(trx, userId, uuid) {
      if (dialect === 'postgres') {
        await trx
          .selectFrom('messages')
          .select('id')
          .where('uuid', '=', uuid)
          .where('areaTag', '=', MAIL_AREA_TAG)
          .where('deletedAt', 'is', null)
          // NO KEY UPDATE: a reply being sent to this mail (its foreign key takes KEY SHARE on the
          // row, after the recipient's unread count) must not wait for this lock, which waits for that count.
          .forNoKeyUpdate()
          .executeTakeFirst();
      }
      const deleted = await trx
        .deleteFrom('mailboxEntries')
        .where('userId', '=', userId)
        .where('box', 'in', ['inbox', 'sent'])
        .where('messageId', '=', mailIdOf(uuid))
        .returning(['messageId', 'box', 'isRead'])
        .execute();
      const [first] = deleted;
      if (first === undefined) return undefined;
      const unreadRemoved = deleted.filter((entry) => entry.box === 'inbox' && entry.isRead === 0).length;
      return { messageId: first.messageId, unreadRemoved };
    },

    async isHeld(trx, messageId) {
      const row = await trx
        .selectFrom('mailboxEntries')
        .select('userId')
        .where('messageId', '=', messageId)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async blankMail(trx, messageId) {
      await trx
        .updateTable('messages')
        .set({ subject: '', body: '' })
        .where('id', '=', messageId)
        .where('areaTag', '=', MAIL_AREA_TAG)
        .execute();
    },

    async unreadCount(userId) {
      return Number((await unreadOf.first({ userId }))?.unreadCount ?? 0);
    },

    async isBlocked(trx, userId, blockedUserId) {
      const row = await trx
        .selectFrom('mailBlocks')
        .select('userId')
        .where('userId', '=', userId)
        .where('blockedUserId', '=', blockedUserId)
        .executeTakeFirst();
      return row !== undefined;
    },

    async block(userId, blockedUserId, blockedAt) {
      await db
        .insertInto('mailBlocks')
        .values({ userId, blockedUserId, blockedAt })
        .onConflict((conflict) => conflict.columns(['userId', 'blockedUserId']).doNothing())
        .execute();
    },

    async unblock(userId, blockedUserId) {
      await db
        .deleteFrom('mailBlocks')
        .where('userId', '=', userId)
        .where('blockedUserId', '=', blockedUserId)
        .execute();
    },

    async listBlocked(userId, request) {
      const rows = await db
        .selectFrom('mailBlocks')
        .select(['blockedUserId', 'blockedAt'])
        .where('userId', '=', userId)
        .where('blockedUserId', '>', request.afterKey ?? 0)
        .orderBy('blockedUserId')
        .limit(rowsToFetch(request))
        .execute();
      return pageFromRows(
        rows,
        request,
        (row) => row.blockedUserId,
        (row) => row,
      );
    },

    async searchMail(userId, query, request) {
      const { rows: counted } = await sql<{ held: number }>`
        SELECT count(*) AS held FROM (SELECT 1 FROM mailbox_entries WHERE user_id = ${userId}
                                       LIMIT ${MAILBOX_DRIVEN_SEARCH_MAX + 1}) AS capped`.execute(db);
      const search = { userId, query, beforeId: request.afterKey, limit: rowsToFetch(request) };
      let found: RawBuilder<SearchedMailRow>;
      if (Number(counted[0]?.held ?? 0) <= MAILBOX_DRIVEN_SEARCH_MAX) found = mailboxDrivenSearch(dialect, search);
      else {
        const match = await indexMatch(db, dialect, 'message_search', query);
        if (match === null) return { items: [], nextKey: null };
        found = indexDrivenSearch(match, search);
      }
      const { rows } = await found.execute(db);
      return pageFromRows(
        rows.map((row) => ({ ...row, messageId: Number(row.messageId), isRead: Number(row.isRead) })),
        request,
        (row) => row.messageId,
        (row) => row,
      );
    },
  };
}
