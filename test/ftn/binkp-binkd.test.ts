import { afterEach, describe, expect, it } from 'vitest';
import { callLink } from '../../src/ftn/binkp-client.js';
import { type BinkpServer, startBinkpServer } from '../../src/ftn/binkp-server.js';
import type { BinkpProgress, BinkpSessionReport } from '../../src/ftn/binkp-session.js';
import type { FtnAddress } from '../../src/ftn/ftn-address.js';
import { type BinkdNode, binkdFiles, createBinkdNode, isBinkdInstalled } from './support/binkd-runner.js';
import { filesIn, HUB, NODE, putFile, readIn, startCuttingProxy, tempSpool } from './support/binkp-fixtures.js';

/**
 * baud against Debian's binkd, the mailer most hubs run: binkd as the hub we call, and binkd
 * calling our server, both directions of files, passwords right and wrong, a line cut in the
 * middle of a file and resumed.
 */
const installed = isBinkdInstalled();
if (!installed) {
  if (process.env.CI === 'true')
    throw new Error('binkd is not installed (apt-get install binkd): the binkd tests must run in CI');
  console.warn('\n!! /usr/sbin/binkd is missing (apt-get install binkd): SKIPPING the tests against binkd.\n');
}

const PASSWORD = 'sesame';

const cleanUps: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
});

function binkdHub(password = PASSWORD, linkPort?: number): BinkdNode {
  const node = createBinkdNode({
    address: '21:1/100@fsxnet',
    link: { address: '21:1/999@fsxnet', password, ...(linkPort === undefined ? {} : { port: linkPort }) },
  });
  cleanUps.push(() => node.remove());
  return node;
}

/**
 * Until binkd's process for the cut session has finished (closed its partial file, dropped its
 * lock on the link): calling again sooner would hear M_BSY.
 */
