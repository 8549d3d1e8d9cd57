import type { LoginAttemptStore } from '../auth/login-attempt-store.js';
import type { Caller, UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import type { UserRow } from '../db/schema.js';
import { BadRequestError, ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import { checkBody, checkSubject, checkUserName } from '../messages/message-rules.js';
import type { MessageStore } from '../messages/message-store.js';
import { threadPlaceOf } from '../messages/message-thread.js';
import { messageUuid } from '../messages/message-uuid.js';
import { mapPage, type Page, type PageRequest } from '../page.js';
import type { SearchBudget } from '../search/search-budget.js';
import { parseQueryParameter } from '../search/search-query.js';
import { searchSnippet } from '../search/snippet.js';
import { presentText, stripAnsi } from '../text/strip-ansi.js';
import type { UserStore } from '../users/user-store.js';
import { MAIL_AREA_TAG, type MailBox, type MailRow, type MailStore } from './mail-store.js';

/** A mail as boxes list it (docs/api-notes.md "Private mail"). */
export interface MailSummary {
  readonly uuid: string;
  readonly messageId: number;
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly timestamp: string;
  /** The recipient's flag; true for the sender's own copy. */
  readonly read: boolean;
  readonly replyToUuid: string | null;
}

export interface MailDetail extends MailSummary {
  readonly body: string;
}

/** A mail a search found: its summary and ≤ 200 characters of its text around the first hit. */
export interface FoundMail extends MailSummary {
  readonly snippet: string;
}

export interface NewMail {
  readonly to: string;
  readonly subject: string;
  readonly body: string;
  readonly replyToUuid?: string | undefined;
}

/** A netmail recipient read from `to` (`Name@zone:net/node[.point][@network]`). */
export interface NetmailRecipient {
  /** The FTN network that carries it. */
  readonly network: string;
  readonly name: string;
  /** `zone:net/node[.point]` */
  readonly address: string;
  /** `Name@zone:net/node[.point]`: the mail's `to`. */
  readonly display: string;
}

/**
 * Where mail to someone on another system goes (src/ftn/ftn-netmail.ts). The mail service stores
 * it like any mail, in the sender's sent box, and hands it over in the same transaction.
 */
export interface NetmailGateway {
  /** The netmail recipient `to` names, or null when it is a username; an address that does not read → 400. */
  recipientOf(to: string): NetmailRecipient | null;
  /** Queues the stored mail for its network, in the send's transaction. */
  queue(trx: Executor, messageId: number, recipient: NetmailRecipient): Promise<void>;
  /** After the commit: it can go out now. */
  queued(recipient: NetmailRecipient): void;
}

export interface BlockedUser {
  readonly username: string;
  readonly blockedAt: string;
}

/** How often a node clears the senders' windows that are over. */
const PRUNE_INTERVAL_MS = 60_000;

/** The prefix of a sender's window among the throttle windows of `login_attempts`. */
const MAIL_SUBJECT = 'mail:';

/** The cursor list id of a box: a cursor of the inbox is refused by the sent box, and by the unread list. */
export function mailBoxListId(box: MailBox, unreadOnly: boolean): string {
  return `mail:${box}:${unreadOnly ? 'unread' : 'all'}`;
}

/** The cursor list id of a mail search: a cursor of one search is refused by any other. */
export function mailSearchListId(q: string): string {
  return `mail-search:${JSON.stringify(q)}`;
}

/**
 * Private mail between two users. Everything here is the caller's own: every read joins the
 * caller's mailbox entries, so a mail the caller does not hold answers exactly as an unknown
 * uuid does — one statement either way, the same 404 — and nobody else, sysops included, can
 * read it through any service. `shouldStrip` is `?stripAnsi`, as for messages.
 */
export interface MailService {
  /**
   * Sends a mail (201). In one transaction: the recipient's unread count (its row lock queues
   * senders to one recipient, so ids go in commit order per inbox), the block list (403), the
   * reply target (a mail the sender holds), the sender's window slot (429), the message row and
   * its search entry, both entries, the `mail.received` event — all of it, or nothing.
   *
   * `to: "Name@21:1/100"` is netmail (when the board is in an FTN network): the same rules for
   * subject, body, reply target and window; the mail in the sender's sent box and queued for its
   * network, where the scanner packs it for the hub. An address that does not read, or that no
   * network of the board reaches, → 400 `mail.invalid-netmail-address`.
   */
  sendMail(caller: Caller, mail: NewMail, shouldStrip?: boolean): Promise<MailDetail>;
  listBox(
    caller: Caller,
    box: MailBox,
    unreadOnly: boolean,
    request: PageRequest,
    shouldStrip?: boolean,
  ): Promise<Page<MailSummary>>;
  getMail(caller: Caller, uuid: string, shouldStrip?: boolean): Promise<MailDetail>;
  /** The recipient's read flag; a sender's own copy or another's mail → 404 like an unknown uuid. */
  setRead(caller: Caller, uuid: string, isRead: boolean, shouldStrip?: boolean): Promise<MailDetail>;
  /**
   * Removes the mail from the caller's boxes only: the other party keeps theirs. Once nobody
   * holds it, it is marked deleted, its subject and body blanked and its words taken out of the
   * search index, in the same transaction.
   */
  deleteMail(caller: Caller, uuid: string): Promise<void>;
  searchMail(caller: Caller, q: string, request: PageRequest, shouldStrip?: boolean): Promise<Page<FoundMail>>;
  unreadCount(caller: Caller): Promise<number>;
  blockUser(caller: Caller, username: string): Promise<void>;
  unblockUser(caller: Caller, username: string): Promise<void>;
  listBlocked(caller: Caller, request: PageRequest): Promise<Page<BlockedUser>>;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function presentSummary(row: MailRow, shouldStrip: boolean): MailSummary {
  return {
    uuid: row.uuid,
    messageId: row.messageId,
    from: row.fromUserName,
    to: row.toUserName,
    subject: presentText(row.subject, shouldStrip),
    timestamp: row.timestamp,
    read: Number(row.isRead) === 1,
    replyToUuid: row.replyToUuid,
  };
}

function userOf(caller: Caller): UserCaller {
  if (caller.kind !== 'user') throw new UnauthorizedError('auth.required', 'Log in to use private mail.');
  return caller;
}

/** Someone who can receive mail: an account that exists, was approved and is not locked. */
const canReceiveMail = (user: UserRow | undefined): user is UserRow =>
  user !== undefined && user.isPending === 0 && user.disabledAt === null;

export function createMailService(deps: {
  store: MailStore;
  /** The mail's message row goes in through the message base's writes (ids, thread place, search index). */
  messages: MessageStore;
  users: UserStore;
  /** Sent mails are counted per sender in the throttle windows (`mail:<userId>`). */
  windows: LoginAttemptStore;
  events: EventLog;
  clock: Clock;
  searchBudget: SearchBudget;
  /** New mails one sender may send per window (`mail` in the configuration; spec: 30 per 10 minutes). */
  limits: Config['mail'];
  /** Netmail, when the board is in an FTN network; without it every `to` is a username. */
  netmail?: NetmailGateway;
}): MailService {
  const { store, messages, users, windows, events, clock, searchBudget } = deps;
  const { maxSendsPerWindow, sendWindowSeconds } = deps.limits;
  const windowMs = sendWindowSeconds * 1000;

  const notFound = (uuid: string) => new NotFoundError('mail.not-found', `No mail ${uuid}.`);

  let lastPrunedAtMs = Number.NEGATIVE_INFINITY;
  /**
   * Clears the senders' windows that are over, which nothing else would: at most once a minute
   * per node, off the rest of the sends (a window over but not yet cleared counts nothing: the
   * next send in it starts a new one).
   */
  async function pruneWindowsNowAndThen(now: Date, windowOverAt: string): Promise<void> {
    if (now.getTime() - lastPrunedAtMs < PRUNE_INTERVAL_MS) return;
    lastPrunedAtMs = now.getTime();
    await windows.deleteWindowsOver(windowOverAt, MAIL_SUBJECT);
  }

  /** The uuid as stored (lower case); a malformed one is a 400 before any query. */
  function uuidKey(uuid: string): string {
    const key = uuid.toLowerCase();
    if (!UUID_PATTERN.test(key)) {
      throw new BadRequestError('request.invalid-path', 'uuid must be a UUID', [
        { pointer: '/path/uuid', message: 'must be a UUID' },
      ]);
    }
    return key;
  }

  async function heldMail(userId: number, uuid: string, shouldStrip: boolean): Promise<MailDetail> {
    const row = await store.findMail(userId, uuidKey(uuid));
    if (!row) throw notFound(uuid);
    return { ...presentSummary(row, shouldStrip), body: presentText(row.body, shouldStrip) };
  }

  /** An account others can name (blocks): pending applications are unknown to members. */
  async function memberNamed(username: string): Promise<UserRow> {
    const user = await users.findByName(username);
    if (user?.isPending !== 0) throw new NotFoundError('user.not-found', `No user "${username}".`);
    return user;
  }

  /** The sender's window of sent mails (429 when full), read before the send and taken in its transaction. */
  function senderWindow(senderId: number, now: Date) {
    const overAt = new Date(now.getTime() - windowMs).toISOString();
    const subject = `${MAIL_SUBJECT}${senderId}`;
    const tooMany = (windowStartedAt: string) =>
      new TooManyRequestsError(
        'mail.too-many',
        `At most ${maxSendsPerWindow} mails every ${sendWindowSeconds} seconds; try again later.`,
        (Date.parse(windowStartedAt) + windowMs - now.getTime()) / 1000,
      );
    return {
      overAt,
      /** A plain read first: a sender over the limit costs one lookup, not a refused transaction. */
      async checkBefore() {
        const fullSince = await windows.fullWindowStartOf({
          subject,
          windowOverAt: overAt,
          maxAttempts: maxSendsPerWindow,
        });
        if (fullSince !== undefined) throw tooMany(fullSince);
      },
      async takeSlot(trx: Executor) {
        const slot = await windows.takeSlot(trx, {
          subject,
          now: now.toISOString(),
          windowOverAt: overAt,
          maxAttempts: maxSendsPerWindow,
        });
        // Filled by this sender's other mails (on any node) since the read before.
        if (slot === undefined) throw tooMany(await windows.windowStartOf(trx, subject));
      },
    };
  }

  /** The mail a reply answers: one the sender holds (either box); 400 otherwise. */
  async function replyParent(trx: Executor, senderId: number, replyToUuid: string | null) {
    if (replyToUuid === null) return undefined;
    const parent = await store.heldMailPlace(trx, senderId, replyToUuid);
    if (parent === undefined) {
      throw new BadRequestError('mail.invalid-reply-target', `replyToUuid ${replyToUuid} is not a mail of yours.`, [
        { pointer: '/body/replyToUuid', message: 'is not a mail of yours' },
      ]);
    }
    return parent;
  }

  /**
   * Netmail (see `sendMail`): the mail row and the sender's sent entry, the window's slot, and the
   * mail queued for its network, in one transaction; no inbox here, so no event.
   */
  async function sendNetmail(
    sender: UserCaller['user'],
    recipient: NetmailRecipient,
    mail: NewMail,
    shouldStrip: boolean,
  ): Promise<MailDetail> {
    const gateway = deps.netmail;
    if (!gateway) throw new Error('netmail without a gateway');
    const subject = checkSubject(mail.subject, '/body/subject');
    const body = checkBody(mail.body, '/body/body');
    const replyToUuid = mail.replyToUuid === undefined ? null : mail.replyToUuid.toLowerCase();
    const now = clock.now();
    const timestamp = now.toISOString();
    const window = senderWindow(sender.id, now);
    await window.checkBefore();
    const uuid = messageUuid(now.getTime());
    const messageId = await messages.transaction(async (queries, trx) => {
      // The slot first: a write, so SQLite's write lock is held before anything is read.
      await window.takeSlot(trx);
      const parent = await replyParent(trx, sender.id, replyToUuid);
      const [id] = await queries.reserveMessageIds(1);
      if (id === undefined) throw new Error('no message id was reserved');
      await queries.insertMessages([
        {
          id,
          ...threadPlaceOf(id, parent ?? null),
          uuid,
          areaTag: MAIL_AREA_TAG,
          replyToMessageId: parent?.messageId ?? null,
          fromUserId: sender.id,
          fromUserName: sender.username,
          toUserName: recipient.display,
          subject,
          body,
          timestamp,
          network: '{}',
        },
      ]);
      await store.addEntries(trx, [{ userId: sender.id, box: 'sent', messageId: id, isRead: 1 }]);
      await gateway.queue(trx, id, recipient);
      return id;
    });
    gateway.queued(recipient);
    await pruneWindowsNowAndThen(now, window.overAt);
    const row: MailRow = {
      messageId,
      uuid,
      fromUserName: sender.username,
      toUserName: recipient.display,
      subject,
      timestamp,
      isRead: 1,
      replyToUuid,
    };
    return { ...presentSummary(row, shouldStrip), body: presentText(body, shouldStrip) };
  }

  return {
    async sendMail(caller, mail, shouldStrip = true) {
      const { user: sender } = userOf(caller);
      const netmailTo = deps.netmail?.recipientOf(mail.to) ?? null;
      if (netmailTo !== null) return sendNetmail(sender, netmailTo, mail, shouldStrip);
      const to = checkUserName(mail.to, '/body/to');
      const subject = checkSubject(mail.subject, '/body/subject');
      const body = checkBody(mail.body, '/body/body');
      const replyToUuid = mail.replyToUuid === undefined ? null : mail.replyToUuid.toLowerCase();
      // Unknown, pending and locked names are one answer from one lookup: which of them a name
      // is stays the sysop's business.
      const recipient = await users.findByName(to);
      if (!canReceiveMail(recipient))
        throw new NotFoundError('mail.recipient-not-found', `No user can receive mail as "${to}".`);
      const now = clock.now();
      const timestamp = now.toISOString();
      const window = senderWindow(sender.id, now);
      await window.checkBefore();
      const uuid = messageUuid(now.getTime());
      const sent = await messages.transaction(async (queries, trx) => {
        // First: it takes SQLite's write lock before the id is read, and on PostgreSQL it queues
        // the senders to one recipient, so that recipient's new mails get their ids in commit order.
        await store.addToUnreadCount(trx, recipient.id, 1);
        if (await store.isBlocked(trx, recipient.id, sender.id)) {
          throw new ForbiddenError('mail.sender-blocked', `${recipient.username} does not take mail from you.`);
        }
        const parent = await replyParent(trx, sender.id, replyToUuid);
        await window.takeSlot(trx);
        const [messageId] = await queries.reserveMessageIds(1);
        if (messageId === undefined) throw new Error('no message id was reserved');
        await queries.insertMessages([
          {
            id: messageId,
            ...threadPlaceOf(messageId, parent ?? null),
            uuid,
            areaTag: MAIL_AREA_TAG,
            replyToMessageId: parent?.messageId ?? null,
            fromUserId: sender.id,
            fromUserName: sender.username,
            toUserName: recipient.username,
            subject,
            body,
            timestamp,
            network: '{}',
          },
        ]);
        await store.addEntries(trx, [
          { userId: sender.id, box: 'sent', messageId, isRead: 1 },
          { userId: recipient.id, box: 'inbox', messageId, isRead: 0 },
        ]);
        const row: MailRow = {
          messageId,
          uuid,
          fromUserName: sender.username,
          toUserName: recipient.username,
          subject,
          timestamp,
          isRead: 0,
          replyToUuid,
        };
        // The summary, as the recipient's inbox lists it: the body stays out of the event log.
        await events.append(trx, {
          type: 'mail.received',
          areaTag: null,
          userId: recipient.id,
          data: { ...presentSummary(row, false) },
        });
        return row;
      });
      await pruneWindowsNowAndThen(now, window.overAt);
      // The sender's copy: read, as the sent box shows it (a mail to oneself is unread in the inbox).
      return { ...presentSummary({ ...sent, isRead: 1 }, shouldStrip), body: presentText(body, shouldStrip) };
    },

    async listBox(caller, box, unreadOnly, request, shouldStrip = true) {
      const { user } = userOf(caller);
      // Your own sent copies are read: no unread mail there, and no scan of the box to find none.
      if (unreadOnly && box === 'sent') return { items: [], nextKey: null };
      const page = await store.listBox(user.id, { ...request, box, unreadOnly });
      return mapPage(page, (row) => presentSummary(row, shouldStrip));
    },

    getMail: (caller, uuid, shouldStrip = true) => heldMail(userOf(caller).user.id, uuid, shouldStrip),

    async setRead(caller, uuid, isRead, shouldStrip = true) {
      const { user } = userOf(caller);
      const key = uuidKey(uuid);
      await store.transaction(async (trx) => {
        const flagged = await store.setRead(trx, user.id, key, isRead);
        if (!flagged) throw notFound(uuid);
        if (flagged.changed) await store.addToUnreadCount(trx, user.id, isRead ? -1 : 1);
      });
      return heldMail(user.id, key, shouldStrip);
    },

    async deleteMail(caller, uuid) {
      const { user } = userOf(caller);
      const key = uuidKey(uuid);
      await messages.transaction(async (queries, trx) => {
        const deleted = await store.deleteEntries(trx, user.id, key);
        if (!deleted) throw notFound(uuid);
        if (deleted.unreadRemoved > 0) await store.addToUnreadCount(trx, user.id, -deleted.unreadRemoved);
        // Nobody can read it any more: its text goes, from the row and from the search index.
        if (!(await store.isHeld(trx, deleted.messageId))) {
          await queries.markDeleted(deleted.messageId, clock.now().toISOString());
          await queries.removeFromLiveCounts(MAIL_AREA_TAG, deleted.messageId);
          await store.blankMail(trx, deleted.messageId);
        }
      });
    },

    async searchMail(caller, q, request, shouldStrip = true) {
      const { user } = userOf(caller);
      const query = parseQueryParameter(q);
      const page = await searchBudget.run(() => store.searchMail(user.id, query, request));
      return mapPage(page, ({ body, ...row }) => ({
        ...presentSummary(row, shouldStrip),
        snippet: searchSnippet(stripAnsi(body), query),
      }));
    },

    async unreadCount(caller) {
      return store.unreadCount(userOf(caller).user.id);
    },

    async blockUser(caller, username) {
      const { user } = userOf(caller);
      const blocked = await memberNamed(username);
      if (blocked.id === user.id) throw new BadRequestError('mail.cannot-block-self', 'You cannot block yourself.');
      await store.block(user.id, blocked.id, clock.now().toISOString());
    },

    async unblockUser(caller, username) {
      const { user } = userOf(caller);
      await store.unblock(user.id, (await memberNamed(username)).id);
    },

    async listBlocked(caller, request) {
      const { user } = userOf(caller);
      const page = await store.listBlocked(user.id, request);
      const cards = await users.cardsOf(page.items.map((row) => row.blockedUserId));
      // A blocked account deleted since takes its block rows with it (cascade): every id has a card.
      return mapPage(page, (row) => ({
        username: cards.get(row.blockedUserId)?.username ?? '',
        blockedAt: row.blockedAt,
      }));
    },
  };
}
