import { existsSync, readFileSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEventHub } from '../../src/events/event-hub.js';
import type { BoardEvent } from '../../src/events/event-log.js';
import { writeBundle } from '../../src/ftn/bundle.js';
import { unpackMessage } from '../../src/ftn/ftn-message.js';
import { MAX_MESSAGES_PER_PACKET } from '../../src/ftn/ftn-tosser.js';
import { readPacket } from '../../src/ftn/packet.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import {
  API,
  createFtnTestBoard,
  dropInbound,
  type FtnTestBoard,
  filesIn,
  hubEchomail,
  hubNetmail,
  packetFrom,
} from './ftn-board.js';

type Auth = { authorization: string };

interface MessageDetail {
  messageId: number;
  uuid: string;
  areaTag: string;
  replyToMessageId: number | null;
  fromUserName: string;
  toUserName: string;
  subject: string;
  timestamp: string;
  body: string;
  network: Record<string, unknown>;
  threadRootId: number;
}

const EMPTY_REPORT = {
  network: 'fsxnet',
  files: 0,
  packets: 0,
  echomail: 0,
  netmail: 0,
  duplicates: 0,
  skipped: 0,
  bad: 0,
};

/**
 * Tossing what the hub sent: echomail into its areas with exact bodies and FTN metadata, threads
 * from REPLY, netmail into inboxes, duplicates refused by MSGID, bad packets moved aside with a
 * reason and nothing written, a toss that fails half way leaving nothing, and bundles.
 */
