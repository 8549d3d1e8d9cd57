import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-log.js';
import { API, createFileTestBoard, filePart, upload } from '../support/file-board.js';
import { openSse, type SseClient, type SseFrame } from '../support/sse-client.js';
import { describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { buildZip } from '../support/zip-builder.js';

/**
 * Issue 29, item 2: a stream resumed with `Last-Event-ID` over many large events. A client that
 * reads nothing must not make the node hold more than the documented 1 MiB for it — the replay
 * waits for the client, and a stream whose client takes nothing for the stall time is destroyed,
 * not ended — while a client that reads, however slowly, gets every event once and in order.
 * A burst the node reads all at once, larger than the budget, costs a fast reader nothing: its
 * stream catches up from the log instead of holding the burst. A catch-up that falls behind what
 * the log keeps says so with `reset`. And a file event carries bounded descriptions, on streams
 * and webhooks alike.
 */

/** The documented budget of unsent bytes per stream (docs/api-notes.md, "Limits"). */
const STREAM_BUDGET_BYTES = 1024 * 1024;
/** How long a stream whose client takes nothing while data waits lives on (docs/api-notes.md, "Limits"). */
const STALL_MS = 30_000;
/** Events the log keeps here: few enough for a test to outrun, more than any other test resumes over. */
const KEPT_EVENTS = 2000;
/** Code points of each description a file event carries at most (docs/api-notes.md, "Live events"). */
const EVENT_DESCRIPTION_CODE_POINTS = 2048;
/** About what a file event weighs once its descriptions are bounded. */
const EVENT_DESCRIPTION = 'n'.repeat(6000);
/**
 * What a file event weighed before they were (a 48 KiB NFO). A client that reads nothing stops
 * the flow only once the kernel's buffers on both ends are full, up to ~36 MiB here
 * (net.ipv4.tcp_rmem and tcp_wmem): the tests that need it stopped send more than that.
 */
const LARGE_EVENT_DESCRIPTION = 'N'.repeat(48 * 1024);
/** Large events that outgrow the kernel's buffers: 60 MiB. */
const STALLING_EVENTS = 1280;

/** What the server holds for one open event stream: its response body and the response (socket included). */
interface StreamProbe {
  /** The most bytes held at once, measured after every write. */
  peakBytes(): number;
  /** Whether the flow has stopped: the response holds bytes and its socket took none since the last call. */
  isStalled(): boolean;
  /** How the response closed, once it has: `isFinished` false means destroyed, not ended. */
  closing(): { readonly isFinished: boolean } | null;
}

/**
 * Watches the next `GET /events` answered by `board`'s server. The body Fastify pipes into the
 * response announces itself with the stream's `pipe` event; every write to it is measured.
 */
function probeNextStream(board: TestBoard): StreamProbe {
  let peak = 0;
  let closing: { isFinished: boolean } | null = null;
  let isStalled = () => false;
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    if (!request.url?.startsWith(`${API}/events`)) return;
    board.app.server.off('request', onRequest);
    let bytesWritten = -1;
    isStalled = () => {
      const before = bytesWritten;
      bytesWritten = response.socket?.bytesWritten ?? 0;
      return bytesWritten === before && response.writableLength > 0;
    };
    response.once('pipe', (body: Readable & Writable) => {
      const write = body.write.bind(body) as (chunk: unknown) => boolean;
      const measure = () => {
        peak = Math.max(peak, body.writableLength + body.readableLength + response.writableLength);
      };
      measure();
      body.write = ((chunk: unknown) => {
        const result = write(chunk);
        measure();
        return result;
      }) as typeof body.write;
    });
    response.once('close', () => {
      closing = { isFinished: response.writableFinished };
    });
  };
  board.app.server.on('request', onRequest);
  return { peakBytes: () => peak, isStalled: () => isStalled(), closing: () => closing };
}

