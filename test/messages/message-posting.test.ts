import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import { API, createMessageTestBoard, ESC, type MessageTestBoard, seedMessages, uuidsOf } from './message-fixture.js';

describeEachDialect('posting, reading and deleting messages', (dialect) => {
  let board: MessageTestBoard;
  const clock = fakeClock();
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect, clock);
  });
  afterAll(() => board.close());

  const post = (payload: unknown, who: { auth: { authorization: string } } = board.alice, areaTag = 'general') =>
    board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/${areaTag}/messages`,
      headers: who.auth,
      payload: payload as object,
    });
  const get = (url: string, who: { auth: { authorization: string } } = board.alice) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers: who.auth });
  const remove = (uuid: string, who: { auth: { authorization: string } }) =>
    board.app.inject({ method: 'DELETE', url: `${API}/messages/${uuid}`, headers: who.auth });
  const areaCounters = async (areaTag: string) => {
    const { messageCount, lastMessageAt } = (await get(`/messages/areas/${areaTag}`, board.sysop)).json();
    return { messageCount, lastMessageAt };
  };

  describe('POST /messages/areas/:areaTag/messages', () => {
    it('answers 201 with Location and the summary, counts the post and the area', async () => {
      const postCount = async () =>
        (
          await board.board.db
            .selectFrom('users')
            .select('postCount')
            .where('id', '=', board.alice.userId)
            .executeTakeFirstOrThrow()
        ).postCount;
      const before = await postCount();
      clock.set(new Date('2026-11-23T12:03:00.123Z'));
      const response = await post({ subject: '  Hello world  ', message: 'First!' });
      expect(response.statusCode).toBe(201);
      const summary = response.json();
      expect(summary).toEqual({
        messageId: expect.any(Number),
        uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        areaTag: 'general',
        replyToMessageId: null,
        toUserName: 'All',
        fromUserName: 'alice',
        subject: 'Hello world',
        timestamp: '2026-11-23T12:03:00.123Z',
      });
      expect(response.headers.location).toBe(`/_baud/api/v1/messages/${summary.uuid}`);
      expect(await postCount()).toBe(before + 1);
      expect(await areaCounters('general')).toEqual({ messageCount: 1, lastMessageAt: '2026-11-23T12:03:00.123Z' });

      const detail = await get(`/messages/${summary.uuid}`);
      expect(detail.statusCode).toBe(200);
      expect(detail.json()).toEqual({
        ...summary,
        body: 'First!',
        network: {},
        replyCount: 0,
        threadRootId: summary.messageId,
      });
    });

    it('appends the autoSignature after a blank line', async () => {
      await board.board.db
        .updateTable('users')
        .set({ autoSignature: '-- bob' })
        .where('id', '=', board.bob.userId)
        .execute();
      const response = await post({ subject: 'Signed', message: 'Hi all', toUserName: 'alice' }, board.bob);
      expect(response.statusCode).toBe(201);
      expect(response.json().toUserName).toBe('alice');
      const detail = await get(`/messages/${response.json().uuid}`);
      expect(detail.json().body).toBe('Hi all\n\n-- bob');
    });

    const accepted: [string, object][] = [
      ['a subject of 72 characters', { subject: 'x'.repeat(72) }],
      ['a subject of 72 four-byte code points', { subject: '😀'.repeat(72) }],
      ['a subject of 72 characters padded with spaces', { subject: `   ${'y'.repeat(72)}\t ` }],
      ['a message of exactly 64 KiB of UTF-8', { message: 'é'.repeat(32 * 1024) }],
      ['a toUserName of 36 characters', { toUserName: 'z'.repeat(36) }],
    ];
    for (const [name, change] of accepted) {
      it(`accepts ${name}`, async () => {
        const response = await post({ subject: 'Subject', message: 'Body', ...change });
        expect(response.statusCode).toBe(201);
      });
    }

    const rejected: [string, unknown, string][] = [
      ['a subject of 73 characters', { subject: 'x'.repeat(73), message: 'm' }, '/body/subject'],
      ['a subject of 73 four-byte code points', { subject: '😀'.repeat(73), message: 'm' }, '/body/subject'],
      ['a whitespace-only subject', { subject: ' \t\n ', message: 'm' }, '/body/subject'],
      ['an empty subject', { subject: '', message: 'm' }, '/body/subject'],
      ['a missing subject', { message: 'm' }, '/body/subject'],
      ['an empty message', { subject: 's', message: '' }, '/body/message'],
      ['a whitespace-only message', { subject: 's', message: ' \r\n ' }, '/body/message'],
      ['a missing message', { subject: 's' }, '/body/message'],
      ['a message of 64 KiB + 1 byte', { subject: 's', message: `${'é'.repeat(32 * 1024)}x` }, '/body/message'],
      ['a toUserName of 37 characters', { subject: 's', message: 'm', toUserName: 'z'.repeat(37) }, '/body/toUserName'],
      [
        'an unknown replyToMessageId',
        { subject: 's', message: 'm', replyToMessageId: 99_999_999 },
        '/body/replyToMessageId',
      ],
      [
        'a replyToMessageId beyond any messageId',
        { subject: 's', message: 'm', replyToMessageId: 2_147_483_648 },
        '/body/replyToMessageId',
      ],
      ['a subject with a NUL character', { subject: 'a\u0000b', message: 'm' }, '/body/subject'],
      ['a message with a NUL character', { subject: 's', message: 'a\u0000b' }, '/body/message'],
      ['a toUserName with a NUL character', { subject: 's', message: 'm', toUserName: 'a\u0000' }, '/body/toUserName'],
      ['a replyToMessageId of 0', { subject: 's', message: 'm', replyToMessageId: 0 }, '/body/replyToMessageId'],
      [
        'a replyToMessageId that is not a number',
        { subject: 's', message: 'm', replyToMessageId: 'abc' },
        '/body/replyToMessageId',
      ],
    ];
    for (const [name, payload, pointer] of rejected) {
      it(`rejects ${name} with 400 and no message stored`, async () => {
        const before = await areaCounters('general');
        const response = await post(payload);
        expect(response.statusCode).toBe(400);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        const body = response.json();
        expect(body).toMatchObject({ type: `${API}/errors/400`, title: 'Bad Request', status: 400 });
        expect(body.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
        expect(await areaCounters('general')).toEqual(before);
      });
    }

    it('rejects a body that is not JSON with 400', async () => {
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/general/messages`,
        headers: { ...board.alice.auth, 'content-type': 'application/json' },
        payload: '{"subject": ',
      });
      expect(response.statusCode).toBe(400);
    });

    it('links a reply to a message of the same area and counts it on the parent', async () => {
      const parent = (await post({ subject: 'Parent', message: 'p' })).json();
      const reply = await post({ subject: 'Re: Parent', message: 'r', replyToMessageId: parent.messageId }, board.bob);
      expect(reply.statusCode).toBe(201);
      expect(reply.json().replyToMessageId).toBe(parent.messageId);
      expect((await get(`/messages/${parent.uuid}`)).json().replyCount).toBe(1);
    });

    it('rejects a reply to a message of another area with 400', async () => {
      const elsewhere = (await post({ subject: 'Elsewhere', message: 'm' }, board.alice, 'members')).json();
      const response = await post({ subject: 'Re', message: 'r', replyToMessageId: elsewhere.messageId });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([
        { pointer: '/body/replyToMessageId', message: 'is not a message in this area' },
      ]);
    });

    it('rejects a reply to a deleted message with 400', async () => {
      const gone = (await post({ subject: 'Gone soon', message: 'm' })).json();
      expect((await remove(gone.uuid, board.alice)).statusCode).toBe(204);
      const response = await post({ subject: 'Re', message: 'r', replyToMessageId: gone.messageId });
      expect(response.statusCode).toBe(400);
    });
  });

  describe('GET /messages/:uuid', () => {
    it('rejects a malformed uuid with 400', async () => {
      const response = await get('/messages/not-a-uuid');
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].pointer).toBe('/path/uuid');
    });

    it('answers 404 for an unknown uuid', async () => {
      const response = await get('/messages/6f1c1a52-3d0b-4a8e-9a51-3f7c8f0f6a11');
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ type: `${API}/errors/404`, title: 'Not Found', status: 404 });
    });

    it('accepts the uuid in upper case', async () => {
      const message = (await post({ subject: 'Case', message: 'm' })).json();
      expect((await get(`/messages/${message.uuid.toUpperCase()}`)).statusCode).toBe(200);
    });

    it('shows imported FTN metadata as network', async () => {
      const ftn = { ftnMsgId: '1:2/3 abcd', ftnArea: 'FIDOTEST', ftnSeenBy: ['1/2', '1/3'], ftnPath: ['1/2'] };
      await seedMessages(board, 'chatter', [{ subject: 'From the net', ftn }]);
      const [uuid] = await uuidsOf(board, 'chatter');
      const detail = (await get(`/messages/${uuid}`)).json();
      expect(detail).toMatchObject({ subject: 'From the net', fromUserName: 'Seeder', network: ftn });
    });
  });

  describe('DELETE /messages/:uuid', () => {
    it('lets the author delete (204, no body), then answers 404, and keeps the counters right', async () => {
      await seedMessages(board, 'readonly', [{ timestamp: '2021-01-01T00:00:00.000Z' }]);
      // Access tokens live 15 minutes on this clock: move it only a little.
      clock.set(new Date('2026-11-23T12:07:00.000Z'));
      const own = (await post({ subject: 'Mine', message: 'm' }, board.sysop, 'readonly')).json();
      expect(await areaCounters('readonly')).toEqual({ messageCount: 2, lastMessageAt: '2026-11-23T12:07:00.000Z' });

      const response = await remove(own.uuid, board.sysop);
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(await areaCounters('readonly')).toEqual({ messageCount: 1, lastMessageAt: '2021-01-01T00:00:00.000Z' });
      expect((await get(`/messages/${own.uuid}`)).statusCode).toBe(404);
      expect((await remove(own.uuid, board.sysop)).statusCode).toBe(404);
      expect(await areaCounters('readonly')).toEqual({ messageCount: 1, lastMessageAt: '2021-01-01T00:00:00.000Z' });
    });

    it("refuses another user's message with 403 and lets the sysop delete it", async () => {
      const before = await areaCounters('general');
      clock.advance(60_000);
      const message = (await post({ subject: 'Alice says', message: 'm' })).json();
      expect(await areaCounters('general')).toEqual({
        messageCount: before.messageCount + 1,
        lastMessageAt: clock.now().toISOString(),
      });
      expect((await remove(message.uuid, board.bob)).statusCode).toBe(403);
      expect((await get(`/messages/${message.uuid}`)).statusCode).toBe(200);
      expect((await remove(message.uuid, board.alice)).statusCode).toBe(204);
      // The deleted message was the newest: lastMessageAt falls back to the one before it.
      expect(await areaCounters('general')).toEqual(before);
      const another = (await post({ subject: 'Alice again', message: 'm' })).json();
      expect((await remove(another.uuid, board.sysop)).statusCode).toBe(204);
    });

    it('ends the area at zero messages with no lastMessageAt', async () => {
      const only = (await post({ subject: 'Lonely', message: 'm' }, board.alice, 'chatter')).json();
      const [imported] = await uuidsOf(board, 'chatter');
      expect((await remove(imported ?? '', board.sysop)).statusCode).toBe(204);
      expect((await remove(only.uuid, board.alice)).statusCode).toBe(204);
      expect(await areaCounters('chatter')).toEqual({ messageCount: 0, lastMessageAt: null });
    });

    it('rejects a malformed uuid with 400 and answers 401 without a credential', async () => {
      expect((await remove('xyz', board.alice)).statusCode).toBe(400);
      const anonymous = await board.app.inject({
        method: 'DELETE',
        url: `${API}/messages/6f1c1a52-3d0b-4a8e-9a51-3f7c8f0f6a11`,
      });
      expect(anonymous.statusCode).toBe(401);
    });
  });

  describe('ANSI stripping', () => {
    const rawSubject = `${ESC}[1;31mRed${ESC}[0m |03Alert`;
    const rawBody = `Line ${ESC}[5mone${ESC}[0m\r\n|15Two\ttabs\u0007`;
    let uuid = '';
    beforeAll(async () => {
      const response = await post({ subject: rawSubject, message: rawBody }, board.alice, 'members');
      expect(response.statusCode).toBe(201);
      uuid = response.json().uuid;
    });

    it('strips escape sequences, pipe codes and control characters by default', async () => {
      const detail = (await get(`/messages/${uuid}`)).json();
      expect(detail.subject).toBe('Red Alert');
      expect(detail.body).toBe('Line one\r\nTwo\ttabs');
      const list = (await get('/messages/areas/members/messages?limit=100')).json();
      expect(list.data.find((message: { uuid: string }) => message.uuid === uuid).subject).toBe('Red Alert');
    });

    for (const value of ['false', '0']) {
      it(`returns the stored bytes with stripAnsi=${value}`, async () => {
        const detail = (await get(`/messages/${uuid}?stripAnsi=${value}`)).json();
        expect(detail.subject).toBe(rawSubject);
        expect(detail.body).toBe(rawBody);
        const list = (await get(`/messages/areas/members/messages?limit=100&stripAnsi=${value}`)).json();
        expect(list.data.find((message: { uuid: string }) => message.uuid === uuid).subject).toBe(rawSubject);
        const area = (await get(`/messages/areas/general?stripAnsi=${value}`)).json();
        expect(area.desc).toBe(`${ESC}[1;31mGeneral${ESC}[0m |03chat`);
        const conference = (await get(`/messages/conferences/main?stripAnsi=${value}`)).json();
        expect(conference.desc).toBe(`${ESC}[1;31mMain${ESC}[0m |03conference`);
        expect(conference.areas[0].desc).toBe(`${ESC}[1;31mGeneral${ESC}[0m |03chat`);
        const conferences = (await get(`/messages/conferences?stripAnsi=${value}`)).json();
        expect(conferences.data[0].desc).toBe(`${ESC}[1;31mMain${ESC}[0m |03conference`);
      });
    }

    it('strips conference and area descriptions with stripAnsi=true and =1', async () => {
      for (const value of ['true', '1']) {
        expect((await get(`/messages/areas/general?stripAnsi=${value}`)).json().desc).toBe('General chat');
        expect((await get(`/messages/conferences?stripAnsi=${value}`)).json().data[0].desc).toBe('Main conference');
      }
    });

    it('rejects stripAnsi=maybe on detail endpoints with 400', async () => {
      for (const url of [
        `/messages/${uuid}`,
        '/messages/areas/general',
        '/messages/conferences/main',
        '/messages/conferences',
      ]) {
        expect((await get(`${url}?stripAnsi=maybe`)).statusCode).toBe(400);
      }
    });
  });
});
