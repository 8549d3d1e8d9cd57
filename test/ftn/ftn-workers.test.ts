import { afterEach, expect, it, vi } from 'vitest';
import type { FtnWorkers } from '../../src/ftn/ftn-service.js';
import { describeEachDialect, describeOnPostgres, fakeClock, openSecondNode } from '../support/test-board.js';
import {
  API,
  createFtnTestBoard,
  dropInbound,
  type FtnTestBoard,
  HUB,
  hubEchomail,
  outboundPackets,
  packetFrom,
} from './ftn-board.js';

const WAIT = { timeout: 10_000, interval: 20 };

/** What a serving node does by itself: scans after posts and queued netmail, tosses what waits at start. */
describeEachDialect('FTN workers', (dialect) => {
  let board: FtnTestBoard;
  let workers: FtnWorkers | undefined;
  const errors: unknown[] = [];

  afterEach(async () => {
    await workers?.stop();
    await board.close();
    expect(errors).toEqual([]);
  });

  it('tosses what waits in the inbound when it starts, and packs posts and netmail soon after they are made', async () => {
    board = await createFtnTestBoard(dialect, { clock: fakeClock() });
    dropInbound(board, '00000001.pkt', packetFrom([hubEchomail()]));
    workers = await board.board.ftn.startWorkers({ onError: (error) => errors.push(error) });
    await vi.waitFor(async () => {
      const list = await board.app.inject({
        method: 'GET',
        url: `${API}/messages/areas/fsx_gen/messages`,
        headers: board.alice.auth,
      });
      expect(list.json<{ data: unknown[] }>().data).toHaveLength(1);
    }, WAIT);

    const posted = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/fsx_gen/messages`,
      headers: board.alice.auth,
      payload: { subject: 'Soon', message: 'Out by itself.' },
    });
    expect(posted.statusCode).toBe(201);
    await vi.waitFor(() => {
      expect(outboundPackets(board, HUB).flatMap((packet) => packet.messages.map((m) => m.subject))).toEqual(['Soon']);
    }, WAIT);

    const mailed = await board.app.inject({
      method: 'POST',
      url: `${API}/mail`,
      headers: board.alice.auth,
      payload: { to: 'Hub Sysop@21:1/100', subject: 'Netmail', body: 'Out by itself too.' },
    });
    expect(mailed.statusCode).toBe(201);
    await vi.waitFor(() => {
      const subjects = outboundPackets(board, HUB).flatMap((packet) => packet.messages.map((m) => m.subject));
      expect(subjects.sort()).toEqual(['Netmail', 'Soon']);
    }, WAIT);
  });
});

describeOnPostgres('FTN workers on several nodes', () => {
  it('packs a post made on another node, woken by its NOTIFY', async () => {
    const clock = fakeClock();
    const board = await createFtnTestBoard('postgres', { clock });
    const other = await openSecondNode(board, clock);
    const errors: unknown[] = [];
    const workers = await board.board.ftn.startWorkers({ onError: (error) => errors.push(error) });
    try {
      const posted = await other.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/fsx_bbs/messages`,
        headers: board.alice.auth,
        payload: { subject: 'From node B', message: 'Posted elsewhere.' },
      });
      expect(posted.statusCode).toBe(201);
      await vi.waitFor(() => {
        expect(outboundPackets(board, HUB).flatMap((packet) => packet.messages.map((m) => m.subject))).toEqual([
          'From node B',
        ]);
      }, WAIT);
      expect(errors).toEqual([]);
    } finally {
      await workers.stop();
      await other.close();
      await board.close();
    }
  });
});
