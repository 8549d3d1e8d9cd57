import type { Executor } from '../db/database.js';
import type { UserRow } from '../db/schema.js';
import type { EventLog } from '../events/event-log.js';
import type { UserStore } from '../users/user-store.js';
import type { MailStore } from './mail-store.js';

/** Someone who can receive mail here. */
export interface MailRecipient {
  readonly userId: number;
  readonly username: string;
}

/** A mail from outside the board, its `messages` row stored in the same transaction. */
export interface DeliveredMail {
  readonly recipient: MailRecipient;
  readonly messageId: number;
  readonly uuid: string;
  /** The sender as the inbox shows them (`Name@21:1/100` for netmail). */
  readonly from: string;
  readonly subject: string;
  readonly timestamp: string;
  readonly replyToUuid: string | null;
}

/**
 * Mail that arrives from outside the board — FTN netmail, tossed by src/ftn/ftn-tosser.ts —
 * put into inboxes inside the caller's transaction, by the same rules as `sendMail`: the
 * recipient's unread count locked before the mail's id is taken (ids in commit order per inbox),
 * an unread inbox entry, and the `mail.received` event to the recipient alone. There is no
 * sender here: no sent box, no block list (blocks name accounts), no sender's window.
 */
export interface MailDelivery {
  /**
   * The account that receives mail addressed to `name`: the username (any case) of an approved,
   * unlocked account; `Sysop` reaches `general.sysopName`'s account when no account is named so.
   */
  recipientNamed(name: string): Promise<MailRecipient | null>;
  /** Adds each recipient's new mails to their unread count, locking the rows; call before taking the ids. */
  reserveInboxes(trx: Executor, mailsPerRecipient: ReadonlyMap<number, number>): Promise<void>;
  /** The inbox entries and `mail.received` events of stored mails; call last in the transaction (events). */
  deliver(trx: Executor, mails: readonly DeliveredMail[]): Promise<void>;
}

const canReceiveMail = (user: UserRow | undefined): user is UserRow =>
  user !== undefined && user.isPending === 0 && user.disabledAt === null;

export function createMailDelivery(deps: {
  store: MailStore;
  users: UserStore;
  events: EventLog;
  /** `general.sysopName`: whose inbox mail to "Sysop" reaches. */
  sysopName: string | undefined;
}): MailDelivery {
  const { store, users, events, sysopName } = deps;
  return {
    async recipientNamed(name) {
      let user = await users.findByName(name);
      if (!canReceiveMail(user) && name.trim().toLowerCase() === 'sysop' && sysopName) {
        user = await users.findByName(sysopName);
      }
      return canReceiveMail(user) ? { userId: user.id, username: user.username } : null;
    },

    async reserveInboxes(trx, mailsPerRecipient) {
      // In user id order: two transactions delivering to the same people lock them in the same order.
      for (const userId of [...mailsPerRecipient.keys()].sort((a, b) => a - b)) {
        await store.addToUnreadCount(trx, userId, mailsPerRecipient.get(userId) ?? 0);
      }
    },

    async deliver(trx, mails) {
      await store.addEntries(
        trx,
        mails.map((mail) => ({
          userId: mail.recipient.userId,
          box: 'inbox' as const,
          messageId: mail.messageId,
          isRead: 0,
        })),
      );
      for (const mail of mails) {
        await events.append(trx, {
          type: 'mail.received',
          areaTag: null,
          userId: mail.recipient.userId,
          data: {
            uuid: mail.uuid,
            messageId: mail.messageId,
            from: mail.from,
            to: mail.recipient.username,
            subject: mail.subject,
            timestamp: mail.timestamp,
            read: false,
            replyToUuid: mail.replyToUuid,
          },
        });
      }
    },
  };
}
