import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AnonymousCaller, anonymousCaller, type UserCaller } from '../../src/caller.js';
import { BadRequestError, TooManyRequestsError } from '../../src/errors.js';
import type { StreamSink } from '../../src/events/event-stream.js';
import type { StreamRequest } from '../../src/events/event-stream-service.js';
import { type LiveEvents, startLiveEvents } from '../../src/events/live-events.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

/** A client that takes everything at once. */
function takingSink(): StreamSink {
  let written = 0;
  return {
    write(chunk) {
      written += Buffer.byteLength(chunk);
      return true;
    },
    unsentBytes: () => 0,
    takenBytes: () => written,
    drained: async () => {},
    end() {},
    destroy() {},
  };
}

/** The stream limits of `GET /events` without HTTP: the rules live in the events service. */
describeEachDialect('event stream service', (dialect) => {
  let board: TestBoard;
  let live: LiveEvents;
  let alice: UserCaller;

  const anonymous = anonymousCaller(false);
  const request = (caller: UserCaller | AnonymousCaller, extra: Partial<StreamRequest> = {}): StreamRequest => ({
    caller,
    recheckCaller: null,
    clientAddress: '192.0.2.7',
    types: undefined,
    areas: undefined,
    lastEventId: undefined,
    ...extra,
  });
  const open = (streamRequest: StreamRequest) => live.eventStreams.open(streamRequest, takingSink());

  beforeAll(async () => {
    board = await createTestBoard(dialect);
    const { events, database, clock, mayCallerSee, config } = board.board;
    live = startLiveEvents({
      log: events,
      database,
      clock,
      mayCallerSee,
      settings: { ...config.events, maxStreamsPerUser: 1, maxStreamsPerNode: 2 },
      onError: (error) => {
        throw error;
      },
    });
    const { userId } = await board.userWithToken('alice');
    const user = await board.board.users.loadCallerUser(userId);
    if (!user) throw new Error('alice was just created');
    alice = { kind: 'user', user, via: 'apiKey', scopes: new Set(['read']), isSecure: false, session: null };
  });
  afterAll(async () => {
    await live.stop();
    await board.close();
  });

  it('holds a user and an address to their limit, then the node to its own, and frees a place on close', async () => {
    const alices = await open(request(alice));
    await expect(open(request(alice))).rejects.toThrow(
      new TooManyRequestsError('event.too-many-streams', 'You have 1 event streams open already: close one first.', 10),
    );
    const fromAddress = await open(request(anonymous));
    await expect(open(request(anonymous))).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '10' } });
    const full = open(request(anonymous, { clientAddress: '192.0.2.8' }));
    await expect(full).rejects.toThrow('This node follows as many event streams as it can: try again later.');

    alices.close();
    alices.close();
    const again = await open(request(alice));
    again.close();
    fromAddress.close();
  });

  it('refuses a bad filter or Last-Event-ID before it takes a place', async () => {
    await expect(open(request(alice, { types: 'message.created,message.edited' }))).rejects.toBeInstanceOf(
      BadRequestError,
    );
    await expect(open(request(alice, { lastEventId: '-1' }))).rejects.toMatchObject({
      detail: 'Last-Event-ID must be an event id (a non-negative integer).',
    });
    (await open(request(alice, { types: 'message.created', areas: 'pub_*', lastEventId: ' 0 ' }))).close();
  });
});
