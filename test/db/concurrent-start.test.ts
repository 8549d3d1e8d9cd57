import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { type Board, openBoard } from '../../src/board.js';
import { configFromObject } from '../../src/config/load-config.js';
import { boardMigrations } from '../../src/db/migrations/index.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';

const NODES = 3;

/**
 * Several nodes started at the same moment on one empty database: each creates the schema if
 * needed and runs the migrations under the migrator's lock (a transaction-scoped advisory lock
 * on PostgreSQL), so every migration is applied exactly once and every node comes up.
 */
describeEachDialect('nodes starting at once on an empty database', (dialect) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-start-'));
  const schema = `baud_start_${randomBytes(6).toString('hex')}`;
  afterAll(async () => {
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it(`starts ${NODES} nodes together and applies each migration once`, async () => {
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    const config = configFromObject({
      paths: { dataDir: dir },
      database: { url, poolSize: 2 },
      logging: { level: 'silent' },
    });
    const boards: Board[] = await Promise.all(Array.from({ length: NODES }, () => openBoard(config)));
    try {
      const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(
        boards[0]?.db as Board['db'],
      );
      expect(rows.map((row) => row.name)).toEqual(Object.keys(boardMigrations(dialect)).sort());
      for (const board of boards) expect((await board.system.getInfo()).version).toBeTypeOf('string');
    } finally {
      await Promise.all(boards.map((board) => board.close()));
    }
  });
});
