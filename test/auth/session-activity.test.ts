import { afterAll, beforeAll, expect, it } from 'vitest';
import { actionOf } from '../../src/http/session-activity.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { API, bearer, login, PASSWORD } from './auth-helpers.js';

const MINUTE = 60_000;

it.each([
  ['/_baud/api/v1/messages/areas/:areaTag/messages', 'GET', 'Reading messages'],
  ['/_baud/api/v1/messages/areas/:areaTag/messages', 'POST', 'Writing messages'],
  ['/_baud/api/v1/files/areas', 'GET', 'Browsing files'],
  ['/_baud/api/v1/files/:fileId/download', 'GET', 'Downloading files'],
  ['/_baud/api/v1/files/areas/:areaTag', 'POST', 'Uploading files'],
  ['/_baud/api/v1/users/:username', 'GET', 'Viewing profiles'],
  ['/_baud/api/v1/users/me', 'PUT', 'Editing profile'],
  ['/_baud/api/v1/system/info', 'GET', 'Reading board information'],
  ['/_baud/api/v1/openapi.json', 'GET', 'Using the API'],
])('names the action of %s %s', (url, method, action) => {
  expect(actionOf(url, method)).toBe(action);
});

describeEachDialect('session activity', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
  });
  afterAll(() => board.close());

  const family = () => board.board.db.selectFrom('refreshFamilies').selectAll().executeTakeFirstOrThrow();
  const minutesOnline = async () =>
    (await board.board.db.selectFrom('users').select('minutesOnline').executeTakeFirstOrThrow()).minutesOnline;

  it('writes at most once a minute and counts only gaps inside the active window', async () => {
    const { accessToken } = await login(board, 'alice');
    const me = () => board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bearer(accessToken) });
    const loggedInAt = (await family()).lastActivityAt;

    clock.advance(30_000);
    await me();
    expect((await family()).lastActivityAt).toBe(loggedInAt); // under a minute: no write
    expect((await family()).lastAction).toBe('Logging in');

    clock.advance(3 * MINUTE);
    await me();
    expect(await family()).toMatchObject({ lastActivityAt: clock.now().toISOString(), lastAction: 'Viewing profiles' });
    expect(await minutesOnline()).toBe(4); // 3.5 minutes, rounded

    clock.advance(10 * MINUTE);
    const { accessToken: fresh } = await board.board.accessTokens.issue({ userId: 1, sessionId: (await family()).id });
    clock.advance(4 * MINUTE);
    const stats = await board.app.inject({ method: 'GET', url: `${API}/system/stats`, headers: bearer(fresh) });
    expect(stats.statusCode).toBe(200);
    expect(await minutesOnline()).toBe(18);
    expect((await family()).lastAction).toBe('Reading board information');
  });

  it('does not count a gap longer than the active window', async () => {
    const before = await minutesOnline();
    clock.advance(16 * MINUTE);
    const { accessToken } = await board.board.accessTokens.issue({ userId: 1, sessionId: (await family()).id });
    const response = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bearer(accessToken) });
    expect(response.statusCode).toBe(200);
    expect(await minutesOnline()).toBe(before);
    expect((await family()).lastActivityAt).toBe(clock.now().toISOString());
  });

  it('ignores API key callers', async () => {
    const { key } = await board.board.apiKeys.generate('alice', 'bot', 'read');
    const before = await family();
    clock.advance(5 * MINUTE);
    await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: { 'x-baud-api-key': key } });
    expect(await family()).toEqual(before);
  });
});
