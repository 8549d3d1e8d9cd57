import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { configFromObject } from '../../src/config/load-config.js';
import type { Dialect } from '../../src/db/database.js';
import { callLink } from '../../src/ftn/binkp-client.js';
import { openNetworkSpool } from '../../src/ftn/ftn-spool.js';
import { serveBoard } from '../../src/setup/serve-board.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';
import { at, DOWNLINK, DOWNLINK_PASSWORD, ftnConfig, hubEchomail, OURS, packetFrom } from './ftn-board.js';

/** The value of one sample line of a scrape, or undefined. */
function sample(scrape: string, series: string): number | undefined {
  const line = scrape.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * `baud serve` with a network and `contentServers.binkp` on: a downlink's call is answered and
 * its mail tossed by itself, the metrics count it, and stopping the board closes the port.
 */
describeEachDialect('a serving board answering binkp', (dialect: Dialect) => {
  const cleanUps: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  });

  it('answers a downlink, tosses what it sent, counts it, and closes the port when it stops', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'baud-ftn-serve-'));
    cleanUps.push(() => rmSync(dir, { recursive: true, force: true }));
    const schema = `baud_test_${randomBytes(6).toString('hex')}`;
    if (dialect === 'postgres') cleanUps.push(() => dropSchema(schema));
    const config = configFromObject({
      ...ftnConfig({
        ftn: { networks: { fsxnet: { downlinks: [{ address: DOWNLINK, password: DOWNLINK_PASSWORD }] } } },
      }),
      paths: { dataDir: dir },
      database: {
        url: dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`,
      },
      logging: { level: 'silent' },
      metrics: { enabled: true, port: 0 },
      contentServers: {
        web: { port: 0, reader: { enabled: false } },
        binkp: { enabled: true, address: '127.0.0.1', port: 0 },
      },
    });
    const running = await serveBoard(config);
    let isStopped = false;
    cleanUps.push(() => (isStopped ? undefined : running.stop()));
    expect(running.binkp).toEqual({ address: '127.0.0.1', port: expect.any(Number) });
    const port = running.binkp?.port ?? 0;

    // The downlink's side: its own spool, a packet for us in its outbound.
    const downlinkSpool = openNetworkSpool(path.join(dir, 'downlink'), 'fsxnet');
    writeFileSync(
      path.join(downlinkSpool.outboundFor(at(OURS)), '00000001.pkt'),
      packetFrom([hubEchomail({ origin: at(DOWNLINK) })], { from: DOWNLINK, password: DOWNLINK_PASSWORD }),
    );
    const report = await callLink({
      ourAddresses: [at(DOWNLINK)],
      link: { address: at(OURS), host: '127.0.0.1', port, password: DOWNLINK_PASSWORD },
      spool: downlinkSpool,
    });
    expect(report).toMatchObject({ ok: true, sent: [{ name: '00000001.pkt' }] });

    await expect
      .poll(
        async () => {
          const scrape = await (await fetch(running.metricsUrl ?? '')).text();
          return [
            sample(scrape, 'baud_ftn_sessions_total{outcome="ok"}'),
            sample(scrape, 'baud_ftn_messages_total{outcome="imported"}'),
            sample(scrape, 'baud_ftn_packets_total{direction="in"}'),
          ];
        },
        { timeout: 10_000, interval: 25 },
      )
      .toEqual([1, 1, 1]);
    const scrape = await (await fetch(running.metricsUrl ?? '')).text();
    expect(sample(scrape, 'baud_ftn_bytes_total{direction="in"}')).toBe(report.bytesOut);

    await running.stop();
    isStopped = true;
    expect(await isListening(port)).toBe(false);
  });
});
