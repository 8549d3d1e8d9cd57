import { rmSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { createHealthService } from '../../src/system/health-service.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const LIVE = '/_baud/health/live';
const READY = '/_baud/health/ready';
const ALL_OK = { database: 'ok', migrations: 'ok', storage: 'ok' };

/**
 * The probes a load balancer asks: `live` while the process runs, `ready` while the database
 * answers, every migration is applied and every storage directory takes files — and not while
 * the node drains before a shutdown.
 */
describeEachDialect('health probes', (dialect) => {
  let board: TestBoard;
  beforeEach(async () => {
    board = await createTestBoard(dialect, {
      config: {
        fileBase: {
          storageTags: { main: 'files/main' },
          areas: { uploads: { name: 'Uploads', storageTags: ['main'] } },
        },
      },
    });
  });
  afterEach(async () => {
    await board?.close();
  });

  const probe = (url: string) => board.app.inject({ method: 'GET', url });

  it('answers live and ready with 200, uncached, without credentials', async () => {
    const live = await probe(LIVE);
    expect(live.statusCode).toBe(200);
    expect(live.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(live.headers['cache-control']).toBe('no-store');
    expect(live.json()).toEqual({ status: 'live' });
    const ready = await probe(READY);
    expect(ready.statusCode).toBe(200);
    expect(ready.headers['cache-control']).toBe('no-store');
    expect(ready.json()).toEqual({ status: 'ready', checks: ALL_OK });
  });

  it('is not ready while a storage directory cannot take files, and ready again after', async () => {
    const incoming = path.join(board.dir, 'files/main', INCOMING_DIRECTORY);
    rmSync(incoming, { recursive: true, force: true });
    const ready = await probe(READY);
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      status: 'not ready',
      checks: { database: 'ok', migrations: 'ok', storage: 'storage "main" is not writable (ENOENT)' },
    });
    expect((await probe(LIVE)).statusCode).toBe(200);
  });

  it('is not ready while a migration is not applied, naming it and what to run', async () => {
    const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name DESC`.execute(
      board.board.db,
    );
    const newest = rows[0]?.name as string;
    await sql`DELETE FROM kysely_migration WHERE name = ${newest}`.execute(board.board.db);
    const ready = await probe(READY);
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks).toEqual({ ...ALL_OK, migrations: `not applied: ${newest} (run baud db migrate)` });
  });

  it('is not ready when the database does not answer, and says no more than that', async () => {
    await board.board.database.close();
    const ready = await probe(READY);
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      status: 'not ready',
      checks: { database: 'failed (see the log)', migrations: 'unknown', storage: 'ok' },
    });
  });

  it('counts a check that hangs as failed after its time limit', async () => {
    const health = createHealthService({
      database: board.board.database,
      files: { checkStorageWritable: () => new Promise<void>(() => {}) },
      // Long enough for the database to answer on a loaded machine (20 ms was not, in CI).
      timeoutMs: 1000,
    });
    expect(await health.checkReadiness()).toMatchObject({
      isReady: false,
      checks: { database: 'ok', migrations: 'ok', storage: 'no answer within 1000 ms' },
    });
  });

  it('turns not ready when draining, while live and the API go on answering', async () => {
    board.app.startDraining();
    const ready = await probe(READY);
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'draining', checks: ALL_OK });
    expect((await probe(LIVE)).statusCode).toBe(200);
    expect((await probe('/_baud/api/v1/system/info')).statusCode).toBe(200);
  });

  it('answers with the API switched off', async () => {
    const apiless = await createTestBoard(dialect, {
      config: { contentServers: { web: { restApi: { enabled: false } } } },
    });
    try {
      expect((await apiless.app.inject({ method: 'GET', url: READY })).json().status).toBe('ready');
      expect((await apiless.app.inject({ method: 'GET', url: '/_baud/api/v1/system/info' })).statusCode).toBe(404);
    } finally {
      await apiless.close();
    }
  });
});
