import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/board.js';
import { configFromObject } from '../../src/config/load-config.js';
import type { Dialect } from '../../src/db/database.js';
import { unpackMessage } from '../../src/ftn/ftn-message.js';
import { readPacket } from '../../src/ftn/packet.js';
import { runBaud } from '../support/run-baud.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';
import {
  API,
  bundledPacket,
  createFtnTestBoard,
  type FtnTestBoard,
  filesIn,
  ftnConfig,
  HUB,
  HUB_PASSWORD,
  hubEchomail,
  hubNetmail,
  packetFrom,
} from './ftn-board.js';
import { type BinkdNode, binkdFiles, createBinkdNode, isBinkdInstalled } from './support/binkd-runner.js';

const installed = isBinkdInstalled();
if (!installed) {
  if (process.env.CI === 'true')
    throw new Error('binkd is not installed (apt-get install binkd): these tests must run in CI');
  console.warn('\n!! /usr/sbin/binkd is missing (apt-get install binkd): SKIPPING the board-to-binkd tests.\n');
}
const describeWithBinkd = installed
  ? describeEachDialect
  : (name: string, body: (dialect: Dialect) => void) => describe.skip(name, () => body('sqlite'));

/** Debian's binkd as our hub: it knows one link, us (21:1/999), with the hub's password. */
function binkdHub(cleanUps: (() => Promise<void>)[]): BinkdNode {
  const node = createBinkdNode({
    address: '21:1/100@fsxnet',
    link: { address: '21:1/999@fsxnet', password: HUB_PASSWORD },
  });
  cleanUps.push(() => node.remove());
  return node;
}

const NO_SCAN = { network: 'fsxnet', echomail: 0, netmail: 0, packets: 0, failed: [] };
const NO_TOSS = { network: 'fsxnet', files: 0, packets: 0, echomail: 0, netmail: 0, duplicates: 0, skipped: 0, bad: 0 };

/**
 * A board polling Debian's binkd as its hub: echomail both ways byte for byte (what we packed is
 * what binkd got; what the hub's packet said is what the area shows), and nothing twice on the
 * next polls, even when the hub sends the same packet again.
 */
describeWithBinkd('a board polling binkd as its hub', (dialect) => {
  const cleanUps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  });

  async function boardPolling(binkd: BinkdNode): Promise<FtnTestBoard> {
    const port = await binkd.serve();
    const board = await createFtnTestBoard(dialect, {
      clock: fakeClock(new Date('2026-11-21T12:00:00.000Z')),
      ftn: { ftn: { networks: { fsxnet: { hub: { port } } } } },
    });
    cleanUps.push(() => board.close());
    return board;
  }

  it('sends a post and a netmail and receives the hub’s echomail and netmail byte for byte, and nothing twice', async () => {
    const binkd = binkdHub(cleanUps);
    const board = await boardPolling(binkd);
    const fromHub = packetFrom([hubEchomail(), hubNetmail()]);
    writeFileSync(path.join(binkd.obox, '0000000a.pkt'), fromHub);
    const posted = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/fsx_gen/messages`,
      headers: board.alice.auth,
      payload: { subject: 'Hello binkd', message: 'Sent from baud.\nSecond line: naïve ✓' },
    });
    expect(posted.statusCode).toBe(201);
    const mailed = await board.app.inject({
      method: 'POST',
      url: `${API}/mail`,
      headers: board.alice.auth,
      payload: { to: 'Hub Sysop@21:1/100', subject: 'Node number', body: 'Thank you for 21:1/999.' },
    });
    expect(mailed.statusCode).toBe(201);

    // Packed first, to keep the packet's bytes; the poll's own scan then finds nothing more.
    expect(await board.board.ftn.scan('fsxnet')).toEqual([{ ...NO_SCAN, echomail: 1, netmail: 1, packets: 1 }]);
    const outbound = board.network.spool().outboundFor(board.network.hub.address);
    const [ourName = ''] = filesIn(outbound);
    const ourBytes = readFileSync(path.join(outbound, ourName));

    const [report] = await board.board.ftn.poll('fsxnet');
    expect(report, binkd.log()).toEqual({
      network: 'fsxnet',
      scan: NO_SCAN,
      session: {
        link: HUB,
        outcome: 'ok',
        sent: [{ name: ourName, size: ourBytes.length }],
        received: [{ name: '0000000a.pkt', size: fromHub.length }],
        bytesIn: fromHub.length,
        bytesOut: ourBytes.length,
        seconds: expect.any(Number),
      },
      toss: { ...NO_TOSS, files: 1, packets: 1, echomail: 1, netmail: 1 },
    });

    // What binkd holds is the bundle we wrote, byte for byte, and the post's text in its packet exactly.
    expect(readFileSync(path.join(binkd.inbound, ourName)).equals(ourBytes)).toBe(true);
    const [sent, netmail] = bundledPacket(readFileSync(path.join(binkd.inbound, ourName))).messages;
    expect([sent?.subject, sent?.body.text, sent?.body.charset]).toEqual([
      'Hello binkd',
      'Sent from baud.\nSecond line: naïve ✓',
      'UTF-8',
    ]);
    // The netmail for the hub's sysop, addressed to them (INTL), in the same bundle.
    expect([netmail?.toName, netmail?.subject, netmail?.body.text, netmail?.body.area]).toEqual([
      'Hub Sysop',
      'Node number',
      'Thank you for 21:1/999.',
      null,
    ]);
    expect(netmail?.body.kludges).toContainEqual({ name: 'INTL', value: '21:1/100 21:1/999' });
    expect(filesIn(outbound)).toEqual([]);

    // What the hub's packet said is what the area shows.
    const list = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/fsx_gen/messages`,
      headers: board.alice.auth,
    });
    const uuids = list.json<{ data: { uuid: string; subject: string }[] }>().data;
    expect(uuids.map((message) => message.subject)).toEqual(['Hello binkd', 'Hello fsxNet']);
    const tossed = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/${uuids[1]?.uuid}`,
      headers: board.alice.auth,
    });
    const original = unpackMessage([...readPacket(fromHub).messages][0] ?? hubEchomail());
    expect(tossed.json<{ body: string; fromUserName: string }>()).toMatchObject({
      body: original.body.text,
      fromUserName: original.fromName,
    });
    const inbox = await board.app.inject({ method: 'GET', url: `${API}/mail`, headers: board.alice.auth });
    expect(inbox.json<{ data: { from: string }[] }>().data.map((mail) => mail.from)).toEqual(['Hub Sysop@21:1/100']);

    // The next poll moves nothing; the hub sending the same packet again brings no duplicate.
    const [quiet] = await board.board.ftn.poll('fsxnet');
    expect(quiet?.session).toMatchObject({ outcome: 'ok', sent: [], received: [] });
    expect(quiet?.toss).toEqual(NO_TOSS);
    writeFileSync(path.join(binkd.obox, '0000000b.pkt'), fromHub);
    const [again] = await board.board.ftn.poll('fsxnet');
    expect(again?.toss).toEqual({ ...NO_TOSS, files: 1, packets: 1, duplicates: 2 });
    const after = await board.app.inject({
      method: 'GET',
      url: `${API}/messages/areas/fsx_gen/messages`,
      headers: board.alice.auth,
    });
    expect(after.json<{ data: unknown[] }>().data).toHaveLength(2);
    expect(binkdFiles(binkd.obox)).toEqual([]);

    const status = await board.board.ftn.status();
    expect(status.networks[0]?.links[0]?.lastSession).toMatchObject({ ok: true, error: null, filesIn: 1, filesOut: 0 });
  });

  it('reports a hub that refuses the password as a failed session, and keeps the packet for the next poll', async () => {
    const binkd = createBinkdNode({
      address: '21:1/100@fsxnet',
      link: { address: '21:1/999@fsxnet', password: 'other' },
    });
    cleanUps.push(() => binkd.remove());
    const board = await boardPolling(binkd);
    await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/fsx_gen/messages`,
      headers: board.alice.auth,
      payload: { subject: 'Waits', message: 'For a good session.' },
    });
    const [report] = await board.board.ftn.poll('fsxnet');
    expect(report?.session).toMatchObject({ link: HUB, outcome: 'failed', sent: [], received: [] });
    expect(filesIn(board.network.spool().outboundFor(board.network.hub.address))).toHaveLength(1);
    const status = await board.board.ftn.status();
    expect(status.networks[0]?.links[0]?.lastSession).toMatchObject({ ok: false, error: expect.any(String) });
  });
});