describeEachDialect('FTN tosser', (dialect) => {
  let board: FtnTestBoard;
  const clock = fakeClock(new Date('2026-11-21T12:00:00.000Z'));

  beforeEach(async () => {
    board = await createFtnTestBoard(dialect, { clock });
  });
  afterEach(async () => {
    await board.close();
  });

  const get = (auth: Auth | undefined, url: string) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers: auth ?? {} });
  const areaMessages = async (areaTag: string): Promise<MessageDetail[]> => {
    const list = await get(board.alice.auth, `/messages/areas/${areaTag}/messages`);
    expect(list.statusCode).toBe(200);
    const summaries = list.json<{ data: { uuid: string }[] }>().data;
    return Promise.all(
      summaries.map(async ({ uuid }) => (await get(board.alice.auth, `/messages/${uuid}`)).json<MessageDetail>()),
    );
  };
  const toss = async () => {
    const [report] = await board.board.ftn.toss('fsxnet');
    return report;
  };

  it('tosses echomail into its areas with exact bodies, FTN metadata and threads, and netmail into the inbox', async () => {
    const reply = hubEchomail({
      fromName: 'Rita Replier',
      subject: 'Re: Hello fsxNet',
      text: 'Hello Nancy.\nUTF-8 here: 日本語 ✓',
      msgIdSerial: 0x1001,
      replyTo: '21:1/5 00001000',
      origin: { zone: 21, net: 1, node: 7, point: 0, domain: null },
      originLine: 'Ritas Retreat',
      utcOffsetMinutes: -300,
    });
    const other = hubEchomail({
      area: 'fsx_bbs',
      subject: 'Software',
      text: 'Which BBS software?',
      msgIdSerial: 0x1002,
    });
    dropInbound(board, '0000000a.pkt', packetFrom([hubEchomail(), reply, other, hubNetmail()]));

    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 1, echomail: 3, netmail: 1 });
    expect(filesIn(board.network.spool().inbound)).toEqual([]);

    const general = await areaMessages('fsx_gen');
    expect(general.map(({ messageId, uuid, threadRootId, ...rest }) => rest)).toEqual([
      {
        areaTag: 'fsx_gen',
        replyToMessageId: null,
        fromUserName: 'Nancy Node',
        toUserName: 'All',
        subject: 'Hello fsxNet',
        timestamp: '2026-11-20T08:30:00.000Z',
        body: 'First line.\nSecond line, CP437: café ░▒▓.',
        network: {
          ftnOrigNode: '21:1/5',
          ftnArea: 'FSX_GEN',
          ftnTearLine: '--- Mystic BBS v1.12',
          ftnMsgId: '21:1/5 00001000',
          ftnOrigin: ' * Origin: Nodes Place (21:1/5)',
          ftnSeenBy: ['SEEN-BY: 1/5 100 999'],
          ftnPath: ['1/5 100'],
        },
        replyCount: 1,
      },
      {
        areaTag: 'fsx_gen',
        replyToMessageId: general[0]?.messageId,
        fromUserName: 'Rita Replier',
        toUserName: 'All',
        subject: 'Re: Hello fsxNet',
        timestamp: '2026-11-20T15:30:00.000Z',
        body: 'Hello Nancy.\nUTF-8 here: 日本語 ✓',
        network: {
          ftnOrigNode: '21:1/7',
          ftnArea: 'FSX_GEN',
          ftnTearLine: '--- Mystic BBS v1.12',
          ftnMsgId: '21:1/7 00001001',
          ftnReplyId: '21:1/5 00001000',
          ftnOrigin: ' * Origin: Ritas Retreat (21:1/7)',
          ftnSeenBy: ['SEEN-BY: 1/5 100 999'],
          ftnPath: ['1/5 100'],
        },
        replyCount: 0,
      },
    ]);
    expect(general[1]?.threadRootId).toBe(general[0]?.messageId);
    const bbs = await areaMessages('fsx_bbs');
    expect(bbs.map((message) => [message.subject, message.body, message.network.ftnArea])).toEqual([
      ['Software', 'Which BBS software?', 'fsx_bbs'],
    ]);

    const inbox = await get(board.alice.auth, '/mail');
    const mails = inbox.json<{ data: { uuid: string }[] }>().data;
    expect(mails).toHaveLength(1);
    const mail = (await get(board.alice.auth, `/mail/${mails[0]?.uuid}`)).json<Record<string, unknown>>();
    expect({ ...mail, uuid: 'u', messageId: 0 }).toEqual({
      uuid: 'u',
      messageId: 0,
      from: 'Hub Sysop@21:1/100',
      to: 'alice',
      subject: 'Welcome',
      timestamp: '2026-11-20T10:30:00.000Z',
      read: false,
      replyToUuid: null,
      body: 'Your node number is 21:1/999.',
    });
    expect((await get(board.alice.auth, '/users/me')).json<{ unreadMail: number }>().unreadMail).toBe(1);

    // The same packet again (a second link, a resent session): every message is a duplicate.
    dropInbound(board, '0000000b.pkt', packetFrom([hubEchomail(), reply, other, hubNetmail()]));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 1, duplicates: 4 });
    expect(await areaMessages('fsx_gen')).toHaveLength(2);
    expect((await get(board.alice.auth, '/mail')).json<{ data: unknown[] }>().data).toHaveLength(1);
  });

  it('announces tossed messages as events, like posts', async () => {
    const before = await board.board.events.latestId();
    dropInbound(board, '0000000a.pkt', packetFrom([hubEchomail(), hubNetmail()]));
    await toss();
    const events = await board.board.events.readAfter(before);
    expect(events.map((event) => [event.type, event.areaTag, event.userId])).toEqual([
      ['message.created', 'fsx_gen', null],
      ['mail.received', null, board.alice.userId],
    ]);
    expect(events[0]?.data).toMatchObject({ subject: 'Hello fsxNet', fromUserName: 'Nancy Node', confTag: 'fsx' });
    expect(events[1]?.data).toMatchObject({ from: 'Hub Sysop@21:1/100', to: 'alice', subject: 'Welcome', read: false });
  });

  it('announces a packet of 1,201 messages as 1,201 events in message order, and wakes a reader', async () => {
    // Only a wake-up can deliver them: the reader's timer would fire in an hour.
    const hub = createEventHub({
      log: board.board.events,
      database: board.board.database,
      pollIntervalMs: 3_600_000,
      onError: (error) => {
        throw error;
      },
    });
    await hub.start();
    const seen: BoardEvent[] = [];
    hub.subscribe((events) => seen.push(...events));
    try {
      // More than one statement's worth of events (500 a statement), in two areas.
      const subjects = Array.from({ length: 1201 }, (_, index) => `Big packet ${index}`);
      const messages = subjects.map((subject, index) =>
        hubEchomail({ area: index % 3 === 0 ? 'FSX_BBS' : 'FSX_GEN', subject, msgIdSerial: 0x5000 + index }),
      );
      dropInbound(board, '00000020.pkt', packetFrom(messages));
      expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 1, echomail: 1201 });
      await expect.poll(() => seen.length).toBe(1201);
      expect(seen.map((event) => event.type)).toEqual(subjects.map(() => 'message.created'));
      expect(seen.map((event) => event.data.subject)).toEqual(subjects);
      expect(seen.map((event) => event.areaTag)).toEqual(
        subjects.map((_, index) => (index % 3 === 0 ? 'fsx_bbs' : 'fsx_gen')),
      );
      const ids = seen.map((event) => event.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(1201);
      const messageIds = seen.map((event) => Number(event.data.messageId));
      expect(messageIds).toEqual([...messageIds].sort((a, b) => a - b));
      expect(await board.board.events.readAfter(ids[0] ?? 0, 10_000)).toHaveLength(1200);
    } finally {
      await hub.close();
    }
  });

  it('finds tossed messages with the search', async () => {
    dropInbound(board, '0000000a.pkt', packetFrom([hubEchomail()]));
    await toss();
    const found = await get(board.alice.auth, '/messages/search?q=caf%C3%A9');
    expect(found.json<{ data: { subject: string }[] }>().data.map((hit) => hit.subject)).toEqual(['Hello fsxNet']);
  });

  it('moves a packet with the wrong password to bad with its reason, and writes nothing', async () => {
    dropInbound(board, '0000000c.pkt', packetFrom([hubEchomail(), hubNetmail()], { password: 'WRONG' }));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, bad: 1 });
    const { bad, inbound } = board.network.spool();
    expect(filesIn(inbound)).toEqual([]);
    expect(filesIn(bad)).toEqual(['0000000c.pkt', '0000000c.pkt.reason.txt']);
    expect(readFileSync(path.join(bad, '0000000c.pkt.reason.txt'), 'utf8')).toBe(
      'the packet from 21:1/100 carries the wrong password\n',
    );
    expect(await areaMessages('fsx_gen')).toEqual([]);
    expect((await get(board.alice.auth, '/mail')).json<{ data: unknown[] }>().data).toEqual([]);
  });

  it('takes the password in any case, and refuses a packet without one', async () => {
    dropInbound(board, '0000000c.pkt', packetFrom([hubEchomail()], { password: 'secret' }));
    dropInbound(board, '0000000d.pkt', packetFrom([hubEchomail({ msgIdSerial: 7 })], { password: '' }));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 2, packets: 1, echomail: 1, bad: 1 });
    expect(readFileSync(path.join(board.network.spool().bad, '0000000d.pkt.reason.txt'), 'utf8')).toBe(
      "the packet from 21:1/100 carries no password (its link's password is expected)\n",
    );
  });

  it('refuses packets from strangers, to others, and that do not read, each with its reason', async () => {
    const whole = packetFrom([hubEchomail(), hubEchomail({ msgIdSerial: 2 })]);
    dropInbound(board, '00000001.pkt', packetFrom([hubEchomail()], { from: '21:1/55' }));
    dropInbound(board, '00000002.pkt', packetFrom([hubEchomail()], { to: '21:1/998' }));
    // Cut inside the second message: the first reads, and still nothing may be written.
    dropInbound(board, '00000003.pkt', whole.subarray(0, whole.length - 40));
    dropInbound(board, 'readme.txt', Buffer.from('hello'));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 4, bad: 4 });
    const { bad } = board.network.spool();
    const reason = (name: string) => readFileSync(path.join(bad, `${name}.reason.txt`), 'utf8');
    expect(reason('00000001.pkt')).toBe('the packet comes from 21:1/55, which is not a link of fsxnet\n');
    expect(reason('00000002.pkt')).toBe('the packet is addressed to 21:1/998, not to this board (21:1/999)\n');
    expect(reason('00000003.pkt')).toMatch(/^packet message 2 \(byte \d+\): the packet ends inside the body/);
    expect(reason('readme.txt')).toBe('neither a packet (*.pkt) nor a bundle (*.su0 … *.sa9): baud tosses mail only\n');
    expect(await areaMessages('fsx_gen')).toEqual([]);
    const journal = await board.board.db
      .selectFrom('ftnTossJournal')
      .select(['fileName', 'outcome'])
      .orderBy('id')
      .execute();
    expect(journal).toEqual([
      { fileName: '00000001.pkt', outcome: 'bad' },
      { fileName: '00000002.pkt', outcome: 'bad' },
      { fileName: '00000003.pkt', outcome: 'bad' },
      { fileName: 'readme.txt', outcome: 'bad' },
    ]);
  });

  it('moves a packet and a bundle of 4 GiB to bad by their size, reading none of either', async () => {
    const { inbound, bad } = board.network.spool();
    const size = 4 * 1024 ** 3;
    // Sparse files: a real start, then 4 GiB of nothing on disk. Reading one whole would throw
    // (past Node's 2 GiB buffer limit) and fail the toss.
    dropInbound(board, '00000031.pkt', packetFrom([hubEchomail()]));
    truncateSync(path.join(inbound, '00000031.pkt'), size);
    dropInbound(
      board,
      '0badcafe.we0',
      writeBundle([{ name: 'aaaa0001.pkt', data: packetFrom([hubEchomail()]) }], {
        modifiedAt: new Date('2026-11-20T10:00:00Z'),
      }),
    );
    truncateSync(path.join(inbound, '0badcafe.we0'), size);
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 2, bad: 2 });
    expect(filesIn(inbound)).toEqual([]);
    for (const name of ['00000031.pkt', '0badcafe.we0']) {
      expect(statSync(path.join(bad, name)).size).toBe(size);
      expect(readFileSync(path.join(bad, `${name}.reason.txt`), 'utf8')).toBe(
        '4294967296 bytes: larger than the 67108864 bytes a packet or bundle is read up to\n',
      );
    }
    expect(await areaMessages('fsx_gen')).toEqual([]);
  });

  it('moves a packet of more messages than a toss holds to bad, unread past the limit, and writes nothing', async () => {
    // One message over the limit, each a copy of one small message (only their count matters).
    const one = hubEchomail();
    dropInbound(board, '00000032.pkt', packetFrom(Array.from({ length: MAX_MESSAGES_PER_PACKET + 1 }, () => one)));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, bad: 1 });
    expect(readFileSync(path.join(board.network.spool().bad, '00000032.pkt.reason.txt'), 'utf8')).toBe(
      "the packet holds more than 20,000 messages (a hub's hold hundreds): refused unread, as tossing it would hold them all in memory\n",
    );
    expect(await areaMessages('fsx_gen')).toEqual([]);
  });

  it('keeps messages with nowhere to go in bad, as a packet that can be tossed again, and imports the rest', async () => {
    const unknownEcho = hubEchomail({ area: 'FSX_BOT', subject: 'Robots', msgIdSerial: 0x3000 });
    const stranger = hubNetmail({ toName: 'Nobody Here', msgIdSerial: 0x3001 });
    const transit = hubNetmail({
      destination: { zone: 21, net: 1, node: 4, point: 0, domain: null },
      msgIdSerial: 0x3002,
    });
    dropInbound(board, '0000000e.pkt', packetFrom([unknownEcho, hubEchomail(), stranger, transit]));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 1, echomail: 1, skipped: 3 });
    const { bad } = board.network.spool();
    expect(filesIn(bad)).toEqual(['0000000e-skipped.pkt', '0000000e-skipped.pkt.reason.txt']);
    expect(readFileSync(path.join(bad, '0000000e-skipped.pkt.reason.txt'), 'utf8')).toBe(
      [
        'message 1 (from "Nancy Node" to "All", subject "Robots"): echo "FSX_BOT" is not carried by this board (ftn.areas)',
        'message 3 (from "Hub Sysop" to "Nobody Here", subject "Welcome"): netmail to "Nobody Here": nobody here receives mail under that name',
        'message 4 (from "Hub Sysop" to "alice", subject "Welcome"): netmail for 21:1/4: baud routes no netmail in transit',
        '',
      ].join('\n'),
    );
    const kept = readPacket(readFileSync(path.join(bad, '0000000e-skipped.pkt')));
    expect([...kept.messages].map((message) => unpackMessage(message).subject)).toEqual([
      'Robots',
      'Welcome',
      'Welcome',
    ]);
    expect((await areaMessages('fsx_gen')).map((message) => message.subject)).toEqual(['Hello fsxNet']);
  });

  it('delivers netmail to "Sysop" to the sysop named in the configuration', async () => {
    dropInbound(board, '0000000f.pkt', packetFrom([hubNetmail({ toName: 'Sysop' })]));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 1, netmail: 1 });
    const inbox = (await get(board.sysop.auth, '/mail')).json<{ data: { from: string; to: string }[] }>().data;
    expect(inbox.map((mail) => [mail.from, mail.to])).toEqual([['Hub Sysop@21:1/100', 'sysop']]);
  });

  it('leaves nothing of a packet whose toss fails half way, and tosses it whole when tried again', async () => {
    // A failure after the messages went in (the MSGID rows come after them), as a crash would be.
    if (dialect === 'sqlite') {
      await sql`CREATE TRIGGER fail_toss BEFORE INSERT ON ftn_message_ids
        BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(board.board.db);
    } else {
      await sql`CREATE FUNCTION fail_toss() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure'; END $$`.execute(board.board.db);
      await sql`CREATE TRIGGER fail_toss BEFORE INSERT ON ftn_message_ids
        FOR EACH ROW EXECUTE FUNCTION fail_toss()`.execute(board.board.db);
    }
    dropInbound(board, '00000010.pkt', packetFrom([hubEchomail(), hubEchomail({ msgIdSerial: 9 }), hubNetmail()]));
    await expect(toss()).rejects.toThrow('injected failure');
    expect(filesIn(board.network.spool().inbound)).toEqual(['00000010.pkt']);
    const rows = await board.board.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(rows.count)).toBe(0);
    expect(await areaMessages('fsx_gen')).toEqual([]);
    expect((await get(board.alice.auth, '/users/me')).json<{ unreadMail: number }>().unreadMail).toBe(0);

    await sql`DROP TRIGGER fail_toss${sql.raw(dialect === 'postgres' ? ' ON ftn_message_ids' : '')}`.execute(
      board.board.db,
    );
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 1, echomail: 2, netmail: 1 });
    expect(await areaMessages('fsx_gen')).toHaveLength(2);
    expect(existsSync(path.join(board.network.spool().inbound, '00000010.pkt'))).toBe(false);
  });

  it('tosses the packets of a bundle, and keeps a bad one of them in bad', async () => {
    const bundle = writeBundle(
      [
        { name: 'aaaa0001.pkt', data: packetFrom([hubEchomail()]) },
        { name: 'aaaa0002.pkt', data: packetFrom([hubEchomail({ msgIdSerial: 5 })], { password: 'nope' }) },
        { name: 'aaaa0003.pkt', data: packetFrom([hubNetmail()]) },
      ],
      { modifiedAt: new Date('2026-11-20T10:00:00Z') },
    );
    dropInbound(board, '0badcafe.fr0', bundle);
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, packets: 2, echomail: 1, netmail: 1, bad: 1 });
    const { bad, inbound } = board.network.spool();
    expect(filesIn(inbound)).toEqual([]);
    expect(filesIn(bad)).toEqual(['0badcafe-aaaa0002.pkt', '0badcafe-aaaa0002.pkt.reason.txt']);
  });

  it('moves a bundle that is not a zip archive to bad', async () => {
    dropInbound(board, '0badcafe.mo1', Buffer.from('not a zip archive at all, just some bytes'));
    expect(await toss()).toEqual({ ...EMPTY_REPORT, files: 1, bad: 1 });
    expect(readFileSync(path.join(board.network.spool().bad, '0badcafe.mo1.reason.txt'), 'utf8')).toBe(
      'bundle: not a zip archive (no end-of-central-directory record)\n',
    );
  });

  it('leaves files being written (dot names) alone', async () => {
    dropInbound(board, '.00000011.pkt', packetFrom([hubEchomail()]));
    expect(await toss()).toEqual(EMPTY_REPORT);
    expect(filesIn(board.network.spool().inbound)).toEqual(['.00000011.pkt']);
  });
});
