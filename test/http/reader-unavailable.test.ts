import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestBoard, type TestBoard } from '../support/test-board.js';

// An installation whose reader cannot be built (no sources, no build): every load fails.
vi.mock('../../src/reader/reader-assets.js', () => ({
  readerAssets: () => Promise.reject(new Error('web/src/main.tsx not found')),
}));

/** Issue 20: the reader is the API's client, not part of it — without it the node still serves the API. */
describe('a node whose web reader cannot be loaded', () => {
  let board: TestBoard;
  afterEach(async () => {
    await board.close();
  });

  it('starts, serves the API, answers / with 404 and says it serves no reader', async () => {
    board = await createTestBoard('sqlite');
    expect(board.app.servesReader).toBe(false);
    expect((await board.app.inject({ url: '/' })).statusCode).toBe(404);
    expect((await board.app.inject({ url: '/_baud/api/v1/system/info' })).statusCode).toBe(200);
  });
});