async function binkdSessionEnded(binkd: BinkdNode): Promise<void> {
  await expect.poll(() => binkd.log(), { timeout: 10_000 }).toMatch(/done \(from 21:1\/999@fsxnet, failed/);
}

function ourSpool() {
  const spool = tempSpool('node');
  cleanUps.push(() => spool.remove());
  return spool;
}

function call(
  spool: ReturnType<typeof ourSpool>,
  port: number,
  password = PASSWORD,
  onProgress?: (e: BinkpProgress) => void,
) {
  return callLink({
    ourAddresses: [NODE],
    link: { address: HUB, host: '127.0.0.1', port, password },
    spool,
    ...(onProgress ? { onProgress } : {}),
  });
}

(installed ? describe : describe.skip)('baud calling binkd', () => {
  it('sends a file to binkd and receives the one binkd holds for it, byte for byte, with CRAM-MD5', async () => {
    const binkd = binkdHub();
    const theirs = putFile(binkd.obox, '0000beef.mo0', 150_000);
    const spool = ourSpool();
    const ours = putFile(spool.outboundFor(HUB), '12345678.pkt', 70_000);
    const port = await binkd.serve();

    const report = await call(spool, port);

    expect(report, binkd.log()).toMatchObject({
      ok: true,
      sent: [{ name: '12345678.pkt', size: 70_000 }],
      received: [{ name: '0000beef.mo0', size: 150_000, resumedFrom: 0 }],
      skipped: [],
      bytesIn: 150_000,
      bytesOut: 70_000,
    });
    expect(report.remoteAddresses).toEqual([HUB]);
    expect(readIn(spool.inbound, '0000beef.mo0').equals(theirs)).toBe(true);
    expect(readIn(binkd.inbound, '12345678.pkt').equals(ours)).toBe(true);
    // Each side deleted what it sent only once the other confirmed it.
    expect(filesIn(spool.outboundFor(HUB))).toEqual([]);
    expect(binkdFiles(binkd.obox)).toEqual([]);
    expect(filesIn(spool.partial)).toEqual([]);
    expect(binkd.log()).toContain('pwd protected session (MD5)');
  });

  it('is refused by binkd with a wrong password, and nothing moves either way', async () => {
    const binkd = binkdHub();
    putFile(binkd.obox, '0000beef.mo0', 1000);
    const spool = ourSpool();
    putFile(spool.outboundFor(HUB), '12345678.pkt', 1000);
    const port = await binkd.serve();

    const report = await call(spool, port, 'open says me');

    expect(report).toMatchObject({
      ok: false,
      error: 'the link refused the session: "Bad password"',
      sent: [],
      received: [],
    });
    expect(filesIn(spool.inbound)).toEqual([]);
    expect(filesIn(spool.partial)).toEqual([]);
    expect(filesIn(spool.outboundFor(HUB))).toEqual(['12345678.pkt']);
    expect(binkdFiles(binkd.obox)).toEqual(['0000beef.mo0']);
    expect(binkdFiles(binkd.inbound)).toEqual([]);
    expect(binkd.log()).toContain('incorrect password');
  });

  it('resumes a file from binkd cut off mid-way at what it has: no byte comes twice, the file is whole', async () => {
    const binkd = binkdHub();
    const theirs = putFile(binkd.obox, '0000beef.tu1', 400_000);
    const spool = ourSpool();
    const port = await binkd.serve();
    const line = await startCuttingProxy({ targetPort: port, direction: 'from-target', cutAfterBytes: 150_000 });
    cleanUps.push(() => line.close());

    const cut = await call(spool, line.port);
    expect(cut.ok).toBe(false);
    await binkdSessionEnded(binkd);
    // Nothing half-received is ever in the inbound; the part waits in partial/.
    expect(filesIn(spool.inbound)).toEqual([]);
    const [part] = filesIn(spool.partial);
    const have = readIn(spool.partial, part ?? '').length;
    expect(have).toBeGreaterThan(0);
    expect(have).toBeLessThan(150_000);

    const resumed = await call(spool, port);

    expect(resumed, binkd.log()).toMatchObject({
      ok: true,
      received: [{ name: '0000beef.tu1', size: 400_000, resumedFrom: have }],
      bytesIn: 400_000 - have,
    });
    expect(readIn(spool.inbound, '0000beef.tu1').equals(theirs)).toBe(true);
    expect(filesIn(spool.partial)).toEqual([]);
    expect(binkdFiles(binkd.obox)).toEqual([]);
  });

  it('resumes a file to binkd cut off mid-way where binkd asks: no byte goes twice, binkd gets it whole', async () => {
    const binkd = binkdHub();
    const spool = ourSpool();
    const ours = putFile(spool.outboundFor(HUB), '0000cafe.we2', 400_000);
    const port = await binkd.serve();
    const line = await startCuttingProxy({ targetPort: port, direction: 'to-target', cutAfterBytes: 150_000 });
    cleanUps.push(() => line.close());

    const cut = await call(spool, line.port);
    expect(cut.ok).toBe(false);
    await binkdSessionEnded(binkd);
    expect(filesIn(spool.outboundFor(HUB))).toEqual(['0000cafe.we2']);
    expect(binkdFiles(binkd.inbound)).toEqual([]);

    const starts: number[] = [];
    const resumed = await call(spool, port, PASSWORD, (event) => {
      if (event.type === 'file-started' && event.direction === 'out') starts.push(event.offset);
    });

    expect(resumed.ok, `${resumed.error}\n${binkd.log()}`).toBe(true);
    expect(starts).toHaveLength(1);
    const [from = 0] = starts;
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThan(150_000);
    expect(resumed.bytesOut).toBe(400_000 - from);
    expect(resumed.sent).toEqual([{ name: '0000cafe.we2', size: 400_000 }]);
    expect(readIn(binkd.inbound, '0000cafe.we2').equals(ours)).toBe(true);
    expect(filesIn(spool.outboundFor(HUB))).toEqual([]);
  });
});

(installed ? describe : describe.skip)('binkd calling baud', () => {
  /** Our server for one link, the hub at 21:1/100, with a lock that records its use. */
  async function ourServer(spool: ReturnType<typeof ourSpool>) {
    const sessions: (BinkpSessionReport & { network: string; link: FtnAddress })[] = [];
    const locked: string[] = [];
    const server: BinkpServer = await startBinkpServer({
      address: '127.0.0.1',
      port: 0,
      ourAddresses: [NODE],
      findLink: (presented) =>
        presented.some((address) => address.net === 1 && address.node === 100)
          ? { address: HUB, password: PASSWORD, spool, network: 'fsxnet' }
          : null,
      lockLink: async (network, address, run) => {
        locked.push(`${network} ${address.net}/${address.node}`);
        return run();
      },
      onSession: (report) => sessions.push(report),
    });
    cleanUps.push(() => server.close());
    return { server, sessions, locked };
  }

  it('answers binkd: files both ways, byte for byte, with CRAM-MD5, inside the link lock', async () => {
    const spool = ourSpool();
    const ours = putFile(spool.outboundFor(HUB), '12345678.pkt', 90_000);
    const { server, sessions, locked } = await ourServer(spool);
    const binkd = binkdHub(PASSWORD, server.port);
    const theirs = putFile(binkd.obox, '0000beef.fr3', 120_000);

    expect(await binkd.poll(), binkd.log()).toBe(0);

    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0], binkd.log()).toMatchObject({
      ok: true,
      network: 'fsxnet',
      link: HUB,
      sent: [{ name: '12345678.pkt', size: 90_000 }],
      received: [{ name: '0000beef.fr3', size: 120_000, resumedFrom: 0 }],
    });
    expect(locked).toEqual(['fsxnet 1/100']);
    expect(readIn(spool.inbound, '0000beef.fr3').equals(theirs)).toBe(true);
    expect(readIn(binkd.inbound, '12345678.pkt').equals(ours)).toBe(true);
    expect(filesIn(spool.outboundFor(HUB))).toEqual([]);
    expect(binkdFiles(binkd.obox)).toEqual([]);
    expect(binkd.log()).toContain('pwd protected session (MD5)');
  });

  it('takes a plain password from a binkd that does not do CRAM (-m), as FTS-1027 lets the answering side', async () => {
    const spool = ourSpool();
    const { server, sessions } = await ourServer(spool);
    const binkd = binkdHub(PASSWORD, server.port);
    const theirs = putFile(binkd.obox, '0000beef.sa0', 5000);

    expect(await binkd.poll(['-m']), binkd.log()).toBe(0);

    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]?.ok).toBe(true);
    expect(readIn(spool.inbound, '0000beef.sa0').equals(theirs)).toBe(true);
    expect(binkd.log()).toContain('pwd protected session (plain text)');
  });

  it('refuses binkd with a wrong password (M_ERR), keeping nothing it sent', async () => {
    const spool = ourSpool();
    const { server, sessions } = await ourServer(spool);
    const binkd = binkdHub('wrongpass', server.port);
    putFile(binkd.obox, '0000beef.mo5', 5000);
    putFile(spool.outboundFor(HUB), '12345678.pkt', 5000);

    await binkd.poll();

    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({
      ok: false,
      error: 'wrong password from 21:1/100@fsxnet',
      received: [],
      sent: [],
    });
    expect(filesIn(spool.inbound)).toEqual([]);
    expect(filesIn(spool.partial)).toEqual([]);
    expect(filesIn(spool.outboundFor(HUB))).toEqual(['12345678.pkt']);
    expect(binkdFiles(binkd.obox)).toEqual(['0000beef.mo5']);
    expect(binkd.log()).toContain('Bad password');
  });
});
