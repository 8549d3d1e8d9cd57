import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadPlaceOf } from '../../src/messages/message-thread.js';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages, uuidsOf } from './message-fixture.js';

type Who = 'anonymous' | 'user' | 'sysop';
const WHO: readonly Who[] = ['anonymous', 'user', 'sysop'];

/** Expected status per area for each caller; the blocked/unknown areas are 404 whoever asks. */
const READ: Record<string, Record<Who, number>> = {
  general: { anonymous: 200, user: 200, sysop: 200 },
  members: { anonymous: 401, user: 200, sysop: 200 },
  secret: { anonymous: 401, user: 403, sysop: 403 },
  private_mail: { anonymous: 404, user: 404, sysop: 404 },
  activitypub_shared: { anonymous: 404, user: 404, sysop: 404 },
  nowhere: { anonymous: 404, user: 404, sysop: 404 },
};
const POST: Record<string, Record<Who, number>> = {
  general: { anonymous: 401, user: 201, sysop: 201 },
  members: { anonymous: 401, user: 201, sysop: 201 },
  secret: { anonymous: 401, user: 403, sysop: 403 },
  readonly: { anonymous: 401, user: 403, sysop: 201 },
  private_mail: { anonymous: 404, user: 404, sysop: 404 },
  activitypub_shared: { anonymous: 404, user: 404, sysop: 404 },
  nowhere: { anonymous: 404, user: 404, sysop: 404 },
};
/** Deleting someone else's message (imported: no owner). DELETE needs a credential first. */
const DELETE: Record<string, Record<Who, number>> = {
  general: { anonymous: 401, user: 403, sysop: 204 },
  members: { anonymous: 401, user: 403, sysop: 204 },
  secret: { anonymous: 401, user: 403, sysop: 403 },
  private_mail: { anonymous: 401, user: 404, sysop: 404 },
  activitypub_shared: { anonymous: 401, user: 404, sysop: 404 },
};

