import { sql } from 'kysely';
import type { Db, Dialect, Executor } from '../db/database.js';
import { MAX_MESSAGE_ID } from './message-rules.js';

/**
 * The live messages of each area counted by id, so that "live messages after id n" (a new-scan
 * pointer's `unreadCount`) costs the same at any area size and wherever n stands: a Fenwick
 * tree (binary indexed tree) per area over blocks of 32 consecutive message ids, in
 * `message_live_counts` (area_tag, node, live_count).
 *
 * - Node 0 holds the area's live total. Node i ≥ 1 holds the live messages whose block
 *   position (id / 32 + 1) lies in (i − lowbit(i), i]: the blocks up to a position are the
 *   sum of at most 26 nodes (one per set bit of the position), whatever the area's size.
 * - The count after n is the total, minus the blocks up to n's own, plus the live messages of
 *   n's block after n: at most 32 entries of `messages_area_live` (pointersWithUnreadQuery, which
 *   works out the nodes from the pointer in SQL).
 * - Every write of the message base keeps it, in the write's own transaction: an insert (posts,
 *   `baud message import`, `baud import enigma` — in any id order, old ids too) adds 1 along
 *   each message's update path (at most 27 nodes, one upsert for a whole batch), a deletion
 *   takes 1 off. Nothing ever walks the messages after the pointer, nor the deleted ones.
 *
 * Ids above MAX_MESSAGE_ID (SQLite would take them) count in the total only, so they are after
 * every pointer, which is clamped to MAX_MESSAGE_ID. Migration 0009 builds the same nodes.
 */

/** log2 of the ids per block (32): a count reads at most this many messages' index entries. */
const BLOCK_BITS = 5;
const BLOCK_SIZE = 2 ** BLOCK_BITS;
/** Positions 1..TREE_SIZE: the block of every id up to MAX_MESSAGE_ID (2^31 − 1), plus one. */
const TREE_SIZE = (MAX_MESSAGE_ID + 1) / BLOCK_SIZE;
/** The node that holds an area's live total. */
const TOTAL_NODE = 0;
/** Bits of a position (1 .. 2^26): a count reads the total and at most 26 nodes, one per set bit. */
const POSITION_BITS = 27;
/** Rows per upsert: 3 bound parameters a row stays far below both databases' limits. */
const ROWS_PER_UPSERT = 500;

/** Fenwick position of a message id: its block, plus one; 0 for none (the id is counted in the total only). */
function positionOf(messageId: number): number {
  if (messageId < 0 || messageId > MAX_MESSAGE_ID) return 0;
  return Math.floor(messageId / BLOCK_SIZE) + 1;
}

/** The nodes whose ranges hold `position`: the ones an insert or a deletion there changes. */
function nodesHolding(position: number): number[] {
  const nodes: number[] = [];
  for (let node = position; node >= 1 && node <= TREE_SIZE; node += node & -node) nodes.push(node);
  return nodes;
}

/**
 * Adds `delta` (1: inserted, −1: deleted) for each message to its area's nodes: one upsert of
 * the summed changes, in (area, node) order — every writer locks nodes in that order, so two
 * transactions never wait for each other's nodes in a cycle.
 */
export async function addToLiveCounts(
  db: Executor,
  messages: ReadonlyArray<{ readonly areaTag: string; readonly id: number }>,
  delta: 1 | -1,
): Promise<void> {
  // Summed by block position first: a batch of consecutive ids shares a few positions (32 ids
  // each), and each position's path up the tree is walked once instead of once per message.
  const positions = new Map<string, Map<number, number>>();
  for (const { areaTag, id } of messages) {
    let counts = positions.get(areaTag);
    if (!counts) {
      counts = new Map();
      positions.set(areaTag, counts);
    }
    const position = positionOf(id);
    counts.set(position, (counts.get(position) ?? 0) + delta);
  }
  const changes = new Map<string, Map<number, number>>();
  for (const [areaTag, counts] of positions) {
    const nodes = new Map<number, number>();
    changes.set(areaTag, nodes);
    for (const [position, change] of counts) {
      for (const node of [TOTAL_NODE, ...nodesHolding(position)]) nodes.set(node, (nodes.get(node) ?? 0) + change);
    }
  }
  const rows = [...changes.keys()]
    .sort()
    .flatMap((areaTag) =>
      [...(changes.get(areaTag) ?? [])]
        .sort(([a], [b]) => a - b)
        .map(([node, liveCount]) => ({ areaTag, node, liveCount })),
    );
  for (let start = 0; start < rows.length; start += ROWS_PER_UPSERT) {
    await db
      .insertInto('messageLiveCounts')
      .values(rows.slice(start, start + ROWS_PER_UPSERT))
      .onConflict((conflict) =>
        conflict.columns(['areaTag', 'node']).doUpdateSet((eb) => ({
          liveCount: eb('messageLiveCounts.liveCount', '+', eb.ref('excluded.liveCount')),
        })),
      )
      .execute();
  }
}

