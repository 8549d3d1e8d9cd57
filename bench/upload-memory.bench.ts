/**
 * Upload memory benchmark: streams a 200 MiB multipart upload over real HTTP into a real
 * server and samples the process's heap and RSS while it runs. Uploads must be streamed to
 * disk, so memory must not grow with the file: the run fails (exit 1) if heap or RSS grows
 * by more than 64 MiB over the idle baseline.
 *
 *   npx tsx bench/upload-memory.bench.ts [sizeMiB]
 *
 * Client and server share this process (the client generates its bytes lazily from one
 * 64 KiB buffer), so the figures are an upper bound for the server alone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { buildApp } from '../src/app.js';
import { openBoard } from '../src/board.js';
import { configFromObject } from '../src/config/load-config.js';
import { fileEnvelope } from '../test/support/multipart.js';

const MiB = 1024 * 1024;
const SIZE_BYTES = Number(process.argv[2] ?? 200) * MiB;
const MAX_GROWTH_BYTES = 64 * MiB;
const CHUNK = randomBytes(64 * 1024);

function generatedBody(head: Buffer, tail: Buffer, size: number, hash: ReturnType<typeof createHash>): Readable {
  let sent = 0;
  let phase: 'head' | 'file' | 'tail' | 'done' = 'head';
  return new Readable({
    read() {
      if (phase === 'head') {
        phase = 'file';
        this.push(head);
      } else if (phase === 'file') {
        const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, size - sent));
        sent += chunk.length;
        hash.update(chunk);
        if (sent >= size) phase = 'tail';
        this.push(chunk);
      } else if (phase === 'tail') {
        phase = 'done';
        this.push(tail);
      } else {
        this.push(null);
      }
    },
  });
}

const dir = mkdtempSync(path.join(tmpdir(), 'baud-bench-upload-'));
const config = configFromObject({
  paths: { dataDir: dir },
  logging: { level: 'warn' },
  fileBase: {
    storageTags: { main: 'files' },
    areas: { uploads: { name: 'Uploads', storageTags: ['main'], acs: { write: 'GM[users]' } } },
  },
});
const board = await openBoard(config);
const app = await buildApp(config, { board, logger: false });
let exitCode = 0;
try {
  const user = await board.users.createUser({ username: 'bench', password: 'correct horse battery' });
  // A real login: access tokens are only honoured while their session stands.
  const {
    token: { accessToken },
  } = await board.auth.login({
    username: user.username,
    password: 'correct horse battery',
    clientAddress: '127.0.0.1',
    isSecure: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;

  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const baseline = process.memoryUsage();
  let peakHeap = baseline.heapUsed;
  let peakRss = baseline.rss;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed);
    peakRss = Math.max(peakRss, now.rss);
  }, 20);

  const { head, tail, contentType } = fileEnvelope('big.bin');
  const hash = createHash('sha256');
  const started = performance.now();
  const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/_baud/api/v1/files/areas/uploads',
      headers: {
        'content-type': contentType,
        'content-length': head.length + SIZE_BYTES + tail.length,
        authorization: `Bearer ${accessToken}`,
      },
    });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    request.on('error', reject);
    pipeline(generatedBody(head, tail, SIZE_BYTES, hash), request).catch(reject);
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);

  const record = JSON.parse(response.body) as { sha256?: string; byteSize?: number };
  const heapGrowth = peakHeap - baseline.heapUsed;
  const rssGrowth = peakRss - baseline.rss;
  const mib = (bytes: number) => (bytes / MiB).toFixed(1);
  console.log(`upload of ${mib(SIZE_BYTES)} MiB: HTTP ${response.status} in ${seconds.toFixed(2)} s`);
  console.log(`  throughput          ${mib(SIZE_BYTES / seconds)} MiB/s`);
  console.log(
    `  heapUsed baseline   ${mib(baseline.heapUsed)} MiB, peak ${mib(peakHeap)} MiB, growth ${mib(heapGrowth)} MiB`,
  );
  console.log(`  rss baseline        ${mib(baseline.rss)} MiB, peak ${mib(peakRss)} MiB, growth ${mib(rssGrowth)} MiB`);
  console.log(`  limit               ${mib(MAX_GROWTH_BYTES)} MiB growth (gc before baseline: ${gc ? 'yes' : 'no'})`);

  const expectedSha = hash.digest('hex');
  if (response.status !== 201 || record.sha256 !== expectedSha || record.byteSize !== SIZE_BYTES) {
    console.error(`FAIL: upload not stored correctly: ${response.body.slice(0, 300)}`);
    exitCode = 1;
  } else if (heapGrowth > MAX_GROWTH_BYTES || rssGrowth > MAX_GROWTH_BYTES) {
    console.error('FAIL: memory grew by more than the limit while uploading');
    exitCode = 1;
  } else {
    console.log('PASS');
  }
} finally {
  await app.close();
  await board.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
