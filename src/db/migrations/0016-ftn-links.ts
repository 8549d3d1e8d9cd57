import type { Kysely, Migration } from 'kysely';

/**
 * `ftn_links`: one row per FTN link (network, address) a session has touched: the lease that keeps
 * two nodes from talking to one link at once, and how its sessions went, for the status pages.
 *
 * - The lease (`lease_owner` the node, `lease_id` this holding, `lease_until` when it runs out) is
 *   taken with one conditional UPDATE (free or run out), renewed while the session runs and
 *   cleared after; a crashed node's lease runs out and the next session takes it.
 * - `last_*` describe the latest session; `last_error`/`last_error_at` stay after later good
 *   sessions (when did it last fail, and why); `sessions`/`failed_sessions` count them all.
 * - `address` is `zone:net/node[.point]` without a domain: the network is the namespace.
 */
export const ftnLinksMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ftn_links')
      .addColumn('network', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_id', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('last_session_at', 'text')
      .addColumn('last_session_ok', 'integer')
      .addColumn('last_ok_at', 'text')
      .addColumn('last_error', 'text')
      .addColumn('last_error_at', 'text')
      .addColumn('last_files_in', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_files_out', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_bytes_in', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_bytes_out', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('sessions', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failed_sessions', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('ftn_links_pk', ['network', 'address'])
      .execute();
  },
};
