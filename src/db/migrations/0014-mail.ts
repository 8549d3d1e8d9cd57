import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Private mail. A mail is a `messages` row in the area `private_mail` (so ENiGMA½'s imported
 * mail is served as it was kept: its uuid, reply links, text rules and search entries); who
 * holds it is `mailbox_entries`, one row per person and box:
 *
 * - `mailbox_entries` (user_id, box, message_id, is_read): the primary key is a box's keyset,
 *   newest first, so a box's page is a range scan of one key prefix at any mailbox size;
 *   `mailbox_unread` (a partial index of the unread inbox entries) makes `?unread=true` one too,
 *   however many read mails lie between two unread ones. Deleting a mail deletes the caller's
 *   row only: the other party keeps theirs.
 * - `mail_counts` (user_id, unread_count): the unread inbox entries, kept in the transactions
 *   that change them, so `/users/me` reads one row instead of counting a mailbox.
 * - `mail_blocks` (user_id, blocked_user_id): whose new mail a user refuses.
 *
 * Boards that imported ENiGMA½ already get entries for the mail they hold: the sender's (by
 * `from_user_id`) in `sent`, the addressee's (by name, as usernames are keyed) in `inbox`, both
 * read (imported history is not news). Mail to or from a name that is no account gets no entry
 * for it.
 */
export const mailMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('mailbox_entries')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('box', 'text', (c) => c.notNull())
      .addColumn('message_id', 'integer', (c) => c.notNull().references('messages.id').onDelete('cascade'))
      .addColumn('is_read', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('mailbox_entries_pk', ['user_id', 'box', 'message_id'])
      .execute();
    await db.schema
      .createIndex('mailbox_unread')
      .on('mailbox_entries')
      .columns(['user_id', 'message_id'])
      .where(sql.ref('box'), '=', sql.lit('inbox'))
      .where(sql.ref('is_read'), '=', sql.lit(0))
      .execute();
    // Whose entries hang on a message: a mail nobody holds any more is found by it.
    await db.schema.createIndex('mailbox_entries_message').on('mailbox_entries').columns(['message_id']).execute();
    await db.schema
      .createTable('mail_counts')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('unread_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('mail_blocks')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('blocked_user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('blocked_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('mail_blocks_pk', ['user_id', 'blocked_user_id'])
      .execute();
    await fileImportedMail(db);
  },
};

/** Rows per statement while filling entries: 3 parameters a row, far below either dialect's limit. */
const ENTRIES_PER_INSERT = 500;
/** Imported mails read at once. */
const MAILS_PER_BATCH = 2000;

/**
 * Entries for the private mail a board holds already. Names are matched as usernames are
 * keyed (NFC, lower case) in JavaScript, not with SQL's `lower()`, which differs between the
 * dialects outside ASCII.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
async function fileImportedMail(db: Kysely<any>): Promise<void> {
  const { rows: users } = await sql<{ id: number; username: string }>`SELECT id, username FROM users`.execute(db);
  const userIds = new Map(users.map((user) => [user.username.normalize('NFC').toLowerCase(), Number(user.id)]));
  const knownIds = new Set(userIds.values());
  let afterId = 0;
  for (;;) {
    const { rows } = await sql<{ id: number; sender: number | null; recipient: string }>`
      SELECT id, from_user_id AS sender, to_user_name AS recipient FROM messages
       WHERE area_tag = 'private_mail' AND deleted_at IS NULL AND id > ${afterId}
       ORDER BY id LIMIT ${MAILS_PER_BATCH}`.execute(db);
    if (rows.length === 0) return;
    const entries = rows.flatMap((row) => {
      const messageId = Number(row.id);
      const sender = row.sender === null ? undefined : Number(row.sender);
      const recipient = userIds.get(row.recipient.normalize('NFC').toLowerCase());
      return [
        ...(sender !== undefined && knownIds.has(sender)
          ? [{ user_id: sender, box: 'sent', message_id: messageId }]
          : []),
        ...(recipient === undefined ? [] : [{ user_id: recipient, box: 'inbox', message_id: messageId }]),
      ];
    });
    for (let start = 0; start < entries.length; start += ENTRIES_PER_INSERT) {
      await db
        .insertInto('mailbox_entries')
        .values(entries.slice(start, start + ENTRIES_PER_INSERT).map((entry) => ({ ...entry, is_read: 1 })))
        .execute();
    }
    afterId = Number(rows[rows.length - 1]?.id ?? afterId);
  }
}
