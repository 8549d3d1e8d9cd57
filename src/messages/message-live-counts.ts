import type { Db, Executor } from '../db/database.js';
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
 *   n's block after n: at most 32 entries of `messages_area_live`.
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
/** Nodes a count reads at most: the total, and one per set bit of a position below 2^26. */
export const MAX_COUNT_NODES = 27;
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

/** The nodes whose ranges together are positions 1..position. */
function nodesUpTo(position: number): number[] {
  const nodes: number[] = [];
  for (let node = position; node > 0; node -= node & -node) nodes.push(node);
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
  const changes = new Map<string, Map<number, number>>();
  for (const { areaTag, id } of messages) {
    let nodes = changes.get(areaTag);
    if (!nodes) {
      nodes = new Map();
      changes.set(areaTag, nodes);
    }
    for (const node of [TOTAL_NODE, ...nodesHolding(positionOf(id))]) nodes.set(node, (nodes.get(node) ?? 0) + delta);
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
 * The parameters of {@link liveCountAfterQuery}: the node to add (node0, the total) and the
 * ones to take off (node1 …), one per set bit of the position up to the pointer's block.
 */
export type LiveCountParams = { readonly areaTag: string; readonly afterId: number; readonly blockEnd: number } & {
  readonly [node: `node${number}`]: number;
};

/** What counts the live messages of `areaTag` after message id `afterId`: the parameters, and how many nodes they name. */
export function liveCountAfterParams(
  areaTag: string,
  afterId: number,
): { readonly params: LiveCountParams; readonly nodeCount: number } {
  // A pointer never stands outside the ids (it is clamped); an imported one might.
  const after = Math.min(Math.max(afterId, -1), MAX_MESSAGE_ID);
  const block = Math.floor(after / BLOCK_SIZE);
  const nodes = [TOTAL_NODE, ...nodesUpTo(block + 1)];
  const params: Record<string, string | number> = { areaTag, afterId: after, blockEnd: (block + 1) * BLOCK_SIZE - 1 };
  nodes.forEach((node, index) => {
    params[`node${index}`] = node;
  });
  return { params: params as LiveCountParams, nodeCount: nodes.length };
}

/**
 * The live messages of an area after an id, as `counted` (the total less the blocks up to the
 * id's own: `nodeCount` lookups of the whole primary key, at most 27) and `inBlock` (the live
 * messages of that block after the id: a range of at most 32 ids of `messages_area_live`), in
 * one statement, so that both come from one snapshot. Each node is its own equality on the
 * primary key, so the plan never depends on statistics (test/db/query-plans.test.ts checks it).
 */
export function liveCountAfterQuery(db: Db, p: LiveCountParams, nodeCount: number) {
  const node = (slot: number) =>
    db
      .selectFrom('messageLiveCounts')
      .select((eb) => (slot === 0 ? eb.ref('liveCount') : eb.neg(eb.ref('liveCount'))).as('liveCount'))
      .where('areaTag', '=', p.areaTag)
      .where('node', '=', p[`node${slot}`] as number);
  let nodes = node(0);
  for (let slot = 1; slot < nodeCount; slot += 1) nodes = nodes.unionAll(node(slot));
  return db.selectNoFrom((eb) => [
    eb
      .selectFrom(nodes.as('nodes'))
      .select((inner) => inner.fn.coalesce(inner.fn.sum<number>('liveCount'), inner.lit(0)).as('counted'))
      .as('counted'),
    eb
      .selectFrom('messages')
      .select((inner) => inner.fn.countAll<number>().as('inBlock'))
      .where('areaTag', '=', p.areaTag)
      .where('deletedAt', 'is', null)
      .where('id', '>', p.afterId)
      .where('id', '<=', p.blockEnd)
      .as('inBlock'),
  ]);
}
