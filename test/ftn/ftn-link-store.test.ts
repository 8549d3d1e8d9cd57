import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Database, type Dialect, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { parseFtnAddress } from '../../src/ftn/ftn-address.js';
import { createFtnLinkStore } from '../../src/ftn/ftn-link-store.js';
import { describeEachDialect, dropSchema, fakeClock, POSTGRES_URL } from '../support/test-board.js';

const HUB = parseFtnAddress('21:1/100');

/** A promise and the function that resolves it: holds a session open until the test lets go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describeEachDialect('the FTN link lock and status', (dialect: Dialect) => {
  let dir: string;
  let schema: string;
  /** Two nodes of one board: each its own connection (pool) to the one database. */
  let nodeA: Database;
  let nodeB: Database;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-ftn-links-'));
    schema = `baud_test_${randomBytes(6).toString('hex')}`;
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    nodeA = await openDatabase(url, { poolSize: 4 });
    await migrateToLatest(nodeA);
    nodeB = await openDatabase(url, { poolSize: 4 });
  });

  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets exactly one of many sessions racing from two nodes run; the others are busy', async () => {
    const storeA = createFtnLinkStore(nodeA.db);
    const storeB = createFtnLinkStore(nodeB.db);
    const held = gate();
    let running = 0;
    const attempts = Array.from({ length: 10 }, (_, index) =>
      (index % 2 === 0 ? storeA : storeB).withLinkLock('race', HUB, index % 2 === 0 ? 'node-a' : 'node-b', async () => {
        running += 1;
        await held.opened;
        return 'ran';
      }),
    );
    // Every attempt but the winner answers 'busy' while the winner is still running.
    const settled: string[] = [];
    for (const attempt of attempts) void attempt.then((outcome) => settled.push(outcome));
    await expect.poll(() => settled.length, { timeout: 10_000 }).toBe(9);
    expect(settled.every((outcome) => outcome === 'busy')).toBe(true);
    expect(running).toBe(1);
    held.open();
    expect((await Promise.all(attempts)).filter((outcome) => outcome === 'ran')).toHaveLength(1);
  });

  it('releases the lease when the session ends, even when it throws', async () => {
    const store = createFtnLinkStore(nodeA.db);
    await expect(
      store.withLinkLock('release', HUB, 'node-a', async () => {
        throw new Error('line dropped');
      }),
    ).rejects.toThrow('line dropped');
    expect(await store.withLinkLock('release', HUB, 'node-b', async () => 'second')).toBe('second');
  });

  it('shows which node holds a link while its session runs', async () => {
    const store = createFtnLinkStore(nodeA.db);
    const held = gate();
    const session = store.withLinkLock('shown', HUB, 'node-a', () => held.opened);
    await expect
      .poll(async () => (await store.listLinks()).find((link) => link.network === 'shown')?.lockedBy)
      .toBe('node-a');
    held.open();
    await session;
    expect((await store.listLinks()).find((link) => link.network === 'shown')?.lockedBy).toBeNull();
  });

  it('takes over the lease a crashed node never released once it has run out, and keeps it when that node wakes', async () => {
    const clock = fakeClock();
    const crashed = createFtnLinkStore(nodeA.db, { clock, leaseSeconds: 60 });
    const survivor = createFtnLinkStore(nodeB.db, { clock, leaseSeconds: 60 });
    const hung = gate();
    // The "crashed" node's session never ends on its own and never renews (its timer is real time).
    const stale = crashed.withLinkLock('crash', HUB, 'node-a', () => hung.opened);
    await expect
      .poll(async () => (await survivor.listLinks()).find((link) => link.network === 'crash')?.lockedBy)
      .toBe('node-a');
    expect(await survivor.withLinkLock('crash', HUB, 'node-b', async () => 'ran')).toBe('busy');
    clock.advance(61_000);
    const taken = gate();
    const held = gate();
    const takeover = survivor.withLinkLock('crash', HUB, 'node-b', async () => {
      taken.open();
      await held.opened;
      return 'took over';
    });
    await taken.opened;
    // The old holder finishing releases only its own holding, not the new one.
    hung.open();
    await stale;
    expect(await crashed.withLinkLock('crash', HUB, 'node-a', async () => 'ran')).toBe('busy');
    held.open();
    expect(await takeover).toBe('took over');
  });

  it('keeps the latest session, its counts, and the last failure across later good sessions', async () => {
    const store = createFtnLinkStore(nodeA.db);
    const base = { bytesIn: 0, bytesOut: 0, filesIn: 0, filesOut: 0 };
    await store.recordSession('status', HUB, { ...base, at: new Date('2026-11-27T10:00:00Z'), ok: true, filesIn: 1 });
    await store.recordSession('status', HUB, {
      ...base,
      at: new Date('2026-11-27T10:15:00Z'),
      ok: false,
      error: 'the link refused the session: "Bad password"',
    });
    await store.recordSession(
      'status',
      { ...HUB, domain: 'fsxnet' },
      {
        at: new Date('2026-11-27T10:30:00Z'),
        ok: true,
        bytesIn: 5_000_000_000,
        bytesOut: 300,
        filesIn: 2,
        filesOut: 1,
      },
    );
    expect((await store.listLinks()).filter((link) => link.network === 'status')).toEqual([
      {
        network: 'status',
        address: '21:1/100',
        lockedBy: null,
        lastSessionAt: '2026-11-27T10:30:00.000Z',
        lastSessionOk: true,
        lastOkAt: '2026-11-27T10:30:00.000Z',
        lastError: 'the link refused the session: "Bad password"',
        lastErrorAt: '2026-11-27T10:15:00.000Z',
        lastFilesIn: 2,
        lastFilesOut: 1,
        lastBytesIn: 5_000_000_000,
        lastBytesOut: 300,
        sessions: 3,
        failedSessions: 1,
      },
    ]);
  });
});
