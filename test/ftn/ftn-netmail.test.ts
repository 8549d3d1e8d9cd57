import { afterEach, beforeEach, expect, it } from 'vitest';
import { ATTRIBUTE_PRIVATE } from '../../src/ftn/ftn-message.js';
import { BAUD_VERSION } from '../../src/version.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import {
  API,
  createFtnTestBoard,
  DOWNLINK,
  DOWNLINK_PASSWORD,
  dropInbound,
  type FtnTestBoard,
  HUB,
  hubNetmail,
  outboundPackets,
  packetFrom,
} from './ftn-board.js';

type Auth = { authorization: string };
const START = new Date('2026-11-21T12:00:00.000Z');
const FIRST_SERIAL = Math.floor(START.getTime() / 1000);
const serialHex = (serial: number) => serial.toString(16).padStart(8, '0');

/**
 * Netmail through `POST /mail`: `to: "Name@21:1/100"` answers 201 like any mail and lands in the
 * sender's sent box; the scanner packs it (INTL, MSGID, private) for the hub, or for the downlink
 * that is the destination; replies to tossed netmail carry REPLY; addresses that do not read are 400.
 */
describeEachDialect('netmail from POST /mail', (dialect) => {
  let board: FtnTestBoard;
  const clock = fakeClock(START);

  beforeEach(async () => {
    board = await createFtnTestBoard(dialect, {
      clock,
      ftn: { ftn: { networks: { fsxnet: { downlinks: [{ address: DOWNLINK, password: DOWNLINK_PASSWORD }] } } } },
    });
  });
  afterEach(async () => {
    await board.close();
  });

  const send = (auth: Auth, payload: Record<string, unknown>) =>
    board.app.inject({ method: 'POST', url: `${API}/mail`, headers: auth, payload });
  const scan = async () => (await board.board.ftn.scan('fsxnet'))[0];

  it('answers 201, keeps the mail in the sent box, and packs it for the hub', async () => {
    const sent = await send(board.alice.auth, {
      to: 'Hub Sysop@21:1/100',
      subject: 'Node number',
      body: 'Thank you for 21:1/999.\nSee you on FSX_GEN.',
    });
    expect(sent.statusCode).toBe(201);
    const mail = sent.json<{ uuid: string; messageId: number }>();
    expect(sent.headers.location).toBe(`${API}/mail/${mail.uuid}`);
    expect(sent.json()).toEqual({
      uuid: mail.uuid,
      messageId: mail.messageId,
      from: 'alice',
      to: 'Hub Sysop@21:1/100',
      subject: 'Node number',
      timestamp: START.toISOString(),
      read: true,
      replyToUuid: null,
      body: 'Thank you for 21:1/999.\nSee you on FSX_GEN.',
    });
    const sentBox = await board.app.inject({ method: 'GET', url: `${API}/mail?box=sent`, headers: board.alice.auth });
    expect(sentBox.json<{ data: { to: string }[] }>().data.map((entry) => entry.to)).toEqual(['Hub Sysop@21:1/100']);
    const inbox = await board.app.inject({ method: 'GET', url: `${API}/mail`, headers: board.alice.auth });
    expect(inbox.json<{ data: unknown[] }>().data).toEqual([]);

    expect(await scan()).toEqual({ network: 'fsxnet', echomail: 0, netmail: 1, packets: 1, failed: [] });
    const [packet] = outboundPackets(board, HUB);
    expect(packet?.packed.map((message) => [message.attribute, message.destNet, message.destNode])).toEqual([
      [ATTRIBUTE_PRIVATE, 1, 100],
    ]);
    expect(packet?.messages).toEqual([
      {
        fromName: 'alice',
        toName: 'Hub Sysop',
        subject: 'Node number',
        writtenAt: { year: 2026, month: 11, day: 21, hour: 12, minute: 0, second: 0 },
        body: {
          area: null,
          kludges: [
            { name: 'INTL', value: '21:1/100 21:1/999' },
            { name: 'MSGID', value: `21:1/999 ${serialHex(FIRST_SERIAL)}` },
            { name: 'TZUTC', value: '0000' },
          ],
          text: 'Thank you for 21:1/999.\nSee you on FSX_GEN.',
          tearLine: `baud ${BAUD_VERSION}`,
          origin: null,
          seenBy: [],
          path: [],
          charset: 'CP437',
        },
      },
    ]);
    expect(await scan()).toEqual({ network: 'fsxnet', echomail: 0, netmail: 0, packets: 0, failed: [] });
  });

  it('routes netmail for a downlink (or its point) to it, and anything else through the hub', async () => {
    for (const to of ['Dora@21:1/1000', 'Pat Point@21:1/1000.3', 'Far Away@21:3/7', 'Named@21:1/5@fsxnet']) {
      expect((await send(board.alice.auth, { to, subject: 'Hi', body: 'Hello.' })).statusCode).toBe(201);
    }
    expect(await scan()).toEqual({ network: 'fsxnet', echomail: 0, netmail: 4, packets: 2, failed: [] });
    const names = (link: string) =>
      outboundPackets(board, link).flatMap((packet) => packet.messages.map((message) => message.toName));
    expect(names(DOWNLINK)).toEqual(['Dora', 'Pat Point']);
    expect(names(HUB)).toEqual(['Far Away', 'Named']);
    const toPoint = outboundPackets(board, DOWNLINK)[0]?.messages[1]?.body.kludges;
    expect(toPoint?.slice(0, 2)).toEqual([
      { name: 'INTL', value: '21:1/1000 21:1/999' },
      { name: 'TOPT', value: '3' },
    ]);
  });

  it('answers a tossed netmail with REPLY to its MSGID', async () => {
    dropInbound(board, '00000001.pkt', packetFrom([hubNetmail()]));
    await board.board.ftn.toss('fsxnet');
    const inbox = await board.app.inject({ method: 'GET', url: `${API}/mail`, headers: board.alice.auth });
    const [received] = inbox.json<{ data: { uuid: string; from: string }[] }>().data;
    expect(received?.from).toBe('Hub Sysop@21:1/100');
    const reply = await send(board.alice.auth, {
      to: received?.from,
      subject: 'Re: Welcome',
      body: 'Thanks!',
      replyToUuid: received?.uuid,
    });
    expect(reply.statusCode).toBe(201);
    expect(reply.json<{ replyToUuid: string }>().replyToUuid).toBe(received?.uuid);
    await scan();
    const kludges = outboundPackets(board, HUB)[0]?.messages[0]?.body.kludges;
    expect(kludges?.find((kludge) => kludge.name === 'REPLY')).toEqual({ name: 'REPLY', value: '21:1/100 00002000' });
  });

  it('refuses an address that does not read, or that no network of the board reaches, with 400', async () => {
    const refusals: [string, string][] = [
      ['Bob@21:1/99999', '"21:1/99999": the node 99999 is outside 0–32767'],
      ['Bob@2:5020/1', '"Bob@2:5020/1": no network of this board is in zone 2'],
      ['@21:1/100', '"@21:1/100": the name before @ is empty'],
      ['Bob@21:1/100@othernet', '"Bob@21:1/100@othernet": this board is in no network named "othernet"'],
      [
        'A Name Far Longer Than Netmail Holds@21:1/100',
        '"A Name Far Longer Than Netmail Holds@21:1/100": the name is longer than the 35 bytes netmail holds',
      ],
    ];
    for (const [to, detail] of refusals) {
      const refused = await send(board.alice.auth, { to, subject: 'Hi', body: 'Hello.' });
      expect(refused.statusCode, to).toBe(400);
      expect(refused.json()).toEqual({
        type: `${API}/errors/400`,
        title: 'Bad Request',
        status: 400,
        detail,
        code: 'mail.invalid-netmail-address',
        errors: [{ pointer: '/body/to', message: detail }],
      });
    }
    // A username with an @ that is no address is still a username.
    const unknown = await send(board.alice.auth, { to: 'bob@home', subject: 'Hi', body: 'Hello.' });
    expect(unknown.statusCode).toBe(404);
    expect(await scan()).toEqual({ network: 'fsxnet', echomail: 0, netmail: 0, packets: 0, failed: [] });
  });
});
