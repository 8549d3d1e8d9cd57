import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type Dialect, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { BinkpCommand } from '../../src/ftn/binkp-frame.js';
import type { BinkpProgress } from '../../src/ftn/binkp-session.js';
import { parseFtnAddress } from '../../src/ftn/ftn-address.js';
import { createFtnLinkStore } from '../../src/ftn/ftn-link-store.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';
import { callHub, PASSWORD, startHubServer } from './support/baud-binkp-server.js';
import {
  connectRawPeer,
  filesIn,
  HUB,
  NODE,
  putFile,
  readIn,
  startCuttingProxy,
  tempSpool,
} from './support/binkp-fixtures.js';

/** baud calling baud: the node 21:1/999 calls the hub 21:1/100 (our client against our server). */

const cleanUps: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
});

function spoolFor(label: string) {
  const spool = tempSpool(label);
  cleanUps.push(() => spool.remove());
  return spool;
}

async function hubServer(...args: Parameters<typeof startHubServer>) {
  const hub = await startHubServer(...args);
  cleanUps.push(() => hub.server.close());
  return hub;
}

describe('a binkp session between two baud boards', () => {
  it('moves files both ways byte for byte, deleting each sent file only once confirmed', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    const toNode = {
      '0000beef.mo0': putFile(hubSpool.outboundFor(NODE), '0000beef.mo0', 100_000),
      'empty.pkt': putFile(hubSpool.outboundFor(NODE), 'empty.pkt', 0),
    };
    const toHub = {
      '12345678.pkt': putFile(nodeSpool.outboundFor(HUB), '12345678.pkt', 70_001),
      '0000cafe.th9': putFile(nodeSpool.outboundFor(HUB), '0000cafe.th9', 32767 * 3),
    };
    const { server, sessions } = await hubServer(hubSpool);

    const report = await callHub(nodeSpool, server.port);

    expect(report).toMatchObject({ ok: true, remoteAddresses: [HUB], skipped: [] });
    expect([...report.sent].sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: '0000cafe.th9', size: 32767 * 3 },
      { name: '12345678.pkt', size: 70_001 },
    ]);
    expect(report.received.map(({ name, size, resumedFrom }) => [name, size, resumedFrom]).sort()).toEqual([
      ['0000beef.mo0', 100_000, 0],
      ['empty.pkt', 0, 0],
    ]);
    expect(report.bytesIn).toBe(100_000);
    expect(report.bytesOut).toBe(70_001 + 32767 * 3);
    for (const [name, content] of Object.entries(toNode))
      expect(readIn(nodeSpool.inbound, name).equals(content)).toBe(true);
    for (const [name, content] of Object.entries(toHub))
      expect(readIn(hubSpool.inbound, name).equals(content)).toBe(true);
    expect(filesIn(nodeSpool.outboundFor(HUB))).toEqual([]);
    expect(filesIn(hubSpool.outboundFor(NODE))).toEqual([]);
    expect(filesIn(nodeSpool.partial)).toEqual([]);
    expect(filesIn(hubSpool.partial)).toEqual([]);
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({ ok: true, network: 'fsxnet', link: NODE, remoteAddresses: [NODE] });
    expect(sessions[0]?.received.map((file) => file.name).sort()).toEqual(['0000cafe.th9', '12345678.pkt']);
  });

  it('leaves files the scanner is still writing (named with a leading dot) in the outbound', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    putFile(nodeSpool.outboundFor(HUB), '.0000cafe.th9', 1000);
    const { server } = await hubServer(hubSpool);

    const report = await callHub(nodeSpool, server.port);

    expect(report).toMatchObject({ ok: true, sent: [], received: [] });
    expect(filesIn(nodeSpool.outboundFor(HUB))).toEqual(['.0000cafe.th9']);
    expect(filesIn(hubSpool.inbound)).toEqual([]);
  });

  it('reports each file starting, moving and done, both ways, for a progress bar', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    putFile(hubSpool.outboundFor(NODE), '0000beef.mo0', 70_000);
    putFile(nodeSpool.outboundFor(HUB), '12345678.pkt', 10);
    const { server } = await hubServer(hubSpool);
    const events: BinkpProgress[] = [];

    const report = await callHub(nodeSpool, server.port, { onProgress: (event) => events.push(event) });

    expect(report.ok).toBe(true);
    const incoming = events.filter((event) => event.direction === 'in');
    expect(incoming).toEqual([
      { type: 'file-started', direction: 'in', name: '0000beef.mo0', size: 70_000, offset: 0 },
      { type: 'file-progress', direction: 'in', name: '0000beef.mo0', size: 70_000, bytes: 32767 },
      { type: 'file-progress', direction: 'in', name: '0000beef.mo0', size: 70_000, bytes: 65534 },
      { type: 'file-progress', direction: 'in', name: '0000beef.mo0', size: 70_000, bytes: 70_000 },
      { type: 'file-done', direction: 'in', name: '0000beef.mo0', size: 70_000 },
    ]);
    expect(events.filter((event) => event.direction === 'out')).toEqual([
      { type: 'file-started', direction: 'out', name: '12345678.pkt', size: 10, offset: 0 },
      { type: 'file-progress', direction: 'out', name: '12345678.pkt', size: 10, bytes: 10 },
      { type: 'file-done', direction: 'out', name: '12345678.pkt', size: 10 },
    ]);
  });

  it('gives a file another name when the inbound holds one of that name not tossed yet', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    const waiting = putFile(nodeSpool.inbound, '0000beef.mo0', 10);
    putFile(nodeSpool.inbound, '1234abcd.pkt', 10);
    const bundle = putFile(hubSpool.outboundFor(NODE), '0000beef.mo0', 20);
    const packet = putFile(hubSpool.outboundFor(NODE), '1234abcd.pkt', 30);
    const { server } = await hubServer(hubSpool);

    const report = await callHub(nodeSpool, server.port);

    expect(report.received.map((file) => file.name).sort()).toEqual(['0000beef.mo1', '1234abcd_1.pkt']);
    expect(readIn(nodeSpool.inbound, '0000beef.mo0').equals(waiting)).toBe(true);
    expect(readIn(nodeSpool.inbound, '0000beef.mo1').equals(bundle)).toBe(true);
    expect(readIn(nodeSpool.inbound, '1234abcd_1.pkt').equals(packet)).toBe(true);
  });

  it('refuses a wrong password on both sides: the caller hears "Bad password", nothing moves', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    putFile(hubSpool.outboundFor(NODE), '0000beef.mo0', 1000);
    putFile(nodeSpool.outboundFor(HUB), '12345678.pkt', 1000);
    const { server, sessions } = await hubServer(hubSpool);

    const report = await callHub(nodeSpool, server.port, { password: 'guess' });

    expect(report).toMatchObject({
      ok: false,
      error: 'the link refused the session: "Bad password"',
      sent: [],
      received: [],
    });
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({ ok: false, error: 'wrong password from 21:1/999@fsxnet', received: [] });
    expect(filesIn(hubSpool.inbound)).toEqual([]);
    expect(filesIn(hubSpool.partial)).toEqual([]);
    expect(filesIn(nodeSpool.inbound)).toEqual([]);
    expect(filesIn(hubSpool.outboundFor(NODE))).toEqual(['0000beef.mo0']);
    expect(filesIn(nodeSpool.outboundFor(HUB))).toEqual(['12345678.pkt']);
  });

  it('refuses a caller that is no configured link with M_ERR naming its addresses', async () => {
    const hubSpool = spoolFor('hub');
    const { server, sessions } = await hubServer(hubSpool, { findLink: () => null });

    const report = await callHub(spoolFor('node'), server.port);

    expect(report).toMatchObject({
      ok: false,
      error: 'the link refused the session: "No link configured for 21:1/999@fsxnet"',
    });
    expect(sessions).toEqual([]);
  });

  it('hangs up on a system that answers with another address than the one called', async () => {
    const hubSpool = spoolFor('hub');
    const { server, sessions } = await hubServer(hubSpool);

    const report = await callHub(spoolFor('node'), server.port, { hub: parseFtnAddress('21:1/200@fsxnet') });

    expect(report).toMatchObject({ ok: false, error: 'called 21:1/200@fsxnet but it presented 21:1/100@fsxnet' });
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]?.error).toBe(
      'the link refused the session: "called 21:1/200@fsxnet but it presented 21:1/100@fsxnet"',
    );
  });

  it('reports a connection refused as a failed session', async () => {
    const { server } = await startHubServer(spoolFor('hub'));
    const port = server.port;
    await server.close();

    const report = await callHub(spoolFor('node'), port);

    expect(report).toMatchObject({ ok: false, sent: [], received: [], remoteAddresses: [] });
    expect(report.error).toBe(`could not connect to 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('refuses a file over the size limit with M_SKIP: it stays with the sender for later', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    putFile(nodeSpool.outboundFor(HUB), 'big.zip', 5000);
    putFile(nodeSpool.outboundFor(HUB), 'small.pkt', 100);
    const { server, sessions } = await hubServer(hubSpool, { limits: { maxFileBytes: 4096 } });

    const report = await callHub(nodeSpool, server.port);

    expect(report.ok).toBe(true);
    expect(report.sent).toEqual([{ name: 'small.pkt', size: 100 }]);
    expect(report.skipped).toEqual([
      { direction: 'out', name: 'big.zip', size: 5000, reason: 'the link skipped it (M_SKIP)' },
    ]);
    expect(filesIn(nodeSpool.outboundFor(HUB))).toEqual(['big.zip']);
    expect(filesIn(hubSpool.inbound)).toEqual(['small.pkt']);
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]?.skipped).toEqual([
      { direction: 'in', name: 'big.zip', size: 5000, reason: 'larger than the limit of 4096 bytes' },
    ]);
  });

  it('takes at most maxFilesPerSession files; the rest are skipped and come next session', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    for (const name of ['a.pkt', 'b.pkt', 'c.pkt']) putFile(nodeSpool.outboundFor(HUB), name, 10);
    const { server } = await hubServer(hubSpool, { limits: { maxFilesPerSession: 2 } });

    expect((await callHub(nodeSpool, server.port)).sent).toHaveLength(2);
    expect(filesIn(hubSpool.inbound)).toHaveLength(2);
    expect((await callHub(nodeSpool, server.port)).sent).toHaveLength(1);
    expect(filesIn(hubSpool.inbound)).toEqual(['a.pkt', 'b.pkt', 'c.pkt']);
    expect(filesIn(nodeSpool.outboundFor(HUB))).toEqual([]);
  });

  it('resumes files cut off mid-way in both directions from what arrived: no byte twice, files whole', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    const down = putFile(hubSpool.outboundFor(NODE), '0000beef.mo0', 300_000);
    const { server, sessions } = await hubServer(hubSpool);

    // Hub → node, cut after 100 kB.
    const cutDown = await startCuttingProxy({
      targetPort: server.port,
      direction: 'from-target',
      cutAfterBytes: 100_000,
    });
    cleanUps.push(() => cutDown.close());
    expect((await callHub(nodeSpool, cutDown.port)).ok).toBe(false);
    expect(filesIn(nodeSpool.inbound)).toEqual([]);
    const partDown = readIn(nodeSpool.partial, filesIn(nodeSpool.partial)[0] ?? '').length;
    expect(partDown).toBeGreaterThan(0);

    const resumedDown = await callHub(nodeSpool, server.port);
    expect(resumedDown).toMatchObject({
      ok: true,
      received: [{ name: '0000beef.mo0', size: 300_000, resumedFrom: partDown }],
      bytesIn: 300_000 - partDown,
    });
    expect(readIn(nodeSpool.inbound, '0000beef.mo0').equals(down)).toBe(true);

    // Node → hub, cut after 100 kB.
    const up = putFile(nodeSpool.outboundFor(HUB), '12345678.pkt', 300_000);
    const cutUp = await startCuttingProxy({ targetPort: server.port, direction: 'to-target', cutAfterBytes: 100_000 });
    cleanUps.push(() => cutUp.close());
    expect((await callHub(nodeSpool, cutUp.port)).ok).toBe(false);
    // The hub writes what reached it before the cut, then its session ends too.
    await expect.poll(() => sessions.length).toBe(3);
    expect(filesIn(hubSpool.inbound)).toEqual([]);
    const partUp = readIn(hubSpool.partial, filesIn(hubSpool.partial)[0] ?? '').length;
    expect(partUp).toBeGreaterThan(0);

    const resumedUp = await callHub(nodeSpool, server.port);
    expect(resumedUp).toMatchObject({ ok: true, sent: [{ name: '12345678.pkt', size: 300_000 }] });
    expect(resumedUp.bytesOut).toBe(300_000 - partUp);
    expect(readIn(hubSpool.inbound, '12345678.pkt').equals(up)).toBe(true);
    expect(filesIn(hubSpool.partial)).toEqual([]);
    expect(filesIn(nodeSpool.partial)).toEqual([]);
  });

  it('hangs up when the call is aborted, keeping what arrived in partial/ and nothing in the inbound', async () => {
    const hubSpool = spoolFor('hub');
    const nodeSpool = spoolFor('node');
    putFile(hubSpool.outboundFor(NODE), '0000beef.mo0', 2_000_000);
    const { server } = await hubServer(hubSpool);
    const abort = new AbortController();

    const report = await callHub(nodeSpool, server.port, {
      signal: abort.signal,
      onProgress: (event) => {
        if (event.type === 'file-progress' && event.bytes >= 100_000) abort.abort();
      },
    });

    expect(report).toMatchObject({ ok: false, error: 'connection error: the call was cancelled', received: [] });
    expect(filesIn(nodeSpool.inbound)).toEqual([]);
    expect(filesIn(nodeSpool.partial)).toHaveLength(1);
    expect(filesIn(hubSpool.outboundFor(NODE))).toEqual(['0000beef.mo0']);
  });
});

describe('a sender in reliable mode (no NR)', () => {
  it('is asked with M_GET to go on from the partial file, and its data sent meanwhile is dropped', async () => {
    const hubSpool = spoolFor('hub');
    const { server, sessions } = await hubServer(hubSpool);
    const content = randomBytes(1000);
    // What an earlier session left: the first 400 bytes.
    writeFileSync(path.join(hubSpool.partial, `21.1.999.0.1000.1700000000.old.pkt`), content.subarray(0, 400));
    const peer = await connectRawPeer(server.port);
    cleanUps.push(() => void peer.socket.destroy());
    peer.sendFrame(BinkpCommand.M_NUL, 'VER oldmailer/1.0 binkp/1.0');
    peer.sendFrame(BinkpCommand.M_ADR, '21:1/999@fsxnet');
    peer.sendFrame(BinkpCommand.M_PWD, PASSWORD);
    await peer.waitForCommand(BinkpCommand.M_OK);

    // Offered from 0, with data straight after, as binkp/1.0 senders do.
    peer.sendFrame(BinkpCommand.M_FILE, 'old.pkt 1000 1700000000 0');
    peer.sendData(content.subarray(0, 300));
    expect(await peer.waitForCommand(BinkpCommand.M_GET)).toBe('old.pkt 1000 1700000000 400');
    peer.sendFrame(BinkpCommand.M_FILE, 'old.pkt 1000 1700000000 400');
    peer.sendData(content.subarray(400));
    expect(await peer.waitForCommand(BinkpCommand.M_GOT)).toBe('old.pkt 1000 1700000000');
    peer.sendFrame(BinkpCommand.M_EOB);
    await peer.waitForCommand(BinkpCommand.M_EOB);
    await peer.closed;

    expect(readIn(hubSpool.inbound, 'old.pkt').equals(content)).toBe(true);
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({
      ok: true,
      received: [{ name: 'old.pkt', size: 1000, resumedFrom: 400 }],
      bytesIn: 300 + 600,
    });
  });
});

describeEachDialect('the link lock around binkp sessions', (dialect: Dialect) => {
  let dir: string;
  let schema: string;
  let nodeA: Database;
  let nodeB: Database;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-binkp-lock-'));
    schema = `baud_test_${randomBytes(6).toString('hex')}`;
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    nodeA = await openDatabase(url, { poolSize: 2 });
    await migrateToLatest(nodeA);
    nodeB = await openDatabase(url, { poolSize: 2 });
  });

  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs one session per link across two nodes: a second call while the first runs hears M_BSY', async () => {
    const hubSpool = spoolFor('hub');
    const storeA = createFtnLinkStore(nodeA.db);
    const storeB = createFtnLinkStore(nodeB.db);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let isHolding = false;
    // Node A holds the session (in its lock) until the test lets go.
    const a = await hubServer(hubSpool, {
      lockLink: (network, address, run) =>
        storeA.withLinkLock(network, address, 'node-a', async () => {
          isHolding = true;
          await held;
          return run();
        }),
    });
    const b = await hubServer(hubSpool, {
      lockLink: (network, address, run) => storeB.withLinkLock(network, address, 'node-b', run),
    });
    const nodeSpool = spoolFor('node');
    putFile(nodeSpool.outboundFor(HUB), '12345678.pkt', 1000);

    const first = callHub(nodeSpool, a.server.port);
    await expect.poll(() => isHolding).toBe(true);
    const second = await callHub(spoolFor('node2'), b.server.port);
    expect(second).toMatchObject({
      ok: false,
      error: 'the link is busy: "A session with 21:1/999@fsxnet is running already"',
    });
    expect(b.sessions).toEqual([]);

    release();
    expect(await first).toMatchObject({ ok: true, sent: [{ name: '12345678.pkt', size: 1000 }] });
    // Node A reports its session once its lock is released; then node B takes the next call.
    await expect.poll(() => a.sessions.length).toBe(1);
    const third = await callHub(nodeSpool, b.server.port);
    expect(third.ok, third.error).toBe(true);
  });
});
