import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_PREFIX, ENIGMA_API_PREFIX } from '../../src/http/api-prefix.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const API = API_PREFIX;
type Auth = { authorization: string };

/**
 * Private mail through the API (docs/api-notes.md "Private mail"): sending, boxes, reading,
 * read flags, deletion from one side, block lists, the limits and bad input.
 */
describeEachDialect('private mail', (dialect) => {
  let board: TestBoard;
  const clock = fakeClock();
  let alice: Auth;
  let bob: Auth;
  let carol: Auth;
  let sysop: Auth;

  const send = (auth: Auth | Record<string, string>, payload: object, url = `${API}/mail`) =>
    board.app.inject({ method: 'POST', url, headers: auth, payload });
  const get = (auth: Auth | Record<string, string>, url: string) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers: auth });
  const sendOk = async (from: Auth, payload: { to: string; subject: string; body: string; replyToUuid?: string }) => {
    const sent = await send(from, payload);
    expect(sent.statusCode).toBe(201);
    return sent.json<{ uuid: string; messageId: number }>();
  };
  const unreadMailOf = async (auth: Auth) => (await get(auth, '/users/me')).json<{ unreadMail: number }>().unreadMail;

  beforeAll(async () => {
    // With ENiGMA½'s prefix on: the compatibility test below.
    board = await createTestBoard(dialect, {
      clock,
      config: { contentServers: { web: { restApi: { enigmaCompat: true } } } },
    });
    alice = (await board.userWithToken('alice')).auth;
    bob = (await board.userWithToken('Bob')).auth;
    carol = (await board.userWithToken('carol')).auth;
    sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    await board.board.credentials.createAccount({
      username: 'applicant',
      password: 'correct horse battery',
      isPending: true,
    });
    await board.userWithToken('locked');
    await board.board.db
      .updateTable('users')
      .set({ disabledAt: clock.now().toISOString() })
      .where('usernameKey', '=', 'locked')
      .execute();
  });
  afterAll(async () => {
    await board?.close();
  });

  it('sends a mail: 201 with Location and the mail as GET shows it, to the recipient named in any case', async () => {
    const sent = await send(alice, { to: 'BOB', subject: 'Your binkd config', body: 'The node list is old.' });
    expect(sent.statusCode).toBe(201);
    const mail = sent.json();
    expect(sent.headers.location).toBe(`${API}/mail/${mail.uuid}`);
    expect(mail).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      messageId: expect.any(Number),
      from: 'alice',
      to: 'Bob',
      subject: 'Your binkd config',
      timestamp: clock.now().toISOString(),
      read: true,
      replyToUuid: null,
      body: 'The node list is old.',
    });
    const inbox = await get(bob, '/mail');
    expect(inbox.statusCode).toBe(200);
    const { body: _body, ...summary } = mail;
    expect(inbox.json()).toEqual({
      data: [{ ...summary, read: false }],
      meta: { count: 1, limit: 25, nextCursor: null },
      pagination: { next: null },
    });
    expect((await get(alice, '/mail?box=sent')).json().data).toEqual([summary]);
    expect((await get(alice, '/mail')).json().data).toEqual([]);
    expect((await get(alice, '/mail?box=sent&unread=true')).json().data).toEqual([]);
    expect((await get(bob, `/mail/${mail.uuid}`)).json()).toEqual({ ...mail, read: false });
    expect((await get(alice, `/mail/${mail.uuid}`)).json()).toEqual(mail);
    expect(await unreadMailOf(bob)).toBe(1);
    expect(await unreadMailOf(alice)).toBe(0);
  });

  it('answers a mail that is not yours exactly as an unknown uuid, sysops included', async () => {
    const { uuid } = await sendOk(alice, { to: 'bob', subject: 'Private', body: 'Just us.' });
    const unknown = '0193a1c2-7d4e-7c3b-9f1a-2b3c4d5e6f70';
    for (const who of [carol, sysop]) {
      for (const [method, payload] of [
        ['GET', undefined],
        ['PATCH', { read: true }],
        ['DELETE', undefined],
      ] as const) {
        const answers = await Promise.all(
          [uuid, unknown].map((id) =>
            board.app.inject({ method, url: `${API}/mail/${id}`, headers: who, ...(payload ? { payload } : {}) }),
          ),
        );
        const [theirs, none] = answers.map((answer) => ({
          status: answer.statusCode,
          type: answer.headers['content-type'],
          body: answer.json(),
        }));
        expect(theirs?.status).toBe(404);
        expect(theirs?.body.code).toBe('mail.not-found');
        expect({ ...theirs, body: { ...theirs?.body, detail: '', instance: '' } }).toEqual({
          ...none,
          body: { ...none?.body, detail: '', instance: '' },
        });
        expect(theirs?.body.detail).toBe(`No mail ${uuid}.`);
      }
    }
    expect((await get(bob, `/mail/${uuid}`)).statusCode).toBe(200);
  });

  it('marks read for the recipient only; unreadMail follows every change exactly once', async () => {
    const { uuid } = await sendOk(carol, { to: 'bob', subject: 'Flags', body: 'Read me.' });
    const before = await unreadMailOf(bob);
    const patch = (auth: Auth, read: boolean) =>
      board.app.inject({ method: 'PATCH', url: `${API}/mail/${uuid}`, headers: auth, payload: { read } });
    const read = await patch(bob, true);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ uuid, read: true, body: 'Read me.' });
    expect(await unreadMailOf(bob)).toBe(before - 1);
    expect((await patch(bob, true)).statusCode).toBe(200);
    expect(await unreadMailOf(bob)).toBe(before - 1);
    expect((await patch(carol, true)).statusCode).toBe(404);
    expect((await patch(bob, false)).json()).toMatchObject({ read: false });
    expect(await unreadMailOf(bob)).toBe(before);
    expect((await get(bob, '/mail?unread=true')).json().data.map((mail: { uuid: string }) => mail.uuid)).toContain(
      uuid,
    );
    await patch(bob, true);
    expect((await get(bob, '/mail?unread=1')).json().data.map((mail: { uuid: string }) => mail.uuid)).not.toContain(
      uuid,
    );
  });

  it('deletes from the caller’s box only: the other party keeps the mail', async () => {
    const { uuid } = await sendOk(alice, { to: 'carol', subject: 'Delete me', body: 'Gone for you.' });
    expect(await unreadMailOf(carol)).toBe(1);
    const deleted = await board.app.inject({ method: 'DELETE', url: `${API}/mail/${uuid}`, headers: carol });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect(await unreadMailOf(carol)).toBe(0);
    expect((await get(carol, `/mail/${uuid}`)).statusCode).toBe(404);
    expect((await board.app.inject({ method: 'DELETE', url: `${API}/mail/${uuid}`, headers: carol })).statusCode).toBe(
      404,
    );
    expect((await get(alice, `/mail/${uuid}`)).statusCode).toBe(200);
    expect((await get(alice, '/mail?box=sent')).json().data.map((mail: { uuid: string }) => mail.uuid)).toContain(uuid);
    const row = () =>
      board.board.db
        .selectFrom('messages')
        .select(['subject', 'body', 'deletedAt'])
        .where('uuid', '=', uuid)
        .executeTakeFirstOrThrow();
    expect(await row()).toEqual({ subject: 'Delete me', body: 'Gone for you.', deletedAt: null });
    // Once nobody holds it, its text leaves the database's row and the search index.
    expect((await board.app.inject({ method: 'DELETE', url: `${API}/mail/${uuid}`, headers: alice })).statusCode).toBe(
      204,
    );
    expect(await row()).toEqual({ subject: '', body: '', deletedAt: clock.now().toISOString() });
    expect((await get(alice, `/mail/${uuid}`)).statusCode).toBe(404);
  });

  it('refuses unknown, pending and locked recipients with one answer', async () => {
    const answers = await Promise.all(
      ['nobody', 'applicant', 'locked'].map((to) => send(alice, { to, subject: 'Hi', body: 'Hello' })),
    );
    for (const [index, answer] of answers.entries()) {
      const to = ['nobody', 'applicant', 'locked'][index];
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toMatchObject({
        code: 'mail.recipient-not-found',
        status: 404,
        detail: `No user can receive mail as "${to}".`,
      });
    }
  });

  it('applies the message rules to subject and body, and refuses unknown fields', async () => {
    const cases: [object, string, string][] = [
      [{ to: 'bob', subject: 'x'.repeat(73), body: 'b' }, '/body/subject', 'must be at most 72 characters'],
      [{ to: 'bob', subject: '   ', body: 'b' }, '/body/subject', 'must not be empty'],
      [{ to: 'bob', subject: 's', body: '  \n ' }, '/body/body', 'must not be empty'],
      [{ to: 'bob', subject: 's', body: 'a\u0000b' }, '/body/body', 'must not contain NUL characters'],
      [
        { to: 'bob', subject: 's', body: 'x'.repeat(64 * 1024 + 1) },
        '/body/body',
        'must be at most 65536 bytes of UTF-8',
      ],
    ];
    for (const [payload, pointer, message] of cases) {
      const answer = await send(alice, payload);
      expect(answer.statusCode).toBe(400);
      expect(answer.json().errors).toEqual([{ pointer, message }]);
    }
    expect((await send(alice, { to: 'bob', subject: 's', body: 'b', cc: 'carol' })).statusCode).toBe(400);
    const ansi = await sendOk(alice, {
      to: 'bob',
      subject: 'Art \u001b[1;35mpreview\u001b[0m',
      body: '|07Hi \u001b[1mthere',
    });
    expect((await get(bob, `/mail/${ansi.uuid}`)).json()).toMatchObject({ subject: 'Art preview', body: 'Hi there' });
    expect((await get(bob, `/mail/${ansi.uuid}?stripAnsi=false`)).json()).toMatchObject({
      subject: 'Art \u001b[1;35mpreview\u001b[0m',
      body: '|07Hi \u001b[1mthere',
    });
  });

  it('links replies to a mail the sender holds, and refuses any other reply target', async () => {
    const first = await sendOk(alice, { to: 'bob', subject: 'Question', body: 'Well?' });
    const reply = await sendOk(bob, { to: 'alice', subject: 'Re: Question', body: 'Yes.', replyToUuid: first.uuid });
    expect((await get(alice, `/mail/${reply.uuid}`)).json()).toMatchObject({ replyToUuid: first.uuid });
    const stranger = await send(carol, { to: 'alice', subject: 'Re', body: 'Me too', replyToUuid: first.uuid });
    expect(stranger.statusCode).toBe(400);
    expect(stranger.json()).toMatchObject({
      code: 'mail.invalid-reply-target',
      errors: [{ pointer: '/body/replyToUuid', message: 'is not a mail of yours' }],
    });
  });

  it('refuses a blocked sender with 403, keeps the older mail, and lists and lifts blocks', async () => {
    const older = await sendOk(carol, { to: 'alice', subject: 'Before', body: 'Still here.' });
    const put = await board.app.inject({ method: 'PUT', url: `${API}/users/me/blocked/CAROL`, headers: alice });
    expect(put.statusCode).toBe(204);
    expect(
      (await board.app.inject({ method: 'PUT', url: `${API}/users/me/blocked/carol`, headers: alice })).statusCode,
    ).toBe(204);
    const refused = await send(carol, { to: 'alice', subject: 'After', body: 'Refused.' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'mail.sender-blocked' });
    expect((await get(alice, `/mail/${older.uuid}`)).statusCode).toBe(200);
    const list = await get(alice, '/users/me/blocked');
    expect(list.json()).toEqual({
      data: [{ username: 'carol', blockedAt: clock.now().toISOString() }],
      meta: { count: 1, limit: 25, nextCursor: null },
      pagination: { next: null },
    });
    expect((await get(carol, '/users/me/blocked')).json().data).toEqual([]);
    for (const name of ['nobody', 'applicant']) {
      const unknown = await board.app.inject({ method: 'PUT', url: `${API}/users/me/blocked/${name}`, headers: alice });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().code).toBe('user.not-found');
    }
    const self = await board.app.inject({ method: 'PUT', url: `${API}/users/me/blocked/alice`, headers: alice });
    expect(self.statusCode).toBe(400);
    expect(self.json().code).toBe('mail.cannot-block-self');
    const lifted = await board.app.inject({ method: 'DELETE', url: `${API}/users/me/blocked/carol`, headers: alice });
    expect(lifted.statusCode).toBe(204);
    expect((await send(carol, { to: 'alice', subject: 'After', body: 'Welcome back.' })).statusCode).toBe(201);
  });

  it('pages a box newest first with cursors that belong to their box', async () => {
    await board.userWithToken('dave');
    const uuids: string[] = [];
    for (let n = 0; n < 5; n += 1)
      uuids.push((await sendOk(carol, { to: 'dave', subject: `Mail ${n}`, body: 'b' })).uuid);
    const first = await get(carol, '/mail?box=sent&limit=2');
    const sentUuids: string[] = first.json().data.map((mail: { uuid: string }) => mail.uuid);
    expect(sentUuids).toEqual([uuids[4], uuids[3]]);
    const next = first.json().meta.nextCursor as string;
    expect(first.headers.link).toBe(`<${API}/mail?box=sent&limit=2&cursor=${encodeURIComponent(next)}>; rel="next"`);
    const second = await get(carol, `/mail?box=sent&limit=2&cursor=${encodeURIComponent(next)}`);
    expect(second.json().data.map((mail: { uuid: string }) => mail.uuid)).toEqual([uuids[2], uuids[1]]);
    const wrongBox = await get(carol, `/mail?box=inbox&limit=2&cursor=${encodeURIComponent(next)}`);
    expect(wrongBox.statusCode).toBe(400);
    expect(wrongBox.json().code).toBe('request.invalid-cursor');
  });

  it('counts 30 mails per sender per 10 minutes in the database: the 31st is a 429 with Retry-After', async () => {
    const { auth: erin } = await board.userWithToken('erin');
    clock.advance(60_000);
    for (let n = 0; n < 30; n += 1) await sendOk(erin, { to: 'bob', subject: `Flood ${n}`, body: 'b' });
    clock.advance(90_000);
    const refused = await send(erin, { to: 'bob', subject: 'One more', body: 'b' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('510');
    expect(refused.json()).toMatchObject({ code: 'mail.too-many', status: 429 });
    const window = await board.board.db
      .selectFrom('loginAttempts')
      .select('attemptCount')
      .where('subject', 'like', 'mail:%')
      .where('attemptCount', '=', 30)
      .execute();
    expect(window).toHaveLength(1);
    clock.advance(510_000);
    expect((await send(erin, { to: 'bob', subject: 'Next window', body: 'b' })).statusCode).toBe(201);
  });

  it('needs the write scope of an API key to send, and a credential for everything', async () => {
    const readKey = (await board.board.apiKeys.generate('alice', 'reader', 'read')).key;
    const writeKey = (await board.board.apiKeys.generate('alice', 'writer', 'read,write')).key;
    const payload = { to: 'bob', subject: 'By key', body: 'b' };
    const refused = await send({ 'x-baud-api-key': readKey }, payload);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('auth.scope-insufficient');
    expect((await send({ 'x-baud-api-key': writeKey }, payload)).statusCode).toBe(201);
    expect((await get({ 'x-baud-api-key': readKey }, '/mail?box=sent')).statusCode).toBe(200);
    for (const [method, url] of [
      ['POST', '/mail'],
      ['GET', '/mail'],
      ['GET', '/mail/search?q=x'],
      ['GET', '/mail/0193a1c2-7d4e-7c3b-9f1a-2b3c4d5e6f70'],
      ['GET', '/users/me/blocked'],
    ] as const) {
      const anonymous = await board.app.inject({
        method,
        url: `${API}${url}`,
        ...(method === 'POST' ? { payload } : {}),
      });
      expect(anonymous.statusCode).toBe(401);
    }
  });

  it('serves the same under the ENiGMA½ compatibility prefix', async () => {
    const sent = await send(alice, { to: 'bob', subject: 'Compat', body: 'Same mail.' }, `${ENIGMA_API_PREFIX}/mail`);
    expect(sent.statusCode).toBe(201);
    expect(sent.headers.location).toBe(`${ENIGMA_API_PREFIX}/mail/${sent.json().uuid}`);
    const read = await board.app.inject({
      method: 'GET',
      url: `${ENIGMA_API_PREFIX}/mail/${sent.json().uuid}`,
      headers: bob,
    });
    expect(read.json()).toEqual({ ...sent.json(), read: false });
  });

  it('searches the caller’s own mail only, with the search grammar', async () => {
    await sendOk(alice, { to: 'bob', subject: 'Zeppelin plans', body: 'The zeppelin leaves at noon.' });
    await sendOk(carol, { to: 'sysop', subject: 'Zeppelin too', body: 'Another zeppelin.' });
    const found = await get(bob, '/mail/search?q=zeppelin');
    expect(found.statusCode).toBe(200);
    expect(found.json().data).toEqual([
      expect.objectContaining({
        from: 'alice',
        subject: 'Zeppelin plans',
        snippet: expect.stringContaining('«zeppelin»'),
      }),
    ]);
    expect((await get(alice, '/mail/search?q=zeppelin')).json().data).toHaveLength(1);
    expect((await get(carol, '/mail/search?q=zeppelin AND plans')).json().data).toEqual([]);
    expect((await get(bob, '/mail/search?q=')).statusCode).toBe(400);
    const quokkas: string[] = [];
    for (let n = 0; n < 3; n += 1)
      quokkas.push((await sendOk(alice, { to: 'bob', subject: `Quokka ${n}`, body: 'b' })).uuid);
    const first = await get(bob, '/mail/search?q=quokka&limit=2');
    expect(first.json().data.map((mail: { uuid: string }) => mail.uuid)).toEqual([quokkas[2], quokkas[1]]);
    const cursor = encodeURIComponent(first.json().meta.nextCursor);
    const second = await get(bob, `/mail/search?q=quokka&limit=2&cursor=${cursor}`);
    expect(second.json().data.map((mail: { uuid: string }) => mail.uuid)).toEqual([quokkas[0]]);
    expect(second.json().meta.nextCursor).toBeNull();
    expect((await get(bob, `/mail/search?q=zeppelin&limit=2&cursor=${cursor}`)).statusCode).toBe(400);
  });

  it("clears a sender's window once it is over, at most once a minute per node, on someone's next send", async () => {
    const { auth: fay, userId: fayId } = await board.userWithToken('fay');
    const { auth: gus } = await board.userWithToken('gus');
    const windowOf = (userId: number) =>
      board.board.db.selectFrom('loginAttempts').select('subject').where('subject', '=', `mail:${userId}`).execute();
    // Last in the file: the clock moves past the access tokens of the tests above.
    clock.advance(60_000);
    await sendOk(fay, { to: 'bob', subject: 'Once', body: 'b' });
    expect(await windowOf(fayId)).toHaveLength(1);
    // Fay's window is over; Gus's send clears it (the last clearing was more than a minute ago).
    clock.advance(601_000);
    await sendOk(gus, { to: 'bob', subject: 'Later', body: 'b' });
    expect(await windowOf(fayId)).toEqual([]);
  });
});
