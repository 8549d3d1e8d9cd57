import { afterAll, beforeAll, expect, it } from 'vitest';
import { BAUD_VERSION } from '../../src/version.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

describeEachDialect('system routes', (dialect) => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: { general: { boardName: 'Test Board' } } });
  });
  afterAll(() => board.close());

  it('answers GET /system/info publicly with the board name and version', async () => {
    const response = await board.app.inject({ method: 'GET', url: '/_baud/api/v1/system/info' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = response.json();
    expect(body).toMatchObject({ boardName: 'Test Board', version: BAUD_VERSION, nodeCount: 0, closedSystem: false });
  });

  it('counts users in GET /system/stats', async () => {
    await board.userWithToken('alice');
    const response = await board.app.inject({ method: 'GET', url: '/_baud/api/v1/system/stats' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      totalUsers: 1,
      totalMessages: 0,
      totalFiles: 0,
      totalFileBytes: 0,
      totalCalls: 0,
      callsToday: 0,
    });
  });
});
