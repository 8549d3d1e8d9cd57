import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { BAUD_VERSION } from '../../src/version.js';
import { describeEachDialect, fakeClock, openSecondNode } from '../support/test-board.js';
import {
  API,
  createFtnTestBoard,
  DOWNLINK,
  DOWNLINK_PASSWORD,
  dropInbound,
  type FtnTestBoard,
  HUB,
  HUB_PASSWORD,
  hubEchomail,
  outboundPackets,
  packetFrom,
} from './ftn-board.js';

type Auth = { authorization: string };

const START = new Date('2026-11-21T12:00:00.000Z');
/** The first MSGID serial: the Unix time the network's counter was made (the board's opening). */
const FIRST_SERIAL = Math.floor(START.getTime() / 1000);
const serialHex = (serial: number) => serial.toString(16).padStart(8, '0');
const EMPTY_SCAN = { network: 'fsxnet', echomail: 0, netmail: 0, packets: 0, failed: [] };

/**
 * Packing what goes out: posts in echomail areas once into the hub's outbound (and every
 * downlink's), with AREA, MSGID, REPLY, tear and origin lines, SEEN-BY and PATH; tossed echomail on
 * to the links that have not seen it; exactly once across nodes racing; the same packet name again
 * after a crash between the packet and the cursor.
 */