describeEachDialect('message visibility', (dialect) => {
  let board: MessageTestBoard;
  /** One message per area that can hold one (blocked areas get theirs behind the API's back). */
  const messageIn = new Map<string, string>();

  const headersOf = (who: Who) => (who === 'anonymous' ? {} : who === 'user' ? board.alice.auth : board.sysop.auth);
  const status = async (who: Who, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    (await board.app.inject({ method, url: `${API}${url}`, headers: headersOf(who), ...(payload ? { payload } : {}) }))
      .statusCode;

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    for (const areaTag of ['general', 'members', 'secret']) {
      await seedMessages(board, areaTag, 1);
    }
    for (const areaTag of ['general', 'members']) {
      const [uuid] = await uuidsOf(board, areaTag);
      if (uuid) messageIn.set(areaTag, uuid);
    }
    const secret = await board.board.db
      .selectFrom('messages')
      .select('uuid')
      .where('areaTag', '=', 'secret')
      .executeTakeFirstOrThrow();
    messageIn.set('secret', secret.uuid);
    // Nothing in the API can write to blocked areas; another system sharing the database could.
    for (const [index, areaTag] of ['private_mail', 'activitypub_shared'].entries()) {
      const uuid = `00000000-0000-4000-8000-00000000000${index}`;
      await board.board.db
        .insertInto('messages')
        .values({
          id: 1_000_000 + index,
          ...threadPlaceOf(1_000_000 + index, null),
          uuid,
          areaTag,
          replyToMessageId: null,
          fromUserId: null,
          fromUserName: 'x',
          toUserName: 'y',
          subject: 'hidden',
          body: 'hidden',
          timestamp: '2020-01-01T00:00:00.000Z',
          network: '{}',
        })
        .execute();
      messageIn.set(areaTag, uuid);
    }
  });
  afterAll(() => board.close());

  it.each([
    'private_mail',
    'activitypub_shared',
  ])('answers a message of %s fetched by uuid exactly like an unknown uuid', async (areaTag) => {
    const hiddenUuid = messageIn.get(areaTag) ?? '';
    const unknownUuid = '00000000-0000-4000-8000-0000000000ff';
    for (const who of WHO) {
      const hidden = await board.app.inject({
        method: 'GET',
        url: `${API}/messages/${hiddenUuid}`,
        headers: headersOf(who),
      });
      const unknown = await board.app.inject({
        method: 'GET',
        url: `${API}/messages/${unknownUuid}`,
        headers: headersOf(who),
      });
      expect(hidden.statusCode).toBe(404);
      expect(hidden.json()).toEqual({ ...unknown.json(), detail: `No message ${hiddenUuid}.` });
      expect(unknown.json().detail).toBe(`No message ${unknownUuid}.`);
    }
  });

  describe('GET /messages/conferences', () => {
    it('shows anonymous callers only conferences with an allowlisted area, counting visible areas', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/messages/conferences` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        data: [{ confTag: 'main', name: 'Main', desc: 'Main conference', areaCount: 1 }],
        meta: { count: 1, limit: 1, nextCursor: null },
        pagination: { next: null },
      });
    });

    it.each(['user', 'sysop'] as const)('shows a %s the conferences the ACS permits', async (who) => {
      const response = await board.app.inject({
        method: 'GET',
        url: `${API}/messages/conferences`,
        headers: headersOf(who),
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toEqual([
        { confTag: 'main', name: 'Main', desc: 'Main conference', areaCount: 3 },
        { confTag: 'other', name: 'Other', desc: '', areaCount: 1 },
      ]);
    });
  });

  describe('GET /messages/conferences/:confTag', () => {
    const expected: Record<string, Record<Who, number>> = {
      main: { anonymous: 200, user: 200, sysop: 200 },
      other: { anonymous: 401, user: 200, sysop: 200 },
      hidden: { anonymous: 401, user: 403, sysop: 403 },
      nowhere: { anonymous: 404, user: 404, sysop: 404 },
    };
    for (const [confTag, byWho] of Object.entries(expected)) {
      for (const who of WHO) {
        it(`answers ${byWho[who]} to ${who} for conference ${confTag}`, async () => {
          expect(await status(who, 'GET', `/messages/conferences/${confTag}`)).toBe(byWho[who]);
        });
      }
    }

    it('lists only the areas the caller may see, never blocked ones', async () => {
      const anonymous = await board.app.inject({ method: 'GET', url: `${API}/messages/conferences/main` });
      expect(anonymous.json().areas.map((area: { areaTag: string }) => area.areaTag)).toEqual(['general']);
      const user = await board.app.inject({
        method: 'GET',
        url: `${API}/messages/conferences/main`,
        headers: board.alice.auth,
      });
      expect(user.json()).toEqual({
        confTag: 'main',
        name: 'Main',
        desc: 'Main conference',
        areas: [
          {
            areaTag: 'general',
            name: 'General',
            desc: 'General chat',
            confTag: 'main',
            messageCount: 1,
            lastMessageAt: '2020-01-01T00:00:00.000Z',
            lastReadMessageId: null,
            unreadCount: 1,
          },
          {
            areaTag: 'members',
            name: 'Members',
            desc: '',
            confTag: 'main',
            messageCount: 1,
            lastMessageAt: '2020-01-01T00:00:00.000Z',
            lastReadMessageId: null,
            unreadCount: 1,
          },
          {
            areaTag: 'readonly',
            name: 'Read only',
            desc: '',
            confTag: 'main',
            messageCount: 0,
            lastMessageAt: null,
            lastReadMessageId: null,
            unreadCount: 0,
          },
        ],
      });
    });
  });

  for (const [areaTag, byWho] of Object.entries(READ)) {
    for (const who of WHO) {
      const expected = byWho[who];
      it(`GET /messages/areas/${areaTag} answers ${expected} to ${who}`, async () => {
        expect(await status(who, 'GET', `/messages/areas/${areaTag}`)).toBe(expected);
      });
      it(`GET /messages/areas/${areaTag}/messages answers ${expected} to ${who}`, async () => {
        expect(await status(who, 'GET', `/messages/areas/${areaTag}/messages`)).toBe(expected);
      });
      const uuid = () => messageIn.get(areaTag) ?? '00000000-0000-4000-8000-0000000000ff';
      it(`GET /messages/:uuid in ${areaTag} answers ${expected} to ${who}`, async () => {
        expect(await status(who, 'GET', `/messages/${uuid()}`)).toBe(expected);
      });
    }
  }

  for (const [areaTag, byWho] of Object.entries(POST)) {
    for (const who of WHO) {
      it(`POST /messages/areas/${areaTag}/messages answers ${byWho[who]} to ${who}`, async () => {
        expect(
          await status(who, 'POST', `/messages/areas/${areaTag}/messages`, { subject: 'Hi', message: 'Hello' }),
        ).toBe(byWho[who]);
      });
    }
  }

  // Last: the sysop's successful deletions remove the messages the read tests use.
  describe('DELETE /messages/:uuid', () => {
    for (const [areaTag, byWho] of Object.entries(DELETE)) {
      for (const who of WHO) {
        it(`answers ${byWho[who]} to ${who} for a message in ${areaTag}`, async () => {
          expect(await status(who, 'DELETE', `/messages/${messageIn.get(areaTag)}`)).toBe(byWho[who]);
        });
      }
    }
  });

  it('answers 401 with WWW-Authenticate to anonymous callers of a members-only area', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/messages/areas/members` });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="baud"');
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toMatchObject({ type: `${API}/errors/401`, title: 'Unauthorized', status: 401 });
  });
});