/** `baud ftn poll`, as an operator runs it against a binkd hub. */
(installed ? describe : describe.skip)('baud ftn poll', () => {
  const cleanUps: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  });

  it('prints progress on stderr and a summary on stdout, and exits 1 when the call fails', async () => {
    const binkd = createBinkdNode({
      address: '21:1/100@fsxnet',
      link: { address: '21:1/999@fsxnet', password: HUB_PASSWORD },
    });
    cleanUps.push(() => binkd.remove());
    const port = await binkd.serve();
    const dir = mkdtempSync(path.join(tmpdir(), 'baud-ftn-poll-'));
    cleanUps.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = path.join(dir, 'config.hjson');
    const settings = {
      ...ftnConfig({ ftn: { networks: { fsxnet: { hub: { port } } } } }),
      paths: { dataDir: dir },
      database: { url: `sqlite:${path.join(dir, 'baud.db')}` },
      logging: { level: 'silent' },
    };
    writeFileSync(config, JSON.stringify(settings));
    await (await openBoard(configFromObject(settings))).close();
    const fromHub = packetFrom([hubEchomail()]);
    writeFileSync(path.join(binkd.obox, '0000000a.pkt'), fromHub);

    const polled = await runBaud(['ftn', 'poll', '--config', config], { cwd: dir });
    expect(polled.code, `${polled.stderr}\n${binkd.log()}`).toBe(0);
    expect(polled.stdout.replace(/ok in [\d.]+ s/, 'ok in <t> s')).toBe(
      [
        'fsxnet: packed 0 echomail and 0 netmail into 0 packets',
        `fsxnet: session with 21:1/100 ok in <t> s: sent 0 files (0 bytes), received 1 file (${fromHub.length.toLocaleString('en-US')} bytes)`,
        'fsxnet: tossed 1 file (1 packet): 1 echomail, 0 netmail imported, 0 duplicates, 0 skipped, 0 to bad',
        '',
      ].join('\n'),
    );
    expect(polled.stderr).toContain(`fsxnet: calling 21:1/100 at 127.0.0.1:${port} …\n`);
    expect(polled.stderr).toMatch(/fsxnet <- 0000000a\.pkt \[#+\] \d+\/\d+ bytes/);

    const status = await runBaud(['ftn', 'status', '--config', config], { cwd: dir });
    expect(status.stdout).toMatch(/ {2}21:1\/100 {2}hub {3}127\.0\.0\.1:\d+ {2}none {6}\d{4}-\d\d-\d\dT[\d:.]+Z ok\n/);

    await binkd.stop();
    const failed = await runBaud(['ftn', 'poll', 'fsxnet', '--config', config], { cwd: dir });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(
      /^fsxnet: session with 21:1\/100 failed after [\d.]+ s: could not connect to 127\.0\.0\.1:\d+: .+ \(sent 0 files \(0 bytes\), received 0 files \(0 bytes\)\)$/m,
    );
  });
});
