import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findMessages, type MessageSearch } from '../../src/messages/message-search-store.js';
import type { WordShares } from '../../src/search/match-share.js';
import { relevanceScore } from '../../src/search/relevance.js';
import { parseSearchQuery, type SearchQuery } from '../../src/search/search-query.js';
import { searchTokens } from '../../src/search/search-text.js';
import { describeEachDialect } from '../support/test-board.js';
import { createMessageTestBoard, type MessageTestBoard, seedMessages } from './message-fixture.js';

const WORDS = ['modem', 'lazy', 'dog', 'fox', 'baud', 'zap'] as const;
const AREAS = ['general', 'members', 'secret'] as const;
const AUTHORS = ['Ann', 'Bob'] as const;

/** Every word in every message, as far as the walk's choice goes: PostgreSQL walks newest first. */
const EVERY_WORD_COMMON: WordShares = new Map(WORDS.map((word) => [word, 1]));
/** No statistics: every word rare, the index is asked first. */
const NO_STATISTICS: WordShares = new Map();

const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((words) => words.join(' '));
const term = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...WORDS)).map(([a, b]) => `"${a} ${b}"`),
  fc.constantFrom(...WORDS).map((word) => `${word.slice(0, 2)}*`),
);
const queryText = fc
  .tuple(
    fc.array(fc.tuple(term, fc.option(term, { nil: undefined })), { minLength: 1, maxLength: 2 }),
    fc.option(term, { nil: undefined }),
  )
  .map(([groups, excluded]) =>
    [
      ...groups.map(([first, second]) => (second === undefined ? first : `${first} OR ${second}`)),
      ...(excluded === undefined ? [] : [`-${excluded}`]),
    ].join(' '),
  );

interface StoredMessage {
  readonly id: number;
  readonly areaTag: string;
  readonly fromUserName: string;
  readonly subject: string;
  readonly body: string;
  readonly timestamp: string;
}

/** The oracle: what a query matches, decided on the message's own words. */
function matches(query: SearchQuery, message: StoredMessage): boolean {
  const tokens = [...searchTokens(message.subject), ...searchTokens(message.body)];
  const has = (wanted: SearchQuery['excluded'][number]) => relevanceScore(tokens, [wanted]) > 0;
  return query.groups.every((group) => group.some(has)) && !query.excluded.some(has);
}

/**
 * Walking newest first and asking the index first must give the same pages: the walk is chosen
 * from statistics only for speed, so both strategies (and a plain reading of every message)
 * must agree on random boards, queries, filters and page sizes, across every page boundary.
 */
describeEachDialect('search strategies', (dialect) => {
  let board: MessageTestBoard;
  let day = 0;

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
  });
  afterAll(() => board.close());

  async function pages(search: Omit<MessageSearch, 'beforeKey' | 'bound'>, shares: WordShares) {
    const seen: number[][] = [];
    let beforeKey: number | null = null;
    for (;;) {
      const found = await findMessages(board.board.database.db, dialect, { ...search, beforeKey, bound: null }, shares);
      const page = found.rows.map((row) => row.messageId);
      seen.push(page);
      const last = found.rows.at(-1);
      if (page.length < search.limit || last === undefined) return seen;
      beforeKey = last.sortKey;
    }
  }

  it('gives the same pages walking newest first as asking the index, and as reading every message', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            areaTag: fc.constantFrom(...AREAS),
            from: fc.constantFrom(...AUTHORS),
            subject: text,
            body: text,
          }),
          { maxLength: 12 },
        ),
        fc.array(fc.nat(), { maxLength: 3 }),
        queryText,
        fc.subarray([...AREAS], { minLength: 1 }),
        fc.option(fc.constantFrom(...AUTHORS), { nil: null }),
        fc.option(fc.nat({ max: 40 }), { nil: null }),
        fc.integer({ min: 1, max: 6 }),
        async (posts, deletions, q, areaTags, from, sinceDay, limit) => {
          for (const post of posts) {
            day += 1;
            const timestamp = new Date(Date.UTC(2020, 0, 1) + day * 86_400_000).toISOString();
            await seedMessages(board, post.areaTag, [
              { from: post.from, subject: post.subject, body: post.body, timestamp },
            ]);
          }
          const { db } = board.board.database;
          const live = await sql<{ id: number }>`SELECT id FROM messages WHERE deleted_at IS NULL ORDER BY id`.execute(
            db,
          );
          for (const pick of deletions) {
            const id = live.rows[pick % Math.max(live.rows.length, 1)]?.id;
            if (id !== undefined)
              await sql`UPDATE messages SET deleted_at = ${'2030-01-01T00:00:00.000Z'} WHERE id = ${id}`.execute(db);
          }
          const query = parseSearchQuery(q);
          const since = sinceDay === null ? null : new Date(Date.UTC(2020, 0, 1) + sinceDay * 86_400_000).toISOString();
          const search = { query, areaTags, from, to: null, since, until: null, sort: 'newest' as const, limit };

          const { rows: stored } = await sql<StoredMessage>`
            SELECT id, area_tag, from_user_name, subject, body, timestamp FROM messages
             WHERE deleted_at IS NULL ORDER BY id DESC`.execute(db);
          const expected = stored
            .filter((message) => areaTags.includes(message.areaTag as (typeof AREAS)[number]))
            .filter((message) => from === null || message.fromUserName === from)
            .filter((message) => since === null || message.timestamp >= since)
            .filter((message) => matches(query, message))
            .map((message) => message.id);

          const walked = await pages(search, EVERY_WORD_COMMON);
          expect(walked.flat(), q).toEqual(expected);
          expect(await pages(search, NO_STATISTICS), q).toEqual(walked);
        },
      ),
      { numRuns: 60 },
    );
  });
});
