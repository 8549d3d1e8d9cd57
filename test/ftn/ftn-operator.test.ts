import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/board.js';
import { configFromObject } from '../../src/config/load-config.js';
import { runBaud } from '../support/run-baud.js';
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
  hubEchomail,
  packetFrom,
} from './ftn-board.js';

const START = new Date('2026-11-21T12:00:00.000Z');

/** Makes one file of each kind: a packet for the hub, one waiting in the inbound, one moved to bad, a netmail queued. */
async function fillSpool(board: FtnTestBoard): Promise<void> {
  const posted = await board.app.inject({
    method: 'POST',
    url: `${API}/messages/areas/fsx_gen/messages`,
    headers: board.alice.auth,
    payload: { subject: 'Out', message: 'Going out.' },
  });
  expect(posted.statusCode).toBe(201);
  await board.board.ftn.scan('fsxnet');
  dropInbound(board, '00000001.pkt', packetFrom([hubEchomail()], { password: 'wrong' }));
  await board.board.ftn.toss('fsxnet');
  dropInbound(board, '00000002.pkt', packetFrom([hubEchomail({ msgIdSerial: 2 })]));
  const mailed = await board.app.inject({
    method: 'POST',
    url: `${API}/mail`,
    headers: board.alice.auth,
    payload: { to: 'Hub Sysop@21:1/100', subject: 'Hi', body: 'Queued.' },
  });
  expect(mailed.statusCode).toBe(201);
}

const sizeIn = (directory: string, name: string) => statSync(path.join(directory, name)).size;

/** `GET /admin/ftn`: the operator's figures per network, for sysops only. */
describeEachDialect('GET /admin/ftn', (dialect) => {
  let board: FtnTestBoard;
  beforeEach(async () => {
    board = await createFtnTestBoard(dialect, {
      clock: fakeClock(START),
      ftn: { ftn: { networks: { fsxnet: { downlinks: [{ address: DOWNLINK, password: DOWNLINK_PASSWORD }] } } } },
    });
  });
  afterEach(async () => {
    await board.close();
  });

  it('shows each network’s links, spool and last toss to a sysop', async () => {
    await fillSpool(board);
    const spool = board.network.spool();
    const hubOutbound = spool.outboundFor(board.network.hub.address);
    const [outboundFile = ''] = readdirSync(hubOutbound);
    const answer = await board.app.inject({ method: 'GET', url: `${API}/admin/ftn`, headers: board.sysop.auth });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({
      networks: [
        {
          network: 'fsxnet',
          address: '21:1/999',
          pollMinutes: 0,
          areas: 2,
          links: [
            {
              address: HUB,
              role: 'hub',
              calls: '127.0.0.1:24554',
              lastSession: null,
              inSessionOn: null,
              outbound: { files: 1, bytes: sizeIn(hubOutbound, outboundFile) },
            },
            {
              address: DOWNLINK,
              role: 'downlink',
              calls: null,
              lastSession: null,
              inSessionOn: null,
              outbound: { files: 1, bytes: expect.any(Number) },
            },
          ],
          inbound: { files: 1, bytes: sizeIn(spool.inbound, '00000002.pkt') },
          bad: { files: 1, bytes: sizeIn(spool.bad, '00000001.pkt') },
          queuedNetmail: 1,
          lastToss: {
            network: 'fsxnet',
            fileName: '00000001.pkt',
            tossedAt: START.toISOString(),
            outcome: 'bad',
            imported: 0,
            duplicates: 0,
            skipped: 0,
            detail: 'the packet from 21:1/100 carries the wrong password',
          },
        },
      ],
    });
  });

  it('refuses members with 403 and anonymous callers with 401', async () => {
    const member = await board.app.inject({ method: 'GET', url: `${API}/admin/ftn`, headers: board.alice.auth });
    expect(member.statusCode).toBe(403);
    expect(member.json()).toMatchObject({ code: 'ftn.sysops-only' });
    const anonymous = await board.app.inject({ method: 'GET', url: `${API}/admin/ftn` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 'auth.required' });
  });
});

/** `baud ftn status|toss|scan`, as an operator runs them. */
describe('the ftn commands', () => {
  let dir: string;
  let config: string;
  const baud = (...args: string[]) => runBaud([...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-ftn-cli-'));
    config = path.join(dir, 'config.hjson');
    const settings = {
      ...ftnConfig(),
      paths: { dataDir: dir },
      database: { url: `sqlite:${path.join(dir, 'baud.db')}` },
      logging: { level: 'silent' },
    };
    writeFileSync(config, JSON.stringify(settings));
    const board = await openBoard(configFromObject(settings));
    try {
      await board.credentials.createAccount({ username: 'alice', password: 'correct horse battery' });
    } finally {
      await board.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('tosses, scans and shows the status as a table and as JSON', async () => {
    const inbound = path.join(dir, 'ftn', 'fsxnet', 'inbound');
    writeFileSync(path.join(inbound, '00000001.pkt'), packetFrom([hubEchomail()]));
    writeFileSync(path.join(inbound, '00000002.pkt'), packetFrom([hubEchomail({ msgIdSerial: 2 })], { password: 'x' }));

    const tossed = await baud('ftn', 'toss');
    expect(tossed.code, tossed.stderr).toBe(0);
    expect(tossed.stdout).toBe(
      'fsxnet: tossed 2 files (1 packet): 1 echomail, 0 netmail imported, 0 duplicates, 0 skipped, 1 to bad\n',
    );
    const scanned = await baud('ftn', 'scan', 'fsxnet');
    expect(scanned.stdout).toBe('fsxnet: packed 0 echomail and 0 netmail into 0 packets\n');

    const status = await baud('ftn', 'status');
    expect(status.code, status.stderr).toBe(0);
    const badBytes = statSync(path.join(dir, 'ftn', 'fsxnet', 'bad', '00000002.pkt')).size;
    expect(status.stdout.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')).toBe(
      [
        'fsxnet 21:1/999 (polled on demand, 2 echo areas)',
        '  LINK      ROLE  CALLED AT        OUTBOUND  LAST SESSION',
        '  21:1/100  hub   127.0.0.1:24554  none      never',
        `  inbound: none · bad: 1 file (${badBytes.toLocaleString('en-US')} bytes) · netmail queued: 0`,
        '  last toss: <time> 00000002.pkt bad: the packet from 21:1/100 carries the wrong password',
        '',
      ].join('\n'),
    );
    const json = await baud('ftn', 'status', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      networks: [{ network: 'fsxnet', address: '21:1/999', bad: { files: 1, bytes: badBytes }, queuedNetmail: 0 }],
    });

    const unknown = await baud('ftn', 'toss', 'othernet');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('baud: No FTN network "othernet" (known: fsxnet).\n');
  });
});
