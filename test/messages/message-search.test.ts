import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresTsvector } from '../../src/search/full-text-index.js';
import { indexText } from '../../src/search/search-text.js';
import { stripAnsi } from '../../src/text/strip-ansi.js';
import { describeEachDialect } from '../support/test-board.js';
import {
  API,
  createMessageTestBoard,
  ESC,
  type MessageTestBoard,
  type SeedLine,
  seedMessages,
} from './message-fixture.js';

interface Found {
  readonly messageId: number;
  readonly uuid: string;
  readonly areaTag: string;
  readonly subject: string;
  readonly snippet: string;
}

interface FoundPage {
  readonly data: Found[];
  readonly meta: { readonly nextCursor: string | null };
}

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();

/** beyond-v1.md "Reading: full-text search", for messages. */
describeEachDialect('message search', (dialect) => {
  let board: MessageTestBoard;

  const search = (query: string, headers: Record<string, string> = {}) =>
    board.app.inject({ method: 'GET', url: `${API}/messages/search?${query}`, headers });
  const subjects = async (query: string, headers: Record<string, string> = {}) => {
    const response = await search(query, headers);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as FoundPage).data.map((found) => found.subject);
  };
  const q = (text: string) => `q=${encodeURIComponent(text)}`;

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    const general: SeedLine[] = [
      { subject: 'Zeppelin sighting', body: 'A zeppelin flew over the board today.', timestamp: at(1), from: 'Ann' },
      { subject: 'Modems', body: 'My high speed modem is a Courier.', timestamp: at(2), from: 'Bob', to: 'Ann' },
      { subject: 'Fax', body: 'The fax modem screams at night.', timestamp: at(3), from: 'Bob' },
      { subject: 'Café', body: 'Meet at the CAFÉ, Straße 5.', timestamp: at(4), from: 'Ann' },
      {
        subject: 'Art',
        body: `${ESC}[1;31mRed${ESC}[0m zeppelin art |03with pipes`,
        timestamp: at(5),
        from: 'Cid',
      },
      { subject: 'BBS list', body: 'Every board and every bbs here.', timestamp: at(6), from: 'Dee' },
    ];
    await seedMessages(board, 'general', general);
    await seedMessages(board, 'members', [{ subject: 'Members zeppelin', body: 'Members only zeppelin talk.' }]);
    await seedMessages(board, 'secret', [{ subject: 'Secret zeppelin', body: 'The secret zeppelin plans.' }]);
    await seedMessages(board, 'chatter', [{ subject: 'Chatter', body: 'zeppelins everywhere' }]);
  });
  afterAll(() => board.close());

  it('finds what the caller may read, newest first, with a snippet around the first hit', async () => {
    const anonymous = await search(q('zeppelin'));
    expect(anonymous.statusCode).toBe(200);
    const found = (anonymous.json() as FoundPage).data;
    expect(found.map((message) => [message.areaTag, message.subject])).toEqual([
      ['general', 'Art'],
      ['general', 'Zeppelin sighting'],
    ]);
    // ANSI and pipe codes are neither words nor shown; hits are marked.
    expect(found[0]?.snippet).toBe('Red «zeppelin» art with pipes');
    expect(found[1]?.snippet).toBe('A «zeppelin» flew over the board today.');
    // A logged-in member also searches the members area; never the secret or blocked ones.
    expect(await subjects(q('zeppelin'), board.alice.auth)).toEqual(['Members zeppelin', 'Art', 'Zeppelin sighting']);
  });

  it('never lets a hidden area change an answer: the same bytes with or without its hits', async () => {
    const before = await search(q('zeppelin'), board.alice.auth);
    await seedMessages(board, 'secret', [{ subject: 'More secret', body: 'zeppelin zeppelin zeppelin' }]);
    await board.board.db
      .insertInto('messages')
      .values({
        id: 9_000_000,
        threadRootId: 9_000_000,
        threadPath: '00895440',
        uuid: '00000000-0000-4000-8000-000000000099',
        areaTag: 'private_mail',
        replyToMessageId: null,
        fromUserId: null,
        fromUserName: 'x',
        toUserName: 'alice',
        subject: 'Private zeppelin',
        body: 'zeppelin',
        timestamp: at(9),
        network: '{}',
      })
      .execute();
    const after = await search(q('zeppelin'), board.alice.auth);
    expect(after.body).toBe(before.body);
    expect(await subjects(q('secret'), board.sysop.auth)).toEqual([]);
  });

  it.each([
    ['a phrase', '"high speed modem"', ['Modems']],
    ['words anywhere (AND)', 'modem night', ['Fax']],
    ['a prefix', 'zepp*', ['Art', 'Zeppelin sighting']],
    ['an exclusion', 'modem -fax', ['Modems']],
    ['OR', 'courier OR screams', ['Fax', 'Modems']],
    ['accents and case', 'cafe strasse', ['Café']],
    ['an unbalanced quote', '"speed modem', ['Modems']],
    ['punctuation inside a word', 'e-very', []],
    ['the subject', 'sighting', ['Zeppelin sighting']],
  ])('answers %s exactly', async (_what, text, expected) => {
    expect(await subjects(q(text))).toEqual(expected);
  });

  it.each([
    ['an empty q', ''],
    ['blanks only', '   '],
    ['257 characters', 'a'.repeat(257)],
    ['17 terms', Array.from({ length: 17 }, (_, index) => `w${index}`).join(' ')],
    ['punctuation only', '!!! ??? ...'],
    ['emoji only', '🚀 🛸'],
    ['only exclusions', '-modem'],
    ['a one-letter prefix', 'z*'],
    ['a dangling OR', 'modem OR'],
  ])('refuses %s with a 400 problem on q', async (_what, text) => {
    const response = await search(q(text));
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it('takes 256 characters and 16 terms, and any character without a 5xx', async () => {
    expect((await search(q(`modem ${'a'.repeat(250)}`))).statusCode).toBe(200);
    expect((await search(q(Array.from({ length: 16 }, (_, index) => `w${index}`).join(' ')))).statusCode).toBe(200);
    for (const [text, status] of [
      ['modem:^()', 200],
      ['"""', 400],
      ['modem 🚀', 200],
      ["'; DROP TABLE messages; --", 200],
      ['NEAR(modem)', 200],
      ['modem AND fax', 200],
    ] as const) {
      expect((await search(q(text))).statusCode, text).toBe(status);
    }
    // NUL is refused in every input of the API, this one included.
    const nul = await search(q('modem\u0000'));
    expect(nul.statusCode).toBe(400);
    expect(nul.json().detail).toBe('query/q must not contain NUL characters');
    expect(await subjects(q('modem 🚀'))).toEqual(['Fax', 'Modems']);
  });

  it('filters by area glob, conference, author, addressee and date', async () => {
    expect(await subjects(`${q('zeppelin*')}&areaTag=chat*`, board.alice.auth)).toEqual(['Chatter']);
    expect(await subjects(`${q('zeppelin*')}&confTag=other`, board.alice.auth)).toEqual(['Chatter']);
    expect((await search(`${q('zeppelin')}&confTag=nowhere`)).statusCode).toBe(404);
    expect(await subjects(`${q('modem')}&from=bob`)).toEqual(['Fax', 'Modems']);
    expect(await subjects(`${q('modem')}&to=ANN`)).toEqual(['Modems']);
    expect(await subjects(`${q('modem')}&since=${at(3)}`)).toEqual(['Fax']);
    expect(await subjects(`${q('modem')}&until=${encodeURIComponent('2024-01-01T00:02:00+00:00')}`)).toEqual([
      'Modems',
    ]);
    expect((await search(`${q('modem')}&since=yesterday`)).statusCode).toBe(400);
    expect((await search(`${q('modem')}&sort=oldest`)).statusCode).toBe(400);
  });

  it('pages with cursors that never repeat or skip, while new messages arrive', async () => {
    await seedMessages(
      board,
      'general',
      Array.from({ length: 7 }, (_, index) => ({ subject: `Page ${index}`, body: 'pageable words' })),
    );
    const first = (await search(`${q('pageable')}&limit=3`)).json() as FoundPage;
    expect(first.data.map((found) => found.subject)).toEqual(['Page 6', 'Page 5', 'Page 4']);
    // Newer matches appear on a new search, never in the pages of this one.
    await seedMessages(board, 'general', [{ subject: 'Page late', body: 'pageable too' }]);
    const seen = [...first.data];
    let cursor = first.meta.nextCursor;
    while (cursor !== null) {
      const page = (await search(`${q('pageable')}&limit=3&cursor=${encodeURIComponent(cursor)}`)).json() as FoundPage;
      seen.push(...page.data);
      cursor = page.meta.nextCursor;
    }
    expect(seen.map((found) => found.subject)).toEqual([
      'Page 6',
      'Page 5',
      'Page 4',
      'Page 3',
      'Page 2',
      'Page 1',
      'Page 0',
    ]);
    // A cursor belongs to its search.
    expect(
      (await search(`${q('zeppelin')}&cursor=${encodeURIComponent(first.meta.nextCursor ?? '')}`)).statusCode,
    ).toBe(400);
  });

  it('sorts by relevance: more hits first, a short text before a long one, pages that never repeat or skip', async () => {
    const filler = Array.from({ length: 300 }, (_, index) => `filler${index}`).join(' ');
    await seedMessages(board, 'general', [
      { subject: 'Rel long once', body: `walrus ${filler}` },
      { subject: 'Rel thrice', body: 'walrus walrus walrus here' },
      { subject: 'Rel once', body: 'one walrus here' },
      { subject: 'Rel twice', body: 'walrus and a walrus' },
      { subject: 'Rel subject', body: 'one walrus too' },
    ]);
    const byRelevance = ['Rel thrice', 'Rel twice', 'Rel subject', 'Rel once', 'Rel long once'];
    expect(await subjects(`${q('walrus')}&sort=relevance`)).toEqual(byRelevance);
    expect(await subjects(`${q('walrus')}&sort=newest`)).toEqual([
      'Rel subject',
      'Rel twice',
      'Rel once',
      'Rel thrice',
      'Rel long once',
    ]);
    // Page by page, one at a time, while a better and a worse match arrive: each page goes on
    // where the last stopped. The candidates were chosen on the first page, so the newcomers
    // join none of its later pages (a worse one would push an unseen candidate out of a full
    // set); a new search ranks them.
    const walk = async (sort: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const response = await search(`${q('walrus')}&sort=${sort}&limit=1${after}`);
        expect(response.statusCode, response.body).toBe(200);
        const page = response.json() as FoundPage;
        seen.push(...page.data.map((found) => found.subject));
        if (seen.length === 2) {
          await seedMessages(board, 'general', [
            { subject: 'Rel late best', body: 'walrus walrus walrus walrus' },
            { subject: 'Rel late worst', body: `walrus ${filler} ${filler}` },
          ]);
        }
        cursor = page.meta.nextCursor;
      } while (cursor !== null);
      return seen;
    };
    expect(await walk('relevance')).toEqual(byRelevance);
    const ranked = await subjects(`${q('walrus')}&sort=relevance`);
    expect(ranked.toSorted()).toEqual([...byRelevance, 'Rel late best', 'Rel late worst'].toSorted());
    expect(ranked.at(-1)).toBe('Rel late worst');
    // A cursor of one order is refused by the other.
    const first = (await search(`${q('walrus')}&limit=1`)).json() as FoundPage;
    const mixed = await search(
      `${q('walrus')}&sort=relevance&limit=1&cursor=${encodeURIComponent(first.meta.nextCursor ?? '')}`,
    );
    expect(mixed.statusCode).toBe(400);
    expect((await search(`${q('walrus')}&sort=oldest`)).statusCode).toBe(400);
  });

  it('keeps the index in step with posts and deletions', async () => {
    const posted = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: board.alice.auth,
      payload: { subject: 'Fresh', message: 'A brand new quokka appears.' },
    });
    expect(posted.statusCode).toBe(201);
    expect(await subjects(q('quokka'))).toEqual(['Fresh']);
    const deleted = await board.app.inject({
      method: 'DELETE',
      url: `${API}/messages/${posted.json().uuid}`,
      headers: board.alice.auth,
    });
    expect(deleted.statusCode).toBe(204);
    expect(await subjects(q('quokka'))).toEqual([]);
  });

  it('answers an API key with the read scope', async () => {
    const key = await board.board.apiKeys.generate('alice', 'searcher', 'read');
    expect(await subjects(q('members'), { 'x-baud-api-key': key.key })).toEqual(['Members zeppelin']);
  });

  it('answers a word in thousands of messages like a rare one: newest first, filters applied', async () => {
    // More matches than PostgreSQL fetches from its GIN index up front (5,000): the other plan.
    await seedMessages(
      board,
      'general',
      Array.from({ length: 5010 }, (_, index) => ({
        subject: `Plenty ${index}`,
        body: 'plentiful words',
        from: index % 1000 === 0 ? 'Rare Poster' : 'Bulk',
      })),
    );
    const first = (await search(`${q('plentiful')}&limit=3`)).json() as FoundPage;
    expect(first.data.map((found) => found.subject)).toEqual(['Plenty 5009', 'Plenty 5008', 'Plenty 5007']);
    expect(await subjects(`${q('plentiful')}&from=rare%20poster`)).toEqual([
      'Plenty 5000',
      'Plenty 4000',
      'Plenty 3000',
      'Plenty 2000',
      'Plenty 1000',
      'Plenty 0',
    ]);
  });

  it('indexes on PostgreSQL exactly what to_tsvector would make of the same words (sent in binary)', async () => {
    if (dialect === 'sqlite') return; // SQLite's side: tokenisesAlikeInSqlite's property test
    const texts = [
      { subject: 'Café ÆRØ', body: `${ESC}[1;31mRed${ESC}[0m modem, modem; MODEM! 2400baud e-mail Straße` },
      { subject: '', body: '' },
      { subject: 'Repeats', body: 'echo '.repeat(300) },
      { subject: 'Long', body: Array.from({ length: 17_000 }, (_, index) => `w${index % 50}`).join(' ') },
      // mixЖword: a word whose UTF-8 starts as ASCII and is then written again whole.
      { subject: 'Скорость модема', body: 'ἀρχή 東京 한국어 ½ ² x² mixЖword' },
      { subject: 'Astral 𝒳 𝔸', body: `ｆｕｌｌ 🎉 modem🎉modem ${'a'.repeat(70)} ${'é'.repeat(70)} ǅ ẞ` },
    ];
    for (const text of texts) {
      const { rows } = await sql<{ same: boolean }>`
        SELECT ${postgresTsvector([text.subject, text.body])}::tsvector = to_tsvector('simple', ${indexText(stripAnsi(text.subject), stripAnsi(text.body))}) AS same`.execute(
        board.board.db,
      );
      expect(rows[0]?.same, text.subject).toBe(true);
    }
  });
});
