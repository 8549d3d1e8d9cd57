import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-log.js';
import { API, createFileTestBoard, filePart, upload } from '../support/file-board.js';
import { openSse, type SseClient } from '../support/sse-client.js';
import { describeEachDialect, type TestBoard } from '../support/test-board.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { buildZip } from '../support/zip-builder.js';

/**
 * Issue 29, item 2: a stream resumed with `Last-Event-ID` over many large events. A client that
 * reads nothing must not make the node hold more than the documented 1 MiB for it — the replay
 * waits for the client, and a stream over its budget is destroyed, not ended — while a client
 * that reads, however slowly, gets every event once and in order. And a file event carries
 * bounded descriptions, on streams and webhooks alike.
 */

/** The documented budget of unsent bytes per stream (docs/api-notes.md, "Limits"). */
const STREAM_BUDGET_BYTES = 1024 * 1024;
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
      config: {
        events: { heartbeatSeconds: 0.2, pollIntervalMs: 100 },
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

  it('destroys a paused reader resuming over many large events once it is over budget, holding at most the budget and one event', async () => {
    const before = await board.board.events.latestId();
    await appendHistory(STALLING_EVENTS, LARGE_EVENT_DESCRIPTION);
    const probe = followWithoutReading(before);
    await expect.poll(() => probe.isStalled(), { timeout: 20_000, interval: 500 }).toBe(true);
    // The board goes on: more than the budget of new events for the stream to hold.
    await appendFileEvents(300);
    await expect.poll(() => probe.closing(), { timeout: 15_000 }).not.toBeNull();
    console.log(
      `stream-budget [${dialect}]: paused reader resuming over 1,280 events of 48 KiB, then 300 live ones of 6 KiB: ` +
        `peak ${(probe.peakBytes() / 1024).toFixed(0)} KiB held, then ${probe.closing()?.isFinished ? 'ended' : 'destroyed'}`,
    );
    expect(probe.closing()).toEqual({ isFinished: false });
    expect(probe.peakBytes()).toBeLessThanOrEqual(STREAM_BUDGET_BYTES + LARGE_EVENT_DESCRIPTION.length + 1024);
  }, 60_000);

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
    const fileEventIds = () => client.frames.flatMap((frame) => (frame.event === 'file.created' ? [frame.id] : []));
    // Live events come while the replay is still on its way.
    await expect.poll(() => fileEventIds().length, { timeout: 10_000 }).toBeGreaterThan(50);
    const live = await appendFileEvents(5);
    await expect.poll(() => fileEventIds().at(-1), { timeout: 30_000 }).toBe(live[4]);
    const ids = fileEventIds();
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
