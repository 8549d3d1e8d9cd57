import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from './message-fixture.js';

interface Summary {
  readonly messageId: number;
  readonly uuid: string;
  readonly subject: string;
}

/**
 * New-scan (beyond-v1.md "Reading: new-scan"): a last-read pointer per user and area, an exact
 * unreadCount beside every area an authenticated caller sees, the areas with unread messages,
 * and the unread part of an area's list.
 */
describeEachDialect('new-scan pointers', (dialect) => {
  let board: MessageTestBoard;
  let general: Summary[];

  const request = (
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: string,
    headers: Record<string, string> = {},
    payload?: unknown,
  ) =>
    board.app.inject({
      method,
      url: `${API}${url}`,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const putPointer = (headers: Record<string, string>, lastReadMessageId: unknown, areaTag = 'general') =>
    request('PUT', `/messages/areas/${areaTag}/pointer`, headers, { lastReadMessageId });
  const list = async (url: string, headers: Record<string, string>) => {
    const response = await request('GET', url, headers);
    expect(response.statusCode).toBe(200);
    return response.json() as { data: Summary[]; meta: { nextCursor: string | null } };
  };

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    await seedMessages(board, 'general', 10);
    await seedMessages(board, 'members', 3);
    // Messages nobody but the ACS-less sysop… nobody at all may read.
    await seedMessages(board, 'secret', 4);
    general = (await list('/messages/areas/general/messages?limit=100', board.alice.auth)).data;
  });
  afterAll(() => board.close());

  describe('for anonymous callers', () => {
    it('adds nothing to area details and lists', async () => {
      const area = await request('GET', '/messages/areas/general');
      expect(area.json()).not.toHaveProperty('unreadCount');
      expect(area.json()).not.toHaveProperty('lastReadMessageId');
      const conference = await request('GET', '/messages/conferences/main');
      expect(conference.json().areas[0]).not.toHaveProperty('unreadCount');
    });

    it('has no pointers: 401 for the pointer, the unread list and ?unread=true', async () => {
      for (const response of [
        await putPointer({}, 1),
        await request('GET', '/messages/unread'),
        await request('GET', '/messages/areas/general/messages?unread=true'),
      ]) {
        expect(response.statusCode).toBe(401);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      }
    });
  });

  it('starts with no pointer: every live message of the area is unread', async () => {
    const area = await request('GET', '/messages/areas/general', board.bob.auth);
    expect(area.json()).toMatchObject({ messageCount: 10, lastReadMessageId: null, unreadCount: 10 });
  });

  it('moves the pointer, and the area detail, the conference and the unread list follow', async () => {
    const third = general[2]?.messageId as number;
    const moved = await putPointer(board.alice.auth, third);
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toEqual({ areaTag: 'general', lastReadMessageId: third, unreadCount: 7 });

    expect((await request('GET', '/messages/areas/general', board.alice.auth)).json()).toMatchObject({
      lastReadMessageId: third,
      unreadCount: 7,
    });
    const conference = (await request('GET', '/messages/conferences/main', board.alice.auth)).json();
    expect(
      conference.areas.map((area: { areaTag: string; unreadCount: number }) => [area.areaTag, area.unreadCount]),
    ).toEqual([
      ['general', 7],
      ['members', 3],
      ['readonly', 0],
    ]);
    // Bob's pointers are his own.
    expect((await request('GET', '/messages/areas/general', board.bob.auth)).json().unreadCount).toBe(10);
  });

  it('moves backwards, and clamps a pointer past the end to the highest message id', async () => {
    const first = general[0]?.messageId as number;
    const last = general[9]?.messageId as number;
    expect((await putPointer(board.bob.auth, first)).json()).toEqual({
      areaTag: 'general',
      lastReadMessageId: first,
      unreadCount: 9,
    });
    expect((await putPointer(board.bob.auth, last + 1000)).json()).toEqual({
      areaTag: 'general',
      lastReadMessageId: last,
      unreadCount: 0,
    });
    expect((await putPointer(board.bob.auth, 0)).json()).toEqual({
      areaTag: 'general',
      lastReadMessageId: 0,
      unreadCount: 10,
    });
  });

  it.each([
    ['a negative id', -1],
    ['a fraction', 1.5],
    ['a string', 'seven'],
    ['null', null],
  ])('refuses %s with a 400 problem naming the field', async (_what, value) => {
    const response = await putPointer(board.alice.auth, value);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.stringify(response.json())).toContain('lastReadMessageId');
  });

  it('refuses a body without lastReadMessageId with 400', async () => {
    const response = await request('PUT', '/messages/areas/general/pointer', board.alice.auth, {});
    expect(response.statusCode).toBe(400);
  });

  it('answers an unknown area 404, an area the ACS hides 403, a blocked area 404', async () => {
    expect((await putPointer(board.alice.auth, 1, 'nowhere')).statusCode).toBe(404);
    expect((await putPointer(board.alice.auth, 1, 'secret')).statusCode).toBe(403);
    expect((await putPointer(board.alice.auth, 1, 'private_mail')).statusCode).toBe(404);
    expect((await request('GET', '/messages/areas/secret/messages?unread=true', board.alice.auth)).statusCode).toBe(
      403,
    );
  });

  it('needs the write scope of an API key to move a pointer, the read scope to see it', async () => {
    const reader = await board.board.apiKeys.generate('alice', 'reader', 'read');
    const writer = await board.board.apiKeys.generate('alice', 'writer', 'read,write');
    expect((await putPointer({ 'x-baud-api-key': reader.key }, 1)).statusCode).toBe(403);
    expect((await putPointer({ 'x-baud-api-key': writer.key }, general[2]?.messageId)).statusCode).toBe(200);
    const area = await request('GET', '/messages/areas/general', { 'x-baud-api-key': reader.key });
    expect(area.json()).toMatchObject({ lastReadMessageId: general[2]?.messageId, unreadCount: 7 });
  });

  it('lists the messages after the pointer with ?unread=true, page by page, without moving it', async () => {
    await putPointer(board.alice.auth, general[5]?.messageId);
    const first = await request('GET', '/messages/areas/general/messages?unread=true&limit=3', board.alice.auth);
    const page = first.json() as { data: Summary[]; meta: { nextCursor: string } };
    expect(page.data.map((message) => message.subject)).toEqual(['Seed 7', 'Seed 8', 'Seed 9']);
    expect(first.headers.link).toContain('unread=true');
    const rest = await list(
      `/messages/areas/general/messages?unread=true&limit=3&cursor=${encodeURIComponent(page.meta.nextCursor)}`,
      board.alice.auth,
    );
    expect(rest.data.map((message) => message.subject)).toEqual(['Seed 10']);
    expect(rest.meta.nextCursor).toBeNull();
    // `unread=false` (and no parameter) is the whole list, as in v1.
    expect((await list('/messages/areas/general/messages?unread=false&limit=100', board.alice.auth)).data).toHaveLength(
      10,
    );
    expect((await request('GET', '/messages/areas/general', board.alice.auth)).json().unreadCount).toBe(4);
  });

  it('counts posts and deletions exactly: after the pointer they count, before it they do not', async () => {
    await putPointer(board.alice.auth, general[5]?.messageId);
    const unread = async () => (await request('GET', '/messages/areas/general', board.alice.auth)).json().unreadCount;
    expect(await unread()).toBe(4);
    const posted = await request('POST', '/messages/areas/general/messages', board.bob.auth, {
      subject: 'New',
      message: 'A new message',
    });
    expect(posted.statusCode).toBe(201);
    expect(await unread()).toBe(5);
    // Deleting a message after the pointer takes it off; one before the pointer changes nothing.
    expect((await request('DELETE', `/messages/${posted.json().uuid}`, board.sysop.auth)).statusCode).toBe(204);
    expect(await unread()).toBe(4);
    expect((await request('DELETE', `/messages/${general[1]?.uuid}`, board.sysop.auth)).statusCode).toBe(204);
    expect(await unread()).toBe(4);
    expect((await request('DELETE', `/messages/${general[8]?.uuid}`, board.sysop.auth)).statusCode).toBe(204);
    expect(await unread()).toBe(3);
  });

  it('lists the readable areas with unread messages in conference then area order, never a hidden one', async () => {
    const carol = await board.userWithToken('carol');
    await seedMessages(board, 'chatter', 2);
    const response = await request('GET', '/messages/unread', carol.auth);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const general = (await request('GET', '/messages/areas/general', carol.auth)).json();
    expect(response.json().data).toEqual([
      { confTag: 'main', areaTag: 'general', lastReadMessageId: null, unreadCount: general.messageCount },
      { confTag: 'main', areaTag: 'members', lastReadMessageId: null, unreadCount: 3 },
      { confTag: 'other', areaTag: 'chatter', lastReadMessageId: null, unreadCount: 2 },
    ]);
    // The secret area's 4 messages and the blocked areas are never listed, nor counted.
    await putPointer(carol.auth, 10_000_000, 'members');
    expect(
      (await request('GET', '/messages/unread', carol.auth))
        .json()
        .data.map((area: { areaTag: string }) => area.areaTag),
    ).toEqual(['general', 'chatter']);
  });

  it('keeps a pointer per user: it goes when the user goes', async () => {
    const dave = await board.userWithToken('dave');
    await putPointer(dave.auth, 1);
    await board.board.db.deleteFrom('users').where('id', '=', dave.userId).execute();
    const left = await board.board.db
      .selectFrom('messagePointers')
      .selectAll()
      .where('userId', '=', dave.userId)
      .execute();
    expect(left).toEqual([]);
  });
});

