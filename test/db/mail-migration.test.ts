import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { openDatabaseAt } from '../support/database-at-migration.js';
import { describeEachDialect } from '../support/test-board.js';

const NOW = '2026-01-01T00:00:00.000Z';

/**
 * A board that imported ENiGMA½'s private mail before 0014 gets mailbox entries for it: the
 * sender's (by id) in `sent`, the addressee's (by name, in any case) in `inbox`, both read;
 * names that are no account, deleted mail and public messages get none.
 */
describeEachDialect('0014-mail on a board that imported private mail', (dialect) => {
  it('files each kept mail in its sender’s and its addressee’s boxes', async () => {
    const { database, upgrade, close } = await openDatabaseAt(dialect, '0011-accounts');
    try {
      for (const [id, username] of [
        [1, 'Alice'],
        [2, 'bob'],
        [3, 'Ærin'],
      ] as const) {
        await database.db
          .insertInto('users')
          .values({
            id,
            username,
            usernameKey: username.toLowerCase(),
            passwordHash: 'x',
            createdAt: NOW,
            credentialsChangedAt: NOW,
          })
          .execute();
      }
      const mails = [
        { id: 10, area: 'private_mail', from: 1, to: 'BOB', deleted: false },
        { id: 11, area: 'private_mail', from: 2, to: 'alice', deleted: false },
        { id: 12, area: 'private_mail', from: null, to: 'ærin', deleted: false },
        { id: 13, area: 'private_mail', from: 3, to: 'Somebody Gone', deleted: false },
        { id: 14, area: 'private_mail', from: 1, to: 'bob', deleted: true },
        { id: 15, area: 'general', from: 1, to: 'bob', deleted: false },
      ];
      for (const mail of mails) {
        await sql`INSERT INTO messages (id, uuid, area_tag, from_user_id, from_user_name, to_user_name, subject, body,
                    timestamp, network, thread_root_id, thread_path, deleted_at)
                  VALUES (${mail.id}, ${`00000000-0000-4000-8000-${String(mail.id).padStart(12, '0')}`}, ${mail.area},
                    ${mail.from}, 'x', ${mail.to}, 's', 'b', ${NOW}, '{}', ${mail.id}, ${String(mail.id)},
                    ${mail.deleted ? NOW : null})`.execute(database.db);
      }
      await upgrade();
      const entries = await database.db
        .selectFrom('mailboxEntries')
        .select(['userId', 'box', 'messageId', 'isRead'])
        .orderBy('messageId')
        .orderBy('box')
        .execute();
      expect(entries.map((entry) => [entry.messageId, entry.box, entry.userId, Number(entry.isRead)])).toEqual([
        [10, 'inbox', 2, 1],
        [10, 'sent', 1, 1],
        [11, 'inbox', 1, 1],
        [11, 'sent', 2, 1],
        [12, 'inbox', 3, 1],
        [13, 'sent', 3, 1],
      ]);
      expect(await database.db.selectFrom('mailCounts').selectAll().execute()).toEqual([]);
    } finally {
      await close();
    }
  });
});
