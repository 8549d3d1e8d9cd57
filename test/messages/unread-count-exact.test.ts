import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { createEnigmaImportStore, type EnigmaImportStore } from '../../src/enigma/enigma-import-store.js';
import { importMessages } from '../../src/messages/message-import.js';
import { MESSAGE_READ_CACHE_MAX_AGE_MS } from '../../src/messages/message-read-cache.js';
import { threadPlaceOf } from '../../src/messages/message-thread.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { linesOf } from './message-fixture.js';

const API = '/_baud/api/v1';
const AREAS = ['general', 'members'] as const;
/** Kept by `baud import enigma` but served by no configuration (private mail, a forgotten area). */
const UNSERVED_AREA = 'netmail';

/** A step of the property: the numbers pick among what the board holds when the step runs. */
type Step =
  | { kind: 'post'; area: number; count: number }
  | { kind: 'delete'; pick: number }
  | { kind: 'burst'; posts: number; deletions: number; pick: number }
  | { kind: 'import'; area: number; count: number; batchSize: number }
  | { kind: 'reserveIds'; count: number }
  | { kind: 'importEnigma'; picks: number[]; areas: number[] }
  | { kind: 'movePointer'; area: number; to: number }
  | { kind: 'importPointer'; area: number; to: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('post' as const), area: fc.nat(1), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('burst' as const),
    posts: fc.integer({ min: 1, max: 4 }),
    deletions: fc.integer({ min: 0, max: 4 }),
    pick: fc.nat(),
  }),
  fc.record({
    kind: fc.constant('import' as const),
    area: fc.nat(1),
    count: fc.integer({ min: 1, max: 40 }),
    batchSize: fc.integer({ min: 1, max: 16 }),
  }),
  fc.record({ kind: fc.constant('reserveIds' as const), count: fc.integer({ min: 1, max: 80 }) }),
  fc.record({
    kind: fc.constant('importEnigma' as const),
    picks: fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
    areas: fc.array(fc.nat(2), { minLength: 12, maxLength: 12 }),
  }),
  fc.record({ kind: fc.constant('movePointer' as const), area: fc.nat(1), to: fc.nat() }),
  fc.record({
    kind: fc.constant('importPointer' as const),
    area: fc.nat(1),
    to: fc.integer({ min: -3, max: 1 << 30 }),
  }),
);

/**
 * `unreadCount` comes from per-area live counts kept beside the messages (message-live-counts.ts),
 * never from a COUNT over the messages after the pointer. This proves it exact: random posts
 * (some in parallel, racing deletions), deletions, `baud message import` batches, ENiGMA½
 * imports that store old ids below messages posted meanwhile (and into an unserved area), and
 * pointers moved anywhere (back, forward, past the end, imported with any value) — after every
 * step each reader's unreadCount, on the area, in `GET /messages/unread` and in the pointer's
 * answer, equals a plain COUNT of the live messages after the pointer (at once after this node's
 * writes; after another process's, once the read caches' bound has passed, as documented).
 */