/**
 * A reader who follows an area with `?unread=true` and moves the pointer to the last message
 * seen must get every message exactly once, however posts race: a message may never commit
 * below a pointer that already passed its id. (On PostgreSQL ids come from a sequence, so a
 * post must take the area's lock before its id — see postMessage.)
 */
describeEachDialect('new-scan while posts race', (dialect) => {
  let board: MessageTestBoard;
  let baseUrl: string;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    baseUrl = `${await board.app.listen({ port: 0, host: '127.0.0.1' })}${API}`;
  });
  afterAll(() => board.close());

  it('shows a follower every one of 6 × 20 racing posts exactly once', async () => {
    const posters = await Promise.all(['p0', 'p1', 'p2', 'p3', 'p4', 'p5'].map((name) => board.userWithToken(name)));
    const follower = board.alice.auth;
    let posting = true;
    const posted: string[] = [];
    const postAll = Promise.all(
      posters.map(async (poster, index) => {
        for (let post = 0; post < 20; post += 1) {
          const response = await fetch(`${baseUrl}/messages/areas/general/messages`, {
            method: 'POST',
            headers: { ...poster.auth, 'content-type': 'application/json' },
            body: JSON.stringify({ subject: `p${index} ${post}`, message: 'racing' }),
          });
          expect(response.status).toBe(201);
          posted.push(((await response.json()) as Summary).uuid);
        }
      }),
    ).finally(() => {
      posting = false;
    });

    const seen: string[] = [];
    let quietRounds = 0;
    while (posting || quietRounds < 2) {
      const response = await fetch(`${baseUrl}/messages/areas/general/messages?unread=true&limit=100`, {
        headers: follower,
      });
      const page = (await response.json()) as { data: Summary[] };
      seen.push(...page.data.map((message) => message.uuid));
      const last = page.data.at(-1);
      if (last) {
        const moved = await fetch(`${baseUrl}/messages/areas/general/pointer`, {
          method: 'PUT',
          headers: { ...follower, 'content-type': 'application/json' },
          body: JSON.stringify({ lastReadMessageId: last.messageId }),
        });
        expect(moved.status).toBe(200);
      }
      quietRounds = posting || page.data.length > 0 ? 0 : quietRounds + 1;
    }
    await postAll;
    expect(seen.length).toBe(posted.length);
    expect(new Set(seen)).toEqual(new Set(posted));
    const area = await fetch(`${baseUrl}/messages/areas/general`, { headers: follower });
    expect(((await area.json()) as { unreadCount: number }).unreadCount).toBe(0);
  });
});