describeEachDialect('FTN scanner', (dialect) => {
  let board: FtnTestBoard;
  const clock = fakeClock(START);

  afterEach(async () => {
    await board?.close();
  });

  const post = async (auth: Auth, areaTag: string, payload: Record<string, unknown>) => {
    const posted = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/${areaTag}/messages`,
      headers: auth,
      payload,
    });
    expect(posted.statusCode).toBe(201);
    return posted.json<{ messageId: number; uuid: string }>();
  };
  const scan = async () => {
    const [report] = await board.board.ftn.scan('fsxnet');
    return report;
  };

  it('packs a post into the hub’s outbound once, as FTS-0004 and FTS-0009 write it', async () => {
    board = await createFtnTestBoard(dialect, { clock });
    await post(board.alice.auth, 'fsx_gen', { subject: 'Hello from baud', message: 'Hi all.\nSecond line: café.' });
    await post(board.alice.auth, 'local', { subject: 'Stays here', message: 'Not an echo.' });
    expect(await scan()).toEqual({ ...EMPTY_SCAN, echomail: 1, packets: 1 });

    const [packet, ...others] = outboundPackets(board, HUB);
    expect(others).toEqual([]);
    expect(packet?.name).toMatch(/^[0-9a-f]{8}\.pkt$/);
    expect(packet?.header).toMatchObject({
      origin: { zone: 21, net: 1, node: 999, point: 0 },
      destination: { zone: 21, net: 1, node: 100, point: 0 },
      password: HUB_PASSWORD,
    });
    expect(
      packet?.packed.map((message) => [message.origNet, message.origNode, message.destNet, message.destNode]),
    ).toEqual([[1, 999, 1, 100]]);
    expect(packet?.messages).toEqual([
      {
        fromName: 'alice',
        toName: 'All',
        subject: 'Hello from baud',
        writtenAt: { year: 2026, month: 11, day: 21, hour: 12, minute: 0, second: 0 },
        body: {
          area: 'FSX_GEN',
          kludges: [
            { name: 'MSGID', value: `21:1/999 ${serialHex(FIRST_SERIAL)}` },
            { name: 'TZUTC', value: '0000' },
          ],
          text: 'Hi all.\nSecond line: café.',
          tearLine: `baud ${BAUD_VERSION}`,
          origin: { text: 'The Test Board', address: { zone: 21, net: 1, node: 999, point: 0, domain: null } },
          seenBy: [
            { net: 1, node: 100 },
            { net: 1, node: 999 },
          ],
          path: [{ net: 1, node: 999 }],
          charset: 'CP437',
        },
      },
    ]);

    expect(await scan()).toEqual(EMPTY_SCAN);
    expect(outboundPackets(board, HUB)).toHaveLength(1);
  });

  it('answers a tossed message with REPLY, and sends a line starting with ^A as @', async () => {
    board = await createFtnTestBoard(dialect, { clock });
    dropInbound(board, '00000001.pkt', packetFrom([hubEchomail()]));
    await board.board.ftn.toss('fsxnet');
    // What came from the hub is not sent back to it.
    expect(await scan()).toEqual(EMPTY_SCAN);
    const list = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/fsx_gen/messages`,
      headers: board.alice.auth,
    });
    const [tossed] = list.json<{ data: { messageId: number }[] }>().data;
    await post(board.alice.auth, 'fsx_gen', {
      subject: 'Re: Hello fsxNet',
      message: 'Welcome back.\n\u0001NOT: a kludge',
      toUserName: 'Nancy Node',
      replyToMessageId: tossed?.messageId,
    });
    expect(await scan()).toEqual({ ...EMPTY_SCAN, echomail: 1, packets: 1 });
    const [message] = outboundPackets(board, HUB)[0]?.messages ?? [];
    expect(message?.toName).toBe('Nancy Node');
    expect(message?.body.kludges).toEqual([
      { name: 'MSGID', value: `21:1/999 ${serialHex(FIRST_SERIAL)}` },
      { name: 'REPLY', value: '21:1/5 00001000' },
      { name: 'TZUTC', value: '0000' },
    ]);
    expect(message?.body.text).toBe('Welcome back.\n@NOT: a kludge');
  });

  it('forwards tossed echomail to the downlinks that have not seen it, and a downlink’s to the hub', async () => {
    board = await createFtnTestBoard(dialect, {
      clock,
      ftn: { ftn: { networks: { fsxnet: { downlinks: [{ address: DOWNLINK, password: DOWNLINK_PASSWORD }] } } } },
    });
    dropInbound(board, '00000001.pkt', packetFrom([hubEchomail()]));
    await board.board.ftn.toss('fsxnet');
    expect(await scan()).toEqual({ ...EMPTY_SCAN, echomail: 1, packets: 1 });
    expect(outboundPackets(board, HUB)).toEqual([]);
    const [forwarded] = outboundPackets(board, DOWNLINK);
    expect(forwarded?.header).toMatchObject({ destination: { net: 1, node: 1000 }, password: DOWNLINK_PASSWORD });
    expect(forwarded?.messages.map((message) => message.body)).toEqual([
      {
        area: 'FSX_GEN',
        kludges: [
          { name: 'MSGID', value: '21:1/5 00001000' },
          { name: 'PID', value: 'Mystic 1.12' },
          { name: 'TZUTC', value: '0200' },
        ],
        text: 'First line.\nSecond line, CP437: café ░▒▓.',
        tearLine: 'Mystic BBS v1.12',
        origin: { text: 'Nodes Place', address: { zone: 21, net: 1, node: 5, point: 0, domain: null } },
        seenBy: [
          { net: 1, node: 5 },
          { net: 1, node: 100 },
          { net: 1, node: 999 },
          { net: 1, node: 1000 },
        ],
        path: [
          { net: 1, node: 5 },
          { net: 1, node: 100 },
          { net: 1, node: 999 },
        ],
        charset: 'CP437',
      },
    ]);
    expect(forwarded?.messages[0]?.writtenAt).toEqual({
      year: 2026,
      month: 11,
      day: 20,
      hour: 10,
      minute: 30,
      second: 0,
    });

    // The downlink's own message goes to the hub, not back to the downlink.
    const fromDownlink = hubEchomail({
      fromName: 'Dora Downlink',
      msgIdSerial: 0x77,
      origin: { zone: 21, net: 1, node: 1000, point: 0, domain: null },
      seenBy: [{ net: 1, node: 1000 }],
      path: [{ net: 1, node: 1000 }],
    });
    dropInbound(board, '00000002.pkt', packetFrom([fromDownlink], { from: DOWNLINK, password: DOWNLINK_PASSWORD }));
    await board.board.ftn.toss('fsxnet');
    expect(await scan()).toEqual({ ...EMPTY_SCAN, echomail: 1, packets: 1 });
    const toHub = outboundPackets(board, HUB);
    expect(
      toHub.flatMap((packet) => packet.messages.map((message) => [message.fromName, message.body.seenBy])),
    ).toEqual([
      [
        'Dora Downlink',
        [
          { net: 1, node: 100 },
          { net: 1, node: 999 },
          { net: 1, node: 1000 },
        ],
      ],
    ]);
    expect(outboundPackets(board, DOWNLINK)).toHaveLength(1);

    // A post goes to both, each seeing the other in SEEN-BY.
    await post(board.alice.auth, 'fsx_bbs', { subject: 'Ours', message: 'To everyone.' });
    expect(await scan()).toEqual({ ...EMPTY_SCAN, echomail: 1, packets: 2 });
    for (const link of [HUB, DOWNLINK]) {
      const newest = outboundPackets(board, link)
        .flatMap((packet) => packet.messages)
        .find((message) => message.subject === 'Ours');
      expect(newest?.body.seenBy).toEqual([
        { net: 1, node: 100 },
        { net: 1, node: 999 },
        { net: 1, node: 1000 },
      ]);
    }
  });

  it('exports each message once when two nodes scan at the same time', async () => {
    board = await createFtnTestBoard(dialect, { clock });
    const second = await openSecondNode(board, clock);
    try {
      for (let number = 1; number <= 30; number++) {
        await post(board.alice.auth, number % 2 === 0 ? 'fsx_gen' : 'fsx_bbs', {
          subject: `Post ${number}`,
          message: `Text ${number}`,
        });
      }
      const reports = await Promise.all([
        board.board.ftn.scan('fsxnet'),
        second.board.ftn.scan('fsxnet'),
        board.board.ftn.scan('fsxnet'),
        second.board.ftn.scan('fsxnet'),
      ]);
      expect(reports.flat().reduce((sum, report) => sum + report.echomail, 0)).toBe(30);
      const subjects = outboundPackets(board, HUB).flatMap((packet) =>
        packet.messages.map((message) => message.subject),
      );
      expect(subjects.sort()).toEqual(Array.from({ length: 30 }, (_, index) => `Post ${index + 1}`).sort());
      const msgIds = outboundPackets(board, HUB).flatMap((packet) =>
        packet.messages.map((message) => message.body.kludges.find((kludge) => kludge.name === 'MSGID')?.value),
      );
      expect(new Set(msgIds).size).toBe(30);
    } finally {
      await second.close();
    }
  });

  it('writes the same packet name again after a crash between the packet and its cursor', async () => {
    board = await createFtnTestBoard(dialect, { clock });
    await post(board.alice.auth, 'fsx_gen', { subject: 'First', message: 'One.' });
    // The cursor's write fails after the packet was renamed into the outbound, as a crash there would.
    if (dialect === 'sqlite') {
      await sql`CREATE TRIGGER fail_cursor BEFORE INSERT ON ftn_export_cursors
        BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(board.board.db);
    } else {
      await sql`CREATE FUNCTION fail_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure'; END $$`.execute(board.board.db);
      await sql`CREATE TRIGGER fail_cursor BEFORE INSERT ON ftn_export_cursors
        FOR EACH ROW EXECUTE FUNCTION fail_cursor()`.execute(board.board.db);
    }
    await expect(scan()).rejects.toThrow('injected failure');
    const [crashed, ...none] = outboundPackets(board, HUB);
    expect(none).toEqual([]);
    expect(crashed?.messages.map((message) => message.subject)).toEqual(['First']);
    const crashedMsgId = crashed?.messages[0]?.body.kludges[0];

    await sql`DROP TRIGGER fail_cursor${sql.raw(dialect === 'postgres' ? ' ON ftn_export_cursors' : '')}`.execute(
      board.board.db,
    );
    await post(board.alice.auth, 'fsx_gen', { subject: 'Second', message: 'Two.' });
    expect(await scan()).toEqual({ ...EMPTY_SCAN, echomail: 2, packets: 1 });
    const [again, ...still] = outboundPackets(board, HUB);
    expect(still).toEqual([]);
    expect(again?.name).toBe(crashed?.name);
    expect(again?.messages.map((message) => message.subject)).toEqual(['First', 'Second']);
    expect(again?.messages[0]?.body.kludges[0]).toEqual(crashedMsgId);
    expect(await scan()).toEqual(EMPTY_SCAN);
  });
});
