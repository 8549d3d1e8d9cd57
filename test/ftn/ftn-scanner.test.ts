import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import type { ScanReport } from '../../src/ftn/ftn-scanner.js';
import { importMessages } from '../../src/messages/message-import.js';
import { BAUD_VERSION } from '../../src/version.js';
import { baudCommand, baudEnvironment } from '../support/baud-command.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import {
  API,
  createFtnTestBoard,
  DOWNLINK,
  DOWNLINK_PASSWORD,
  dropInbound,
  type FtnTestBoard,
  ftnConfig,
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
    expect(packet?.name).toMatch(/^[0-9a-f]{8}\.(su|mo|tu|we|th|fr|sa)0$/);
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

  it('exports each message once when three nodes scan at the same time', async () => {
    const POSTS = 1000;
    board = await createFtnTestBoard(dialect, { clock });
    // Enough for several passes each (200 messages an area a pass), so the nodes' passes overlap;
    // loaded in bulk, as `baud message import` does: messages of the area like any post.
    for (const areaTag of ['fsx_gen', 'fsx_bbs']) {
      const lines = Array.from({ length: POSTS / 2 }, (_, index) => {
        const number = areaTag === 'fsx_gen' ? 2 * index + 2 : 2 * index + 1;
        return JSON.stringify({
          from: 'alice',
          subject: `Post ${number}`,
          body: `Text ${number}`,
          timestamp: START.toISOString(),
        });
      });
      await importMessages(
        board.board,
        areaTag,
        (async function* () {
          yield* lines;
        })(),
      );
    }
    // Three nodes, each a process of its own on the same database and data directory, as
    // `baud ftn scan` or serving nodes would be (one process holding two SQLite connections
    // would block itself: better-sqlite3 waits for a lock synchronously).
    const configFile = path.join(board.dir, 'config.hjson');
    writeFileSync(
      configFile,
      JSON.stringify({
        ...ftnConfig(),
        paths: { dataDir: board.dir },
        database: { url: board.databaseUrl },
        logging: { level: 'silent' },
      }),
    );
    const scanInAProcess = (): Promise<ScanReport[]> => {
      const [command, args] = baudCommand(['ftn', 'scan', '--json', '--config', configFile]);
      return new Promise((resolve, reject) => {
        execFile(command, args, { env: baudEnvironment() }, (error, stdout, stderr) => {
          if (error) reject(new Error(`${error.message}\n${stderr}`));
          else resolve(JSON.parse(stdout) as ScanReport[]);
        });
      });
    };
    const reports = await Promise.all([scanInAProcess(), scanInAProcess(), scanInAProcess()]);
    expect(reports.flat().reduce((sum, report) => sum + report.echomail, 0)).toBe(POSTS);
    const messages = outboundPackets(board, HUB).flatMap((packet) => packet.messages);
    expect(messages.map((message) => message.subject).sort()).toEqual(
      Array.from({ length: POSTS }, (_, index) => `Post ${index + 1}`).sort(),
    );
    const msgIds = messages.map((message) => message.body.kludges.find((kludge) => kludge.name === 'MSGID')?.value);
    expect(new Set(msgIds).size).toBe(POSTS);
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
