import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/test-board.js';
import { api, field, listAll, login } from './support/api-client.js';
import { type BaudProcess, createHardeningBoard, type HardeningBoard } from './support/baud-process.js';

/**
 * Many clients post into one area at the same moment, over real HTTP to a real `baud serve`:
 * every acknowledged post is stored exactly once and every counter is exact afterwards.
 */

const USER_COUNT = 8;
const POSTS_PER_USER = 25;
const AREA = 'race';

const BOARD_CONFIG = {
  messageConferences: { main: { name: 'Main', areas: { [AREA]: { name: 'Race track' } } } },
};

const users = Array.from({ length: USER_COUNT }, (_, index) => ({
  username: `racer${index}`,
  password: `race-password-${index}-x`,
}));

interface PostedMessage {
  readonly messageId: number;
  readonly uuid: string;
  readonly fromUserName: string;
  readonly subject: string;
}

describeEachDialect('parallel posts into one area', (dialect) => {
  let board: HardeningBoard;
  let server: BaudProcess;

  beforeAll(async () => {
    board = createHardeningBoard(dialect, BOARD_CONFIG);
    await board.addUsers(users);
    server = await board.start();
  }, 120_000);
  afterAll(async () => {
    await board?.destroy();
  });

  it(`stores each of ${USER_COUNT} × ${POSTS_PER_USER} simultaneous posts exactly once, with exact counters`, async () => {
    const sessions = await Promise.all(users.map((user) => login(server.apiUrl, user.username, user.password)));

    const started = performance.now();
    // Every request is in flight at once: no client waits for another.
    const answers = await Promise.all(
      sessions.flatMap((session, userIndex) =>
        Array.from({ length: POSTS_PER_USER }, (_, postIndex) =>
          api(server.apiUrl, `/messages/areas/${AREA}/messages`, {
            method: 'POST',
            token: session.accessToken,
            json: { subject: `u${userIndex} p${postIndex}`, message: `racer ${userIndex} post ${postIndex}` },
          }),
        ),
      ),
    );
    const elapsedMs = performance.now() - started;

    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    const acknowledged = answers.map((answer) => answer.json as PostedMessage);
    const acknowledgedUuids = new Set(acknowledged.map((message) => message.uuid));
    expect(acknowledgedUuids.size).toBe(USER_COUNT * POSTS_PER_USER);
    expect(new Set(acknowledged.map((message) => message.messageId)).size).toBe(USER_COUNT * POSTS_PER_USER);

    const reader = sessions[0]?.accessToken;
    const listed = await listAll<PostedMessage>(server.apiUrl, `/messages/areas/${AREA}/messages`, reader);
    // Exactly once: the listing holds each acknowledged message and nothing else.
    expect(listed).toHaveLength(USER_COUNT * POSTS_PER_USER);
    expect(new Set(listed.map((message) => message.uuid))).toEqual(acknowledgedUuids);
    // The id a client was given is the id the message is stored under.
    const listedIdByUuid = new Map(listed.map((message) => [message.uuid, message.messageId]));
    const mismatched = acknowledged.filter((message) => listedIdByUuid.get(message.uuid) !== message.messageId);
    expect(mismatched).toEqual([]);
    // Oldest first, ids strictly increasing (keyset order).
    const outOfOrder = listed.filter(
      (message, index) => index > 0 && message.messageId <= (listed[index - 1]?.messageId ?? 0),
    );
    expect(outOfOrder).toEqual([]);
    // Every post's subject made it exactly once.
    const subjects = listed.map((message) => message.subject).sort();
    expect(new Set(subjects).size).toBe(USER_COUNT * POSTS_PER_USER);

    const area = await api(server.apiUrl, `/messages/areas/${AREA}`, { token: reader ?? '' });
    expect(area.status).toBe(200);
    expect(field<number>(area.json, 'messageCount')).toBe(USER_COUNT * POSTS_PER_USER);

    const postCounts = await Promise.all(
      sessions.map(async (session) => {
        const me = await api(server.apiUrl, '/users/me', { token: session.accessToken });
        expect(me.status).toBe(200);
        return field<number>(me.json, 'postCount');
      }),
    );
    expect(postCounts).toEqual(users.map(() => POSTS_PER_USER));
    for (const user of users) {
      expect(listed.filter((message) => message.fromUserName === user.username)).toHaveLength(POSTS_PER_USER);
    }

    console.log(
      `post-race [${dialect}]: ${USER_COUNT} users × ${POSTS_PER_USER} posts all in flight at once: ` +
        `${answers.length} answered 201 in ${(elapsedMs / 1000).toFixed(2)} s, ${listed.length} stored, 0 duplicates, ` +
        `ids strictly increasing, messageCount ${USER_COUNT * POSTS_PER_USER}, postCount ${POSTS_PER_USER} for each user`,
    );
  }, 60_000);
});
