import { afterAll, beforeAll, expect, it } from 'vitest';
import { CALLER_CACHE_MAX_AGE_MS } from '../../src/auth/caller-service.js';
import { API, bearer, login, PASSWORD, refresh } from '../auth/auth-helpers.js';
import {
  createTestBoard,
  describeEachDialect,
  fakeClock,
  type TestBoard,
  twoNodesOfOneBoard,
} from '../support/test-board.js';

describeEachDialect("the sysop's desk", (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  let sysop: Record<string, string>;
  let member: Record<string, string>;
  let sysopId: number;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    const made = await board.userWithToken('sysop', { groups: ['sysops'] });
    sysop = made.auth;
    sysopId = made.userId;
    member = (await board.userWithToken('member')).auth;
  });
  afterAll(() => board.close());

  const apply = (username: string) =>
    board.app.inject({ method: 'POST', url: `${API}/auth/register`, payload: { username, password: PASSWORD } });
  const desk = (method: 'GET' | 'POST' | 'PUT', path: string, headers: Record<string, string>, payload?: object) =>
    board.app.inject({ method, url: `${API}/admin${path}`, headers, ...(payload ? { payload } : {}) });

  it('answers anonymous callers 401 and members 403, alike for names that exist and names that do not', async () => {
    await apply('hopeful');
    for (const name of ['hopeful', 'nobody-such']) {
      expect((await desk('POST', `/users/${name}/approve`, {})).statusCode).toBe(401);
      const refused = await desk('POST', `/users/${name}/approve`, member);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().detail).toBe('Only sysops work the desk.');
    }
    expect((await desk('GET', '/users', member)).statusCode).toBe(403);
    expect((await desk('GET', '/audit', member)).statusCode).toBe(403);
    const readKey = await board.board.apiKeys.generate('sysop', 'reader', 'read');
    expect((await desk('POST', '/users/hopeful/approve', { 'x-baud-api-key': readKey.key })).statusCode).toBe(403);
    expect((await desk('GET', '/users?status=pending', { 'x-baud-api-key': readKey.key })).statusCode).toBe(200);
  });

  it('lists accounts by userId with status and name filters, paged by a cursor that belongs to its filter', async () => {
    await apply('hopeful2');
    await apply('other');
    const pending = await desk('GET', '/users?status=pending&q=HOPE&limit=1', sysop);
    expect(pending.statusCode).toBe(200);
    expect(pending.json().data).toEqual([
      {
        userId: expect.any(Number),
        username: 'hopeful',
        status: 'pending',
        groups: [],
        email: null,
        createdAt: clock.now().toISOString(),
        lastLoginAt: null,
        totpEnabled: false,
        note: null,
      },
    ]);
    const next = pending.json().meta.nextCursor as string;
    const second = await desk('GET', `/users?status=pending&q=HOPE&limit=1&cursor=${next}`, sysop);
    expect(second.json().data.map((account: { username: string }) => account.username)).toEqual(['hopeful2']);
    expect(second.json().meta.nextCursor).toBeNull();
    expect((await desk('GET', `/users?status=active&limit=1&cursor=${next}`, sysop)).statusCode).toBe(400);
    expect((await desk('GET', '/users?status=sleeping', sysop)).statusCode).toBe(400);
    const active = await desk('GET', '/users?status=active', sysop);
    expect(active.json().data.map((account: { username: string }) => account.username)).toEqual(['sysop', 'member']);
  });

  it('approves an application once: active, in users.defaultGroups, able to log in; again → 409', async () => {
    const approved = await desk('POST', '/users/HOPEFUL/approve', sysop);
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ username: 'hopeful', status: 'active', groups: ['users'] });
    expect((await desk('POST', '/users/hopeful/approve', sysop)).statusCode).toBe(409);
    expect((await login(board, 'hopeful')).response.statusCode).toBe(200);
    expect((await desk('POST', '/users/nobody-such/approve', sysop)).statusCode).toBe(404);
  });

  it('rejects an application by deleting it (the name is free again); an active account → 409', async () => {
    expect((await desk('POST', '/users/other/reject', sysop)).statusCode).toBe(204);
    expect((await apply('other')).statusCode).toBe(202);
    expect((await desk('POST', '/users/member/reject', sysop)).statusCode).toBe(409);
  });

  it('gives one of racing approvals and rejections of one application the win, and leaves one state', async () => {
    await apply('contested');
    const answers = await Promise.all([
      desk('POST', '/users/contested/approve', sysop),
      desk('POST', '/users/contested/reject', sysop),
      desk('POST', '/users/contested/approve', sysop),
    ]);
    const statuses = answers.map((answer) => answer.statusCode);
    const row = await board.board.db
      .selectFrom('users')
      .selectAll()
      .where('usernameKey', '=', 'contested')
      .executeTakeFirst();
    if (statuses.includes(204)) {
      expect(statuses.sort()).toEqual([204, 404, 404]);
      expect(row).toBeUndefined();
    } else {
      expect(statuses.sort()).toEqual([200, 409, 409]);
      expect(row?.isPending).toBe(0);
    }
    const audited = await board.board.db
      .selectFrom('auditLog')
      .select('action')
      .where('target', '=', 'contested')
      .execute();
    const decided = statuses.includes(204) ? 'user.rejected' : 'user.approved';
    expect(audited.map((entry) => entry.action).sort()).toEqual([decided, 'user.registered'].sort());
  });

  it('locks an account: every session ends at once, login and refresh fail, API keys stop; unlocking lets it log in again', async () => {
    await board.board.credentials.createAccount({ username: 'troll', password: PASSWORD });
    const session = await login(board, 'troll');
    const key = await board.board.apiKeys.generate('troll', 'bot', 'read');
    const locked = await desk('POST', '/users/troll/lock', sysop);
    expect(locked.statusCode).toBe(200);
    expect(locked.json().status).toBe('locked');
    expect(
      (await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bearer(session.accessToken) }))
        .statusCode,
    ).toBe(401);
    expect((await refresh(board, session.refreshToken)).statusCode).toBe(401);
    expect((await login(board, 'troll')).response.statusCode).toBe(401);
    expect(
      (await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: { 'x-baud-api-key': key.key } }))
        .statusCode,
    ).toBe(401);
    expect((await desk('POST', '/users/troll/lock', sysop)).statusCode).toBe(200);
    expect((await desk('POST', '/users/troll/unlock', sysop)).json().status).toBe('active');
    expect((await refresh(board, session.refreshToken)).statusCode).toBe(401);
    expect((await login(board, 'troll')).response.statusCode).toBe(200);
  });

  it('refuses to let a sysop lock themself (409)', async () => {
    const answer = await desk('POST', '/users/SYSOP/lock', sysop);
    expect(answer.statusCode).toBe(409);
    expect(
      (await board.board.db.selectFrom('users').select('disabledAt').where('id', '=', sysopId).executeTakeFirst())
        ?.disabledAt,
    ).toBeNull();
  });

  it('sets groups exactly; a bad group name is a 400 and changes nothing', async () => {
    const set = await desk('PUT', '/users/member/groups', sysop, { groups: ['users', 'cosysops', 'users'] });
    expect(set.statusCode).toBe(200);
    expect(set.json().groups).toEqual(['cosysops', 'users']);
    expect((await desk('PUT', '/users/member/groups', sysop, { groups: ['bad group'] })).statusCode).toBe(400);
    expect((await board.board.users.getUser('member')).groups).toEqual(['cosysops', 'users']);
  });

  it('keeps the audit log newest first: who, when, what', async () => {
    const first = await desk('GET', '/audit?limit=2', sysop);
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toEqual([
      {
        id: expect.any(Number),
        at: clock.now().toISOString(),
        actor: 'sysop',
        action: 'user.groups-changed',
        target: 'member',
        detail: 'groups: cosysops, users',
      },
      expect.objectContaining({ actor: 'sysop', action: 'user.unlocked', target: 'troll' }),
    ]);
    const rest = await desk('GET', `/audit?cursor=${first.json().meta.nextCursor}`, sysop);
    expect(rest.json().data.map((entry: { action: string }) => entry.action)).toContain('user.locked');
    // The second lock changed nothing, so it left no entry.
    const locks = rest
      .json()
      .data.filter((entry: { action: string; target: string }) => entry.action === 'user.locked');
    expect(locks).toHaveLength(1);
  });
});

