import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * What the FTN tosser and scanner keep (src/ftn/ftn-store.ts), per network:
 *
 * - `ftn_message_ids` (network, msg_id) → message_id: every MSGID the board has seen in a
 *   network, tossed or exported. Its primary key refuses a duplicate on toss (a message a second
 *   link, or a second poll, brings again), finds the local message a REPLY names, and gives a
 *   post the MSGID it went out with (a local reply's REPLY). `source_link` is the link a tossed
 *   message came from (null for our own), `kludges` the ^A lines it carried beyond MSGID and
 *   REPLY (JSON), so that forwarding it to our other links keeps them.
 * - `ftn_serials` (network) → next_serial: the MSGID serial counter. Its row is also the
 *   network's lock: a toss and an export of one network, on any node, hold it in turn.
 * - `ftn_export_cursors` (network, area_tag) → last_message_id: how far each echomail area has
 *   been exported. Per area, because ids are taken in commit order only within one area (the
 *   area's counter row orders its writers), so a cursor over all areas could pass a message that
 *   commits after a higher id of another area.
 * - `ftn_netmail_queue` (message_id): netmail sent from `POST /mail`, waiting for the scanner.
 * - `ftn_toss_journal`: one row per file tossed or moved aside, for `baud ftn status`.
 */
export function ftnEchomailMigration(dialect: Dialect): Migration {
  const id = (column: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement();
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('ftn_message_ids')
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('msg_id', 'text', (c) => c.notNull())
        .addColumn('message_id', 'integer', (c) => c.notNull())
        .addColumn('source_link', 'text')
        .addColumn('kludges', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('ftn_message_ids_pk', ['network', 'msg_id'])
        .execute();
      await db.schema.createIndex('ftn_message_ids_message').on('ftn_message_ids').columns(['message_id']).execute();
      await db.schema
        .createTable('ftn_serials')
        .addColumn('network', 'text', (c) => c.primaryKey())
        .addColumn('next_serial', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ftn_export_cursors')
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('area_tag', 'text', (c) => c.notNull())
        .addColumn('last_message_id', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('ftn_export_cursors_pk', ['network', 'area_tag'])
        .execute();
      await db.schema
        .createTable('ftn_netmail_queue')
        .addColumn('message_id', 'integer', (c) => c.primaryKey())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('to_address', 'text', (c) => c.notNull())
        .addColumn('to_name', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ftn_toss_journal')
        .addColumn('id', 'integer', id)
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('tossed_at', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('imported', 'integer', (c) => c.notNull())
        .addColumn('duplicates', 'integer', (c) => c.notNull())
        .addColumn('skipped', 'integer', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('ftn_toss_journal_network')
        .on('ftn_toss_journal')
        .columns(['network', 'id'])
        .execute();
    },
  };
}
