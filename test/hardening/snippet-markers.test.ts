import { afterAll, beforeAll, expect, it } from 'vitest';
import { API, MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
import { FILE_BASE_CONFIG, filePart, upload } from '../support/file-board.js';
import { createTestBoard, deepMerge, describeEachDialect, type TestBoard } from '../support/test-board.js';

/**
 * Snippets mark hits with `«` and `»`. A poster who writes those characters must not make words
 * look like hits: they come back as `‹` and `›`, so every `«…»` a client sees is a real hit.
 */
describeEachDialect('snippet markers written in the text', (dialect) => {
  let board: TestBoard;

  const snippets = async (url: string) => {
    const response = await board.app.inject({ method: 'GET', url: `${API}${url}` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { data: { snippet: string }[] }).data.map((found) => found.snippet);
  };

  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: deepMerge(MESSAGE_TEST_CONFIG, FILE_BASE_CONFIG) });
    const sysop = (await board.userWithToken('op', { groups: ['sysops'] })).auth;
    await seedMessages(board, 'general', [{ subject: 'Hello', body: 'Click «here» now» for the «free modem' }]);
    const stored = await upload(
      board,
      'public_files',
      filePart('modem.txt', 'x', [{ name: 'desc', value: '«FREE» modem «inside»' }]),
      sysop,
    );
    expect(stored.statusCode).toBe(201);
  });
  afterAll(() => board.close());

  it('marks only the hits of a message search', async () => {
    expect(await snippets('/messages/search?q=modem')).toEqual(['Click ‹here› now› for the ‹free «modem»']);
  });

  it('marks only the hits of a file search', async () => {
    expect(await snippets('/files/search?q=modem')).toEqual(['‹FREE› «modem» ‹inside›']);
  });
});