describeEachDialect('unreadCount stays exact', (dialect) => {
  /** Moved past the read caches' bound after each write of another process, as a node sees those. */
  const clock = fakeClock();
  let board: TestBoard;
  /** A second connection, as `baud import enigma` runs: a process of its own on the same database. */
  let importer: Database;
  let enigma: EnigmaImportStore;
  let alice: { userId: number; auth: { authorization: string } };
  let bob: { userId: number; auth: { authorization: string } };
  let sysop: { userId: number; auth: { authorization: string } };
  /** Ids kept free below the newest posts, for ENiGMA½ imports to fill in any order. */
  const reservedIds: number[] = [];
  let reservedUpTo = 0;
  let serial = 0;

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        messageConferences: { main: { name: 'Main', areas: { general: { name: 'General' }, members: { name: 'M' } } } },
      },
    });
    alice = await board.userWithToken('alice');
    bob = await board.userWithToken('bob');
    sysop = await board.userWithToken('sysop', { groups: ['sysops'] });
    importer = await openDatabase(board.databaseUrl, { poolSize: 2 });
    enigma = createEnigmaImportStore(importer);
    // Both readers hold a pointer in both areas from the start: one set over HTTP, one imported.
    for (const areaTag of AREAS) {
      expect(
        (await inject('PUT', `/messages/areas/${areaTag}/pointer`, alice.auth, { lastReadMessageId: 0 })).statusCode,
      ).toBe(200);
      await enigma.insertPointers([
        { userId: bob.userId, areaTag, lastReadMessageId: 0, updatedAt: '2020-01-01T00:00:00.000Z' },
      ]);
    }
  }, 60_000);
  afterAll(async () => {
    await importer?.close();
    await board?.close();
  });

  const inject = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, auth: object, payload?: object) =>
    board.app.inject({ method, url: `${API}${url}`, headers: { ...auth }, ...(payload ? { payload } : {}) });

  /** The oracle: a plain COUNT of the live messages after `pointer`. */
  async function countAfter(areaTag: string, pointer: number): Promise<number> {
    const row = await board.board.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('areaTag', '=', areaTag)
      .where('deletedAt', 'is', null)
      .where('id', '>', pointer)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async function pointerOf(userId: number, areaTag: string): Promise<number> {
    const row = await board.board.db
      .selectFrom('messagePointers')
      .select('lastReadMessageId')
      .where('userId', '=', userId)
      .where('areaTag', '=', areaTag)
      .executeTakeFirstOrThrow();
    return row.lastReadMessageId;
  }

  async function liveMessages(): Promise<{ uuid: string }[]> {
    return board.board.db
      .selectFrom('messages')
      .select('uuid')
      .where('areaTag', 'in', [...AREAS])
      .where('deletedAt', 'is', null)
      .orderBy('id')
      .execute();
  }

  async function highestId(): Promise<number> {
    const row = await board.board.db
      .selectFrom('messages')
      .select((eb) => eb.fn.max('id').as('highest'))
      .executeTakeFirst();
    return Number(row?.highest ?? 0);
  }

  const post = (areaTag: string) =>
    inject('POST', `/messages/areas/${areaTag}/messages`, alice.auth, { subject: 'S', message: `m${serial++}` });

  /** Every reader's count, wherever it is shown, against the oracle. */
  async function expectExactCounts(): Promise<void> {
    for (const reader of [alice, bob]) {
      const unread: object[] = [];
      for (const areaTag of AREAS) {
        const pointer = await pointerOf(reader.userId, areaTag);
        const expected = await countAfter(areaTag, pointer);
        const area = await inject('GET', `/messages/areas/${areaTag}`, reader.auth);
        expect(area.statusCode).toBe(200);
        expect({ areaTag, pointer, unreadCount: area.json().unreadCount }).toEqual({
          areaTag,
          pointer,
          unreadCount: expected,
        });
        if (expected > 0) unread.push({ confTag: 'main', areaTag, lastReadMessageId: pointer, unreadCount: expected });
      }
      const listed = await inject('GET', '/messages/unread', reader.auth);
      expect(listed.json().data).toEqual(unread);
    }
  }

  async function deleteMessage(uuid: string): Promise<void> {
    expect((await inject('DELETE', `/messages/${uuid}`, sysop.auth)).statusCode).toBe(204);
  }

  async function run(step: Step): Promise<void> {
    switch (step.kind) {
      case 'post': {
        for (let index = 0; index < step.count; index += 1) {
          expect((await post(AREAS[step.area] ?? 'general')).statusCode).toBe(201);
        }
        return;
      }
      case 'delete': {
        const live = await liveMessages();
        const victim = live[step.pick % Math.max(live.length, 1)];
        if (victim) await deleteMessage(victim.uuid);
        return;
      }
      case 'burst': {
        // Posts and deletions in one area at once (PostgreSQL: concurrent transactions on the pool).
        const live = await liveMessages();
        const victims = Array.from(
          new Set(Array.from({ length: step.deletions }, (_, index) => live[(step.pick + index * 7) % live.length])),
        ).filter((victim) => victim !== undefined);
        const answers = await Promise.all([
          ...Array.from({ length: step.posts }, () => post('general')),
          ...victims.map((victim) => inject('DELETE', `/messages/${victim.uuid}`, sysop.auth)),
        ]);
        expect(answers.map((answer) => answer.statusCode).sort()).toEqual(
          [...Array<number>(step.posts).fill(201), ...Array<number>(victims.length).fill(204)].sort(),
        );
        return;
      }
      case 'import': {
        const lines = Array.from({ length: step.count }, (_, index) =>
          JSON.stringify({ from: 'Importer', subject: `i${index}`, body: 'b', timestamp: '2020-01-01T00:00:00Z' }),
        );
        await importMessages(board.board, AREAS[step.area] ?? 'general', linesOf(lines), () => {}, {
          batchSize: step.batchSize,
        });
        return;
      }
      case 'reserveIds': {
        // As `baud import enigma` starts: the counters move past the source's ids, so later
        // posts take ids above the ones the import is about to store.
        const highest = Math.max(await highestId(), reservedUpTo);
        reservedUpTo = highest + step.count;
        for (let id = highest + 1; id <= reservedUpTo; id += 1) reservedIds.push(id);
        await enigma.advanceIdCounters({ messages: reservedUpTo });
        return;
      }
      case 'importEnigma': {
        const ids = new Set<number>();
        for (const pick of step.picks) {
          const [id] = reservedIds.splice(pick % Math.max(reservedIds.length, 1), 1);
          if (id !== undefined) ids.add(id);
        }
        if (ids.size === 0) return;
        // In the order picked, not by id: a batch of old messages below newer posts.
        await enigma.insertMessages(
          [...ids].map((id, index) => ({
            id,
            uuid: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
            areaTag: [...AREAS, UNSERVED_AREA][step.areas[index] ?? 0] ?? UNSERVED_AREA,
            replyToMessageId: null,
            fromUserId: null,
            fromUserName: 'Old timer',
            toUserName: 'All',
            subject: 'From the old board',
            body: 'b',
            timestamp: '2019-01-01T00:00:00.000Z',
            network: '{}',
            ...threadPlaceOf(id, null),
          })),
        );
        await enigma.recountAreas([...AREAS]);
        clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
        return;
      }
      case 'movePointer': {
        const areaTag = AREAS[step.area] ?? 'general';
        // Anywhere from before the first message to past the last: back, forward, clamped.
        const to = step.to % ((await highestId()) + 20);
        const moved = await inject('PUT', `/messages/areas/${areaTag}/pointer`, alice.auth, { lastReadMessageId: to });
        expect(moved.statusCode).toBe(200);
        const pointer = await pointerOf(alice.userId, areaTag);
        expect(moved.json()).toEqual({
          areaTag,
          lastReadMessageId: pointer,
          unreadCount: await countAfter(areaTag, pointer),
        });
        return;
      }
      case 'importPointer': {
        // ENiGMA½'s pointers come in as they were: any value, never clamped.
        const areaTag = AREAS[step.area] ?? 'general';
        await board.board.db
          .deleteFrom('messagePointers')
          .where('userId', '=', bob.userId)
          .where('areaTag', '=', areaTag)
          .execute();
        await enigma.insertPointers([
          { userId: bob.userId, areaTag, lastReadMessageId: step.to, updatedAt: '2020-01-01T00:00:00.000Z' },
        ]);
        clock.advance(MESSAGE_READ_CACHE_MAX_AGE_MS);
        return;
      }
    }
  }

  it('equals a plain COUNT after every post, deletion, import and pointer move', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 4, maxLength: 14 }), async (steps) => {
        for (const step of steps) {
          await run(step);
          await expectExactCounts();
        }
      }),
      { numRuns: 25, seed: 30_001, endOnFailure: true },
    );
    // The property ran on a board that grew through every run; the counts held throughout.
    expect(await highestId()).toBeGreaterThan(100);
    const counted = await sql<{ total: number | string }>`SELECT COALESCE(SUM(live_count), 0) AS total
      FROM message_live_counts WHERE node = 0`.execute(board.board.db);
    const live = await sql<{ total: number | string }>`SELECT COUNT(*) AS total FROM messages
      WHERE deleted_at IS NULL`.execute(board.board.db);
    expect(Number(counted.rows[0]?.total)).toBe(Number(live.rows[0]?.total));
  }, 300_000);
});
