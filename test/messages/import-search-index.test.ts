import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { importMessages } from '../../src/messages/message-import.js';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, ESC, linesOf, type MessageTestBoard } from './message-fixture.js';

/** Texts that take every branch of the index's encoding: ASCII, ANSI, folding, scripts, long and repeated words. */
const TEXTS: readonly { readonly subject: string; readonly body: string }[] = [
  {
    subject: 'Plain modem talk',
    body: 'The quick brown fox jumps over the lazy dog while the modem sings at 2400 baud.',
  },
  { subject: `${ESC}[1;31mRed${ESC}[0m alert`, body: `${ESC}[5mBlinking${ESC}[0m modem, MODEM; modem! e-mail` },
  { subject: 'Café ÆRØ', body: 'Straße ẞ ǅ naïve façade — Скорость модема ἀρχή 東京 한국어 ½ ² x²' },
  { subject: 'Astral', body: '𝒳 𝔸 ｆｕｌｌ 🎉 modem🎉modem 😀' },
  { subject: 'Long words', body: `${'a'.repeat(70)} ${'é'.repeat(70)} ${'z9'.repeat(40)} short` },
  { subject: 'Repeats', body: 'echo '.repeat(300) },
  { subject: 'Many words', body: Array.from({ length: 17_000 }, (_, index) => `w${index % 50}`).join(' ') },
  { subject: 'x', body: '!!! ??? ...' },
];

describeEachDialect('search index of imported messages', (dialect) => {
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
  });
  afterAll(() => board.close());

  /** What the index holds of a message: PostgreSQL's tsvector, or every word FTS5 keeps with its place. */
  async function indexEntryOf(messageId: number): Promise<string> {
    if (dialect === 'postgres') {
      const { rows } = await sql<{ document: string }>`
        SELECT document::text AS document FROM message_search WHERE message_id = ${messageId}`.execute(board.board.db);
      return rows.map((row) => row.document).join('\n');
    }
    const { rows } = await sql<{ term: string; col: string; offset: number }>`
      SELECT term, col, "offset" FROM temp.message_search_words WHERE doc = ${messageId} ORDER BY col, "offset"`.execute(
      board.board.db,
    );
    return rows.map((row) => `${row.term}:${row.offset}`).join(' ');
  }

  const idsOf = async (areaTag: string) =>
    (
      await board.board.db.selectFrom('messages').select('id').where('areaTag', '=', areaTag).orderBy('id').execute()
    ).map((row) => row.id);

  const searchSubjects = async (areaTag: string, query: string) => {
    const response = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/search?q=${encodeURIComponent(query)}&areaTag=${areaTag}&limit=100`,
      headers: board.sysop.auth,
    });
    expect(response.statusCode).toBe(200);
    return (response.json().data as { subject: string }[]).map((found) => found.subject);
  };

  it('indexes every imported message exactly as the same message posted', async () => {
    if (dialect === 'sqlite') {
      await sql`CREATE VIRTUAL TABLE temp.message_search_words USING fts5vocab(main, 'message_search', 'instance')`.execute(
        board.board.db,
      );
    }
    // Batches of 3: the texts span several transactions and a batch of one.
    const lines = TEXTS.map((text) =>
      JSON.stringify({ from: 'Importer', subject: text.subject, body: text.body, timestamp: '2024-01-02T03:04:05Z' }),
    );
    expect(await importMessages(board.board, 'chatter', linesOf(lines), () => {}, { batchSize: 3 })).toEqual({
      imported: TEXTS.length,
    });
    for (const text of TEXTS) {
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/members/messages`,
        headers: board.alice.auth,
        payload: { subject: text.subject, message: text.body },
      });
      expect(response.statusCode, response.body).toBe(201);
    }

    const imported = await idsOf('chatter');
    const posted = await idsOf('members');
    expect(imported).toHaveLength(TEXTS.length);
    expect(posted).toHaveLength(TEXTS.length);
    for (const [index, text] of TEXTS.entries()) {
      const entry = await indexEntryOf(imported[index] as number);
      expect(entry, text.subject).not.toBe('');
      expect(entry, text.subject).toBe(await indexEntryOf(posted[index] as number));
    }
    for (const query of ['modem', '"lazy dog"', 'cafe', 'strasse', '東京', 'w49', 'a'.repeat(70), 'echo', 'red']) {
      const found = await searchSubjects('chatter', query);
      expect(found.length, query).toBeGreaterThan(0);
      expect(found, query).toEqual(await searchSubjects('members', query));
    }
  });

  it.runIf(dialect === 'postgres')(
    'leaves nothing in the GIN pending list, which every search would read in full',
    async () => {
      const lines = TEXTS.map((text) =>
        JSON.stringify({ from: 'Importer', subject: text.subject, body: text.body, timestamp: '2024-01-02T03:04:05Z' }),
      );
      await importMessages(board.board, 'chatter', linesOf(lines), () => {}, { batchSize: 3 });
      // gin_clean_pending_list answers how many pending pages it had to merge: none are left.
      const { rows } = await sql<{ merged: number }>`
      SELECT gin_clean_pending_list('message_search_document'::regclass) AS merged`.execute(board.board.db);
      expect(Number(rows[0]?.merged)).toBe(0);
    },
  );
});
