import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMessageTestBoard, type MessageTestBoard } from '../messages/message-fixture.js';
import { describeEachDialect } from '../support/test-board.js';

const API = '/_baud/api/v1';

describeEachDialect('response headers', (dialect) => {
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
  });
  afterAll(() => board.close());

  const ANSWERS = [
    ['GET', `${API}/system/info`],
    ['GET', `${API}/messages/conferences`],
    ['GET', `${API}/messages/areas/members`],
    ['GET', `${API}/nowhere`],
    ['DELETE', `${API}/system/info`],
    ['GET', `${API}/openapi.json`],
    ['GET', `${API}/docs/`],
    ['POST', `${API}/auth/login`],
  ] as const;

  it.each(ANSWERS)('sends X-Content-Type-Options: nosniff on %s %s, whoever asks', async (method, url) => {
    for (const headers of [{}, board.alice.auth, { authorization: 'Bearer broken' }]) {
      const response = await board.app.inject({ method, url, headers });
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it.each([
    `${API}/system/info`,
    `${API}/messages/conferences`,
    `${API}/messages/areas/members`,
    `${API}/messages/areas/members/messages`,
    `${API}/users/me`,
    `${API}/users/alice`,
  ])('sends Cache-Control: no-store on GET %s to an authenticated caller', async (url) => {
    const response = await board.app.inject({ method: 'GET', url, headers: board.alice.auth });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it.each([
    ['GET', `${API}/nowhere`, { authorization: 'Bearer whatever' }],
    ['PATCH', `${API}/users/me`, { 'x-baud-api-key': 'baud_x' }],
    ['POST', `${API}/auth/logout`, {}],
    ['POST', `${API}/auth/refresh`, {}],
  ] as const)('sends no-store on %s %s, an answer about credentials', async (method, url, headers) => {
    const response = await board.app.inject({ method, url, headers });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('lets shared caches keep public answers to anonymous callers', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/messages/conferences` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=10');
  });

  it('sends no-store on errors answered to an authenticated caller', async () => {
    const response = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/secret`,
      headers: board.alice.auth,
    });
    expect(response.statusCode).toBe(403);
    expect(response.headers['cache-control']).toBe('no-store');
  });
});