describeEachDialect('what an event stream may hold', (dialect) => {
  let board: TestBoard;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let port: number;
  let base: string;
  const sockets: Socket[] = [];
  const clients: SseClient[] = [];
  const clock = fakeClock();

  /**
   * Appends events a stream opened next finds in its past, not live: the node's one reader of
   * the log has read past them once a marker appended after them reaches a stream that follows
   * another area (a resume replays what is older than that reader, at the client's pace; a
   * burst it reads live is held all at once).
   */
  async function appendHistory(count: number, descLong: string): Promise<void> {
    const alice = await board.userWithToken(`alice${count}${Date.now()}`);
    const marker = await openSse(`${base}/events?areas=members`, alice.auth);
    clients.push(marker);
    await marker.next((frame) => frame.retry === 3000);
    await appendFileEvents(count, descLong);
    const [markerId] = await appendFileEvents(1, 'marker', 'members');
    await expect.poll(() => marker.frames.some((frame) => frame.id === markerId), { timeout: 20_000 }).toBe(true);
  }

  /** Appends `count` file events, as uploads would; returns their ids. */
  async function appendFileEvents(
    count: number,
    descLong = EVENT_DESCRIPTION,
    areaTag = 'public_files',
  ): Promise<number[]> {
    const ids: number[] = [];
    for (let start = 0; start < count; start += 500) {
      await board.board.db.transaction().execute(async (trx) => {
        for (let index = start; index < Math.min(count, start + 500); index++) {
          const event: NewEvent = {
            type: 'file.created',
            areaTag,
            userId: null,
            data: {
              fileId: index,
              areaTag,
              fileName: `f${index}.zip`,
              desc: 'x',
              descLong,
            },
          };
          ids.push(await board.board.events.append(trx, event));
        }
      });
    }
    return ids;
  }

  /** Resumes after `lastEventId` with a client that sends its request and never reads a byte. */
  function followWithoutReading(lastEventId: number): StreamProbe {
    const probe = probeNextStream(board);
    const socket = connect({ port, host: '127.0.0.1' });
    sockets.push(socket);
    socket.pause();
    socket.on('error', () => {});
    socket.write(`GET ${API}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nLast-Event-ID: ${lastEventId}\r\n\r\n`);
    return probe;
  }

  beforeAll(async () => {
    board = await createFileTestBoard(dialect, {
      clock,
      config: {
        events: { heartbeatSeconds: 0.2, pollIntervalMs: 100, maxEvents: KEPT_EVENTS },
        webhooks: { allowPrivateTargets: true, timeoutSeconds: 2 },
      },
    });
    receiver = await startReceiver();
    await board.app.listen({ host: '127.0.0.1', port: 0 });
    port = (board.app.server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}${API}`;
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await board.close();
    await receiver.close();
  });

  /** Follows every file event with a client that reads as fast as it can. */
  async function followFast(): Promise<SseClient> {
    const client = await openSse(`${base}/events?types=file.created`);
    clients.push(client);
    await client.next((frame) => frame.retry === 3000);
    return client;
  }

  const fileEventIds = (frames: readonly SseFrame[]) =>
    frames.flatMap((frame) => (frame.event === 'file.created' && frame.id !== undefined ? [frame.id] : []));

  it('holds a paused reader resuming over many large events, and live ones after, to the budget, and destroys it once it took nothing for the stall time', async () => {
    const before = await board.board.events.latestId();
    await appendHistory(STALLING_EVENTS, LARGE_EVENT_DESCRIPTION);
    const probe = followWithoutReading(before);
    await expect.poll(() => probe.isStalled(), { timeout: 20_000, interval: 500 }).toBe(true);
    // The board goes on: more than the budget of new events, read by the node at once.
    const fast = await followFast();
    const live = await appendFileEvents(300);
    await expect.poll(() => fileEventIds(fast.frames).at(-1), { timeout: 10_000 }).toBe(live.at(-1));
    // Every stream was handed them: the paused one keeps its place and holds none of them.
    expect(probe.closing()).toBeNull();
    clock.advance(STALL_MS);
    await expect.poll(() => probe.closing(), { timeout: 5000 }).not.toBeNull();
    console.log(
      `stream-budget [${dialect}]: paused reader resuming over 1,280 events of 48 KiB, then 300 live ones of 6 KiB: ` +
        `peak ${(probe.peakBytes() / 1024).toFixed(0)} KiB held, then ${probe.closing()?.isFinished ? 'ended' : 'destroyed'}`,
    );
    expect(probe.closing()).toEqual({ isFinished: false });
    expect(probe.peakBytes()).toBeLessThanOrEqual(STREAM_BUDGET_BYTES + LARGE_EVENT_DESCRIPTION.length + 1024);
    expect(fast.frames.filter((frame) => frame.event === 'file.created').length).toBe(300);
  }, 60_000);

  it('gives a fast reader every event of a burst larger than the budget once, in order, and keeps its stream', async () => {
    const probe = probeNextStream(board);
    const fast = await followFast();
    // One transaction of 500 events of 6 KiB: the node reads all 3 MiB of them at once.
    const burst = await appendFileEvents(500);
    await expect.poll(() => fileEventIds(fast.frames).length, { timeout: 20_000 }).toBe(burst.length);
    expect(fileEventIds(fast.frames)).toEqual(burst);
    const [after] = await appendFileEvents(1);
    await expect.poll(() => fileEventIds(fast.frames).at(-1), { timeout: 5000 }).toBe(after);
    expect(fileEventIds(fast.frames)).toEqual([...burst, after]);
    console.log(
      `stream-budget [${dialect}]: fast reader during a burst of 500 events of 6 KiB read at once: ` +
        `peak ${(probe.peakBytes() / 1024).toFixed(0)} KiB held, ${fileEventIds(fast.frames).length} events, stream open`,
    );
    expect(probe.closing()).toBeNull();
    expect(probe.peakBytes()).toBeLessThanOrEqual(STREAM_BUDGET_BYTES);
  }, 60_000);

  it('announces a reset to a reader whose paced replay falls behind what the log keeps, then goes on live', async () => {
    const before = await board.board.events.latestId();
    await appendHistory(STALLING_EVENTS, LARGE_EVENT_DESCRIPTION);
    const probe = probeNextStream(board);
    const client = await openSse(`${base}/events?types=file.created`, { 'last-event-id': String(before) });
    clients.push(client);
    client.pause();
    await expect.poll(() => probe.isStalled(), { timeout: 20_000, interval: 500 }).toBe(true);
    // Enough newer events that the log no longer keeps the history the replay has not read yet.
    await appendFileEvents(KEPT_EVENTS, 's');
    expect(await board.board.events.prune()).toBeGreaterThan(0);
    const prunedThrough = await board.board.events.prunedThrough();
    expect(prunedThrough).toBeGreaterThanOrEqual(before + STALLING_EVENTS);
    client.resume();
    const reset = await client.next((frame) => frame.event === 'reset', { timeoutMs: 30_000 });
    expect(reset.data).toEqual({ detail: expect.stringContaining('no longer kept') });
    const resetId = reset.id ?? 0;
    expect(resetId).toBeGreaterThanOrEqual(prunedThrough);
    const [after] = await appendFileEvents(1, 's');
    await expect.poll(() => fileEventIds(client.frames).at(-1), { timeout: 10_000 }).toBe(after);
    const resetAt = client.frames.indexOf(reset);
    const replayed = fileEventIds(client.frames.slice(0, resetAt));
    const followed = fileEventIds(client.frames.slice(resetAt));
    // What came before the reset has no gap; what came after is newer than it, once each.
    expect(replayed.length).toBeLessThan(STALLING_EVENTS);
    expect(replayed).toEqual(Array.from({ length: replayed.length }, (_, index) => before + 1 + index));
    expect(followed.every((id) => id > resetId)).toBe(true);
    expect(followed).toEqual([...new Set(followed)].sort((a, b) => a - b));
    expect(followed.at(-1)).toBe(after);
    expect(probe.closing()).toBeNull();
  }, 90_000);

  it('closes the connection of an ended stream whose client does not take the rest within 10 s', async () => {
    const before = await board.board.events.latestId();
    await appendHistory(STALLING_EVENTS, LARGE_EVENT_DESCRIPTION);
    const probe = followWithoutReading(before);
    // Bytes wait in the socket and none went on for a while: the kernel's buffers are full.
    await expect.poll(() => probe.isStalled(), { timeout: 20_000, interval: 500 }).toBe(true);
    board.app.endEventStreams();
    await expect.poll(() => probe.closing(), { timeout: 15_000, interval: 250 }).toEqual({ isFinished: false });
  }, 60_000);

  it('gives a slow reader resuming over many large events every event once, in order, and the live ones after', async () => {
    const before = await board.board.events.latestId();
    const replayed = await appendFileEvents(600);
    const client = await openSse(`${base}/events`, { 'last-event-id': String(before) }, { pauseMs: 5 });
    clients.push(client);
    expect(client.status).toBe(200);
    // Live events come while the replay is still on its way.
    await expect.poll(() => fileEventIds(client.frames).length, { timeout: 10_000 }).toBeGreaterThan(50);
    const live = await appendFileEvents(5);
    await expect.poll(() => fileEventIds(client.frames).at(-1), { timeout: 30_000 }).toBe(live[4]);
    const ids = fileEventIds(client.frames);
    expect(ids).toEqual([...replayed, ...live]);
  }, 60_000);

  it(`cuts a file event's descriptions to ${EVENT_DESCRIPTION_CODE_POINTS} code points, between code points, on streams and webhooks alike`, async () => {
    const alice = await board.userWithToken('alice');
    const hook = await board.app.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      headers: alice.auth,
      payload: { url: receiver.url, events: ['file.created'] },
    });
    expect(hook.statusCode).toBe(201);
    const stream = await openSse(`${base}/events?types=file.created`);
    clients.push(stream);
    await stream.next((frame) => frame.retry === 3000);
    // One UTF-16 unit first, so cutting by units would split the pair at the cut.
    const descLong = `a${'😀'.repeat(EVENT_DESCRIPTION_CODE_POINTS * 2)}`;
    const desc = `b${'😀'.repeat(EVENT_DESCRIPTION_CODE_POINTS)}`;
    const big = await upload(
      board,
      'public_files',
      filePart('big.zip', buildZip([{ name: 'INFO.NFO', data: descLong }]), [{ name: 'desc', value: desc }]),
      alice.auth,
    );
    expect(big.statusCode).toBe(201);
    const small = await upload(board, 'public_files', filePart('small.txt', 'tiny'), alice.auth);
    expect(small.statusCode).toBe(201);
    const bigId = (big.json() as { fileId: number }).fileId;
    const smallId = (small.json() as { fileId: number }).fileId;

    const dataOf = async (fileId: number) =>
      (await stream.next((frame) => (frame.data as { fileId?: number } | undefined)?.fileId === fileId)).data;
    const cut = (text: string) => Array.from(text).slice(0, EVENT_DESCRIPTION_CODE_POINTS).join('');
    const bigEvent = await dataOf(bigId);
    expect(bigEvent).toEqual({ ...big.json(), desc: cut(desc), descLong: cut(descLong), isTruncated: true });
    expect(await dataOf(smallId)).toEqual({ ...small.json(), isTruncated: false });
    // The file itself keeps every word.
    const full = await board.app.inject({ url: `${API}/files/${bigId}?stripAnsi=false`, headers: alice.auth });
    expect(full.json()).toMatchObject({ desc, descLong });

    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(2);
    const delivered = receiver.received.map((delivery) => JSON.parse(delivery.body) as { data: unknown });
    expect(delivered.map((body) => body.data)).toEqual([bigEvent, { ...small.json(), isTruncated: false }]);
  }, 30_000);
});
