import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { areaPageQuery } from '../src/messages/message-reads.js';

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Actual Rows'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** How PostgreSQL runs the deepest page of a big area, as `EXPLAIN ANALYZE` reports it. */
export interface DeepPagePlan {
  /** The plan's nodes, outermost first: `Limit › Index Scan (messages_area_live)`. */
  readonly nodes: readonly string[];
  /** An index range scan with no sort and no sequential or bitmap scan. */
  readonly isIndexRangeScan: boolean;
  readonly executionMs: number;
  /** Shared buffers the page touched: a range scan reads a handful, a scan of the area thousands. */
  readonly sharedBuffers: number;
}

const describeNode = (node: PlanNode) => `${node['Node Type']}${node['Index Name'] ? ` (${node['Index Name']})` : ''}`;

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/**
 * Runs `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` on the very query the message store pages an
 * area with (`areaPageQuery`, 25 messages and one to tell whether more follow), for the last
 * page of `areaTag`, on the board's own database.
 */
export async function explainDeepPage(databaseUrl: string, areaTag: string): Promise<DeepPagePlan> {
  const database = await openDatabase(databaseUrl, { poolSize: 1 });
  try {
    const { rows: last } = await sql<{
      maxId: number;
    }>`SELECT max(id) AS max_id FROM messages WHERE area_tag = ${areaTag}`.execute(database.db);
    const afterKey = Number(last[0]?.maxId ?? 0) - 25;
    const compiled = areaPageQuery(database.db, { areaTag, afterKey, limit: 26 }).compile();
    const { rows } = await database.db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>({
      ...compiled,
      sql: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${compiled.sql}`,
    });
    const [explained] = rows[0]?.['QUERY PLAN'] ?? [];
    if (!explained) throw new Error('EXPLAIN returned no plan');
    const nodes = nodesOf(explained.Plan);
    const types = nodes.map((node) => node['Node Type']);
    const buffers = nodes[0] as PlanNode & { 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number };
    return {
      nodes: nodes.map(describeNode),
      isIndexRangeScan: types.includes('Index Scan') && !types.some((type) => /Sort|Seq Scan|Bitmap/.test(type)),
      executionMs: explained['Execution Time'],
      sharedBuffers: (buffers['Shared Hit Blocks'] ?? 0) + (buffers['Shared Read Blocks'] ?? 0),
    };
  } finally {
    await database.close();
  }
}