describeEachDialect('a lock across nodes', (dialect) => {
  const clock = fakeClock();
  const nodes = twoNodesOfOneBoard(dialect, clock);

  it('ends on node B a session a lock on node A ended, within the caller cache bound', async () => {
    const { auth: sysop } = await nodes.nodeA.userWithToken('sysop', { groups: ['sysops'] });
    await nodes.nodeA.board.credentials.createAccount({ username: 'roamer', password: PASSWORD });
    const onB = await nodes.nodeB.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'roamer', password: PASSWORD },
    });
    const headers = bearer(onB.json().accessToken);
    const me = () => nodes.nodeB.inject({ method: 'GET', url: `${API}/users/me`, headers });
    expect((await me()).statusCode).toBe(200);
    expect(
      (await nodes.nodeA.app.inject({ method: 'POST', url: `${API}/admin/users/roamer/lock`, headers: sysop }))
        .statusCode,
    ).toBe(200);
    clock.advance(CALLER_CACHE_MAX_AGE_MS);
    expect((await me()).statusCode).toBe(401);
    const refreshOnB = await nodes.nodeB.inject({
      method: 'POST',
      url: `${API}/auth/refresh`,
      cookies: { baud_refresh: onB.cookies.find((cookie) => cookie.name === 'baud_refresh')?.value ?? '' },
    });
    expect(refreshOnB.statusCode).toBe(401);
  });
});
