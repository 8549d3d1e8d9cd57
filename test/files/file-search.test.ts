import { afterAll, beforeAll, expect, it } from 'vitest';
import { API, createFileTestBoard, filePart, upload } from '../support/file-board.js';
import { describeEachDialect, type TestBoard } from '../support/test-board.js';

interface FoundFile {
  readonly fileId: number;
  readonly areaTag: string;
  readonly fileName: string;
  readonly snippet: string;
}

interface FoundPage {
  readonly data: FoundFile[];
  readonly meta: { readonly nextCursor: string | null };
}

/** beyond-v1.md "Reading: full-text search", for files: name, descriptions and hash tags. */
describeEachDialect('file search', (dialect) => {
  let board: TestBoard;
  let auth: Record<string, string>;
  let sysopAuth: Record<string, string>;

  const search = (query: string, headers: Record<string, string> = {}) =>
    board.app.inject({ method: 'GET', url: `${API}/files/search?${query}`, headers });
  const names = async (query: string, headers: Record<string, string> = {}) => {
    const response = await search(query, headers);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as FoundPage).data.map((found) => found.fileName);
  };
  const q = (text: string) => `q=${encodeURIComponent(text)}`;
  const store = async (areaTag: string, fileName: string, content: string, desc: string, hashTags = '') => {
    const response = await upload(
      board,
      areaTag,
      filePart(fileName, content, [
        { name: 'desc', value: desc },
        ...(hashTags ? [{ name: 'hashTags', value: hashTags }] : []),
      ]),
      sysopAuth,
    );
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { fileId: number };
  };

  beforeAll(async () => {
    board = await createFileTestBoard(dialect);
    auth = (await board.userWithToken('reader')).auth;
    sysopAuth = (await board.userWithToken('op', { groups: ['sysops'] })).auth;
    await store('public_files', 'modem_drivers-v2.zip', 'one', 'Drivers for the Courier modem', 'hardware');
    await store('public_files', 'ansi-art.zip', 'two', '\u001b[1;33mYellow\u001b[0m ANSI art pack', 'art, scene');
    await store('members', 'members-modem.txt', 'three', 'Members only modem notes');
    await store('sysop_only', 'secret-modem.txt', 'four', 'The sysop modem secrets');
  });
  afterAll(() => board.close());

  it('finds by name, description and hash tag in the areas the caller may browse, newest first', async () => {
    expect(await names(q('modem'))).toEqual(['modem_drivers-v2.zip']);
    expect(await names(q('modem'), auth)).toEqual(['members-modem.txt', 'modem_drivers-v2.zip']);
    // A sysop sees the sysop-only area; never an area nobody configured.
    expect(await names(q('modem'), sysopAuth)).toEqual([
      'secret-modem.txt',
      'members-modem.txt',
      'modem_drivers-v2.zip',
    ]);
    expect(await names(q('drivers v2'))).toEqual(['modem_drivers-v2.zip']);
    expect(await names(q('scene'))).toEqual(['ansi-art.zip']);
    expect(await names(q('yellow'))).toEqual(['ansi-art.zip']);
    const [art] = ((await search(q('ansi'))).json() as FoundPage).data;
    expect(art?.snippet).toBe('Yellow «ANSI» art pack');
  });

  it('never lets a hidden area change an answer', async () => {
    const before = await search(q('secrets OR modem'), auth);
    await store('sysop_only', 'more-secrets.txt', 'five', 'More modem secrets');
    const after = await search(q('secrets OR modem'), auth);
    expect(after.body).toBe(before.body);
  });

  it('filters by area glob and pages with cursors that never repeat or skip', async () => {
    expect(await names(`${q('modem')}&areaTag=mem*`, auth)).toEqual(['members-modem.txt']);
    for (let index = 0; index < 5; index += 1)
      await store('public_files', `page-${index}.txt`, `p${index}`, 'pageable');
    const first = (await search(`${q('pageable')}&limit=2`)).json() as FoundPage;
    const seen = [...first.data];
    let cursor = first.meta.nextCursor;
    while (cursor !== null) {
      const page = (await search(`${q('pageable')}&limit=2&cursor=${encodeURIComponent(cursor)}`)).json() as FoundPage;
      seen.push(...page.data);
      cursor = page.meta.nextCursor;
    }
    expect(seen.map((found) => found.fileName)).toEqual([
      'page-4.txt',
      'page-3.txt',
      'page-2.txt',
      'page-1.txt',
      'page-0.txt',
    ]);
  });

  it('sorts by relevance over name, descriptions and hash tags, paging without repeats', async () => {
    await store('public_files', 'otter-otter.txt', 'r1', 'otter otter otter', 'otter');
    await store('public_files', 'notes.txt', 'r2', 'A note about an otter');
    await store('public_files', 'river.txt', 'r3', 'Otter pictures from the river bank in the summer');
    expect(await names(`${q('otter')}&sort=relevance`)).toEqual(['otter-otter.txt', 'notes.txt', 'river.txt']);
    expect(await names(`${q('otter')}&sort=newest`)).toEqual(['river.txt', 'notes.txt', 'otter-otter.txt']);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = (await search(`${q('otter')}&sort=relevance&limit=1${after}`)).json() as FoundPage;
      walked.push(...page.data.map((found) => found.fileName));
      cursor = page.meta.nextCursor;
    } while (cursor !== null);
    expect(walked).toEqual(['otter-otter.txt', 'notes.txt', 'river.txt']);
  });

  it('refuses a bad query with 400, and forgets a removed file', async () => {
    for (const text of ['', '-modem', 'a'.repeat(257)]) {
      const response = await search(q(text));
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
    const gone = await store('public_files', 'gone.txt', 'six', 'A vanishing quokka');
    expect(await names(q('quokka'))).toEqual(['gone.txt']);
    await board.board.files.removeFile(gone.fileId);
    expect(await names(q('quokka'))).toEqual([]);
  });
});