/**
 * Each of a user's pointers in `areaTags` with the live messages after it, in one statement:
 * the pointer, the Fenwick nodes its position names (worked out in SQL from the pointer, one
 * per set bit: the node of bit k is the position with the bits below k cleared), and the live
 * messages of its own block after it. Per pointer: a key lookup of the pointer, one index probe
 * of at most 27 keys of `message_live_counts`, and a range of at most 32 ids of
 * `messages_area_live` — the same at any area size, wherever the pointer stands
 * (test/db/query-plans.test.ts checks the plan). One round trip, so that an area's detail costs
 * one statement on PostgreSQL, and one snapshot, so that the parts always agree.
 *
 * Areas without a pointer have no row. A pointer outside the ids (an imported one) is clamped
 * to -1 .. MAX_MESSAGE_ID here, as every written one already is.
 */
export function pointersWithUnreadQuery(
  db: Db,
  dialect: Dialect,
  p: { readonly userId: number; readonly areaTags: readonly string[] },
) {
  const stored = sql.ref<number>('messagePointers.lastReadMessageId');
  const after =
    dialect === 'postgres'
      ? sql<number>`greatest(least(${stored}, ${sql.lit(MAX_MESSAGE_ID)}), -1)`
      : sql<number>`max(min(${stored}, ${sql.lit(MAX_MESSAGE_ID)}), -1)`;
  const pointers = db
    .selectFrom('messagePointers')
    .select([
      'areaTag',
      'lastReadMessageId',
      after.as('after'),
      sql<number>`((${after}) >> ${sql.lit(BLOCK_BITS)}) + 1`.as('position'),
      // The last id of the pointer's block (never (position << 5) − 1: 2^31 is past PostgreSQL's integer).
      sql<number>`(((${after}) >> ${sql.lit(BLOCK_BITS)}) << ${sql.lit(BLOCK_BITS)}) + ${sql.lit(BLOCK_SIZE - 1)}`.as(
        'blockEnd',
      ),
    ])
    .where('userId', '=', p.userId)
    .where('areaTag', 'in', p.areaTags)
    .as('p');
  const position = sql.ref<number>('p.position');
  // The total, less the node of each set bit k of the position (the position with the bits
  // below k cleared; NULL, which matches no node, for a bit that is not set). Each node is its
  // own equality on the whole primary key — a unique lookup whatever the statistics say: as one
  // `node IN (…)`, PostgreSQL without fresh statistics of the table read every node of the area.
  const node = (bit: number | null) =>
    db
      .selectFrom('messageLiveCounts as c')
      .select((inner) =>
        (bit === null ? inner.ref('c.liveCount') : inner.neg(inner.ref('c.liveCount'))).as('liveCount'),
      )
      // The pointer's area, from the statement around this one.
      .where('c.areaTag', '=', sql.ref<string>('p.areaTag'))
      .where(
        'c.node',
        '=',
        bit === null
          ? sql.lit(TOTAL_NODE)
          : sql<number>`case when ((${position} >> ${sql.lit(bit)}) & 1) = 1 then (${position} >> ${sql.lit(bit)}) << ${sql.lit(bit)} end`,
      );
  let nodes = node(null);
  for (let bit = 0; bit < POSITION_BITS; bit += 1) nodes = nodes.unionAll(node(bit));
  return db.selectFrom(pointers).select((eb) => [
    'p.areaTag',
    'p.lastReadMessageId',
    eb
      .selectFrom(nodes.as('nodes'))
      .select((inner) => inner.fn.coalesce(inner.fn.sum<number>('liveCount'), inner.lit(0)).as('counted'))
      .as('counted'),
    eb
      .selectFrom('messages as m')
      .select((inner) => inner.fn.countAll<number>().as('inBlock'))
      .whereRef('m.areaTag', '=', 'p.areaTag')
      .where('m.deletedAt', 'is', null)
      .whereRef('m.id', '>', 'p.after')
      .whereRef('m.id', '<=', 'p.blockEnd')
      .as('inBlock'),
  ]);
}
