import { afterEach, expect, it, vi } from 'vitest';
import type { FtnWorkers } from '../../src/ftn/ftn-service.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import { API, createFtnTestBoard, type FtnTestBoard, outboundPackets } from './ftn-board.js';

type Auth = { authorization: string };
const WAIT = { timeout: 15_000, interval: 25 };
const NODE_PASSWORD = 'node-pw';
/** The hub board's own hub: never called in this test (pollMinutes 0). */
const UPSTREAM = '21:1/1';

interface Summary {
  uuid: string;
  subject: string;
}

/**
 * Two boards, one the other's hub: the hub (21:1/100) lists the node (21:1/999) as a downlink
 * and answers its calls; the node polls it. Echomail both ways (and on to the hub's own hub),
 * netmail both ways with the reply threaded, nothing twice.
 */
describeEachDialect('a baud board as another baud board’s hub', (dialect) => {
  const cleanUps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  });

  const inject = (board: FtnTestBoard, method: 'GET' | 'POST', url: string, auth: Auth, payload?: object) =>
    board.app.inject({ method, url: `${API}${url}`, headers: auth, ...(payload ? { payload } : {}) });
  const subjectsIn = async (board: FtnTestBoard, areaTag: string) =>
    (await inject(board, 'GET', `/messages/areas/${areaTag}/messages`, board.alice.auth))
      .json<{ data: Summary[] }>()
      .data.map((message) => message.subject);

  it('carries echomail and netmail both ways', async () => {
    const hub = await createFtnTestBoard(dialect, {
      clock: fakeClock(),
      ftn: {
        ftn: {
          networks: {
            fsxnet: {
              address: '21:1/100',
              hub: { address: UPSTREAM, host: '127.0.0.1', port: 9, password: 'upstream' },
              downlinks: [{ address: '21:1/999', password: NODE_PASSWORD }],
              originLine: 'The Hub Board',
            },
          },
        },
        contentServers: { binkp: { enabled: true, address: '127.0.0.1', port: 0 } },
      },
    });
    cleanUps.push(() => hub.close());
    const errors: unknown[] = [];
    const hubWorkers: FtnWorkers = await hub.board.ftn.startWorkers({ onError: (error) => errors.push(error) });
    cleanUps.push(() => hubWorkers.stop());
    expect(hubWorkers.binkpPort).toEqual(expect.any(Number));

    const node = await createFtnTestBoard(dialect, {
      clock: fakeClock(),
      ftn: {
        ftn: {
          networks: {
            fsxnet: {
              hub: { address: '21:1/100', host: '127.0.0.1', port: hubWorkers.binkpPort, password: NODE_PASSWORD },
            },
          },
        },
      },
    });
    cleanUps.push(() => node.close());
    const poll = async () => {
      const [report] = await node.board.ftn.poll('fsxnet');
      expect(report?.session.outcome).toBe('ok');
      return report;
    };

    // Node → hub, and on to the hub's own hub, not back.
    expect(
      (
        await inject(node, 'POST', '/messages/areas/fsx_gen/messages', node.alice.auth, {
          subject: 'From the node',
          message: 'Hello hub.',
        })
      ).statusCode,
    ).toBe(201);
    expect((await poll())?.scan.echomail).toBe(1);
    await vi.waitFor(async () => expect(await subjectsIn(hub, 'fsx_gen')).toEqual(['From the node']), WAIT);
    await vi.waitFor(() => {
      const forwarded = outboundPackets(hub, UPSTREAM).flatMap((packet) => packet.messages);
      expect(forwarded.map((message) => [message.subject, message.body.seenBy, message.body.path])).toEqual([
        [
          'From the node',
          [
            { net: 1, node: 1 },
            { net: 1, node: 100 },
            { net: 1, node: 999 },
          ],
          [
            { net: 1, node: 999 },
            { net: 1, node: 100 },
          ],
        ],
      ]);
    }, WAIT);
    expect(outboundPackets(hub, '21:1/999')).toEqual([]);

    // Hub → node.
    expect(
      (
        await inject(hub, 'POST', '/messages/areas/fsx_bbs/messages', hub.sysop.auth, {
          subject: 'From the hub',
          message: 'Hello node.\nTwo lines.',
        })
      ).statusCode,
    ).toBe(201);
    await vi.waitFor(() => expect(outboundPackets(hub, '21:1/999')).toHaveLength(1), WAIT);
    expect((await poll())?.toss.echomail).toBe(1);
    const [fromHub] = (await inject(node, 'GET', '/messages/areas/fsx_bbs/messages', node.alice.auth)).json<{
      data: Summary[];
    }>().data;
    const detail = (await inject(node, 'GET', `/messages/${fromHub?.uuid}`, node.alice.auth)).json<{
      body: string;
      fromUserName: string;
      network: Record<string, unknown>;
    }>();
    expect(detail.body).toBe('Hello node.\nTwo lines.');
    expect(detail.fromUserName).toBe('sysop');
    expect(detail.network).toMatchObject({
      ftnOrigNode: '21:1/100',
      ftnArea: 'FSX_BBS',
      ftnOrigin: ' * Origin: The Hub Board (21:1/100)',
      ftnSeenBy: ['SEEN-BY: 1/1 100 999'],
      ftnPath: ['1/100'],
    });

    // Netmail node → hub, and the answer back, threaded.
    const sent = await inject(node, 'POST', '/mail', node.alice.auth, {
      to: 'Sysop@21:1/100',
      subject: 'My node',
      body: 'Please connect FSX_BBS.',
    });
    expect(sent.statusCode).toBe(201);
    await poll();
    let received: (Summary & { from: string }) | undefined;
    await vi.waitFor(async () => {
      [received] = (await inject(hub, 'GET', '/mail', hub.sysop.auth)).json<{
        data: (Summary & { from: string })[];
      }>().data;
      expect(received?.from).toBe('alice@21:1/999');
    }, WAIT);
    const answer = await inject(hub, 'POST', '/mail', hub.sysop.auth, {
      to: received?.from,
      subject: 'Re: My node',
      body: 'Done.',
      replyToUuid: received?.uuid,
    });
    expect(answer.statusCode).toBe(201);
    await vi.waitFor(() => expect(outboundPackets(hub, '21:1/999')).toHaveLength(1), WAIT);
    expect((await poll())?.toss.netmail).toBe(1);
    const [reply] = (await inject(node, 'GET', '/mail', node.alice.auth)).json<{
      data: { from: string; subject: string; replyToUuid: string | null }[];
    }>().data;
    expect(reply).toMatchObject({
      from: 'sysop@21:1/100',
      subject: 'Re: My node',
      replyToUuid: sent.json<{ uuid: string }>().uuid,
    });

    // Nothing moves twice.
    const quiet = await poll();
    expect(quiet?.session).toMatchObject({ sent: [], received: [] });
    expect(await subjectsIn(node, 'fsx_gen')).toEqual(['From the node']);
    expect(await subjectsIn(hub, 'fsx_gen')).toEqual(['From the node']);
    expect(errors).toEqual([]);
  });
});
