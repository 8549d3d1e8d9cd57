import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { configFromObject } from '../../src/config/load-config.js';
import type { Dialect } from '../../src/db/database.js';
import { serveBoard } from '../../src/setup/serve-board.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';
import { PUBLIC_STAFF_AREAS_CONFIG, PUBLIC_STAFF_AREAS_WARNING } from './public-staff-areas.js';

interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

describeEachDialect('start-up warnings of baud serve', (dialect: Dialect) => {
  const cleanUps: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0)) await cleanUp();
  });

  /** Serves a board with `raw` configuration on a free port; returns its log records from `info` up. */
  async function serveAndCollectLog(raw: Record<string, unknown>): Promise<LogRecord[]> {
    const dir = mkdtempSync(path.join(tmpdir(), 'baud-serve-warn-'));
    const schema = `baud_test_${randomBytes(6).toString('hex')}`;
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    const config = configFromObject({
      ...raw,
      paths: { dataDir: dir },
      database: { url },
      // The reader's pages are beside the point here, and building them costs seconds.
      contentServers: {
        web: { ...(raw.contentServers as { web: object } | undefined)?.web, port: 0, reader: { enabled: false } },
      },
    });
    const lines: string[] = [];
    const running = await serveBoard(config, {
      logger: { level: 'info', stream: { write: (line) => lines.push(line) } },
    });
    cleanUps.push(async () => {
      await running.stop();
      if (dialect === 'postgres') await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    });
    return lines.map((line) => JSON.parse(line) as LogRecord);
  }

  it('logs one warn line naming the allowlisted areas whose read ACS refuses members', async () => {
    const records = await serveAndCollectLog(PUBLIC_STAFF_AREAS_CONFIG);
    expect(records.filter((record) => record.level >= 40)).toEqual([
      expect.objectContaining({
        level: 40,
        warning: 'public-areas-closed-to-members',
        msg: PUBLIC_STAFF_AREAS_WARNING,
      }),
    ]);
  });

  it('logs no warning when every allowlisted area is open to members', async () => {
    const records = await serveAndCollectLog({
      ...PUBLIC_STAFF_AREAS_CONFIG,
      messageConferences: { main: { name: 'Main', areas: { general: { name: 'General' } } } },
      fileBase: {
        storageTags: { main: 'files/main' },
        areas: { public_files: { name: 'Public', storageTags: ['main'] } },
      },
    });
    expect(records.filter((record) => record.level >= 40)).toEqual([]);
  });
});
