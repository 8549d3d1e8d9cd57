import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { copyFile, createReadStream, createWriteStream, rmSync } from 'node:fs';
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { fileEnvelope } from '../test/support/multipart.js';
import type { TransferResult } from './bench-results.js';
import type { CeilingServer } from './ceiling.js';
import { residentBytes, sampleResident } from './process-memory.js';
import type { Progress } from './progress.js';

const copyFileAsync = promisify(copyFile);

/** The file every transfer moves, and its SHA-256 (what baud must report after the upload). */
export interface TransferFile {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** Writes `bytes` of incompressible content (one random MiB, repeated) to `file`. */
export async function writeTransferFile(file: string, bytes: number, progress: Progress): Promise<TransferFile> {
  const block = randomBytes(1024 * 1024);
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  for (let written = 0; written < bytes; ) {
    const chunk = block.subarray(0, Math.min(block.length, bytes - written));
    hash.update(chunk);
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
    progress.update(`  writing the transfer file: ${Math.round(written / 1024 / 1024)} MiB`);
  }
  out.end();
  await once(out, 'finish');
  return { path: file, bytes, sha256: hash.digest('hex') };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

/** Bytes/s of a plain stream copy (read stream → write stream) of `file`, the upload's reference. */
export async function streamCopyRate(file: TransferFile, target: string): Promise<number> {
  const seconds = await timed(() => pipeline(createReadStream(file.path), createWriteStream(target)));
  rmSync(target, { force: true });
  return file.bytes / seconds;
}

/** Bytes/s of `fs.copyFile` (which the kernel may do without the bytes ever reaching Node). */
export async function copyFileRate(file: TransferFile, target: string): Promise<number> {
  const seconds = await timed(() => copyFileAsync(file.path, target));
  rmSync(target, { force: true });
  return file.bytes / seconds;
}

/**
 * Uploads `file` to `POST /files/areas/<areaTag>` as one streamed multipart body over a new
 * connection, sampling the server's RSS meanwhile. The reference is a plain stream copy of
 * the same file to `scratchFile`, once just before and once just after the upload (their
 * mean); `fs.copyFile` is measured beside. Returns the result and the new fileId.
 */
export async function measureUpload(options: {
  readonly apiUrl: string;
  readonly accessToken: string;
  readonly areaTag: string;
  readonly file: TransferFile;
  readonly serverPid: number;
  readonly scratchFile: string;
}): Promise<{ result: TransferResult; fileId: number | null }> {
  const copyBefore = await streamCopyRate(options.file, options.scratchFile);
  const { file } = options;
  const { head, tail, contentType } = fileEnvelope('bench.bin');
  const baseline = residentBytes(options.serverPid);
  const sampler = sampleResident(options.serverPid);
  const started = performance.now();
  const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(`${options.apiUrl}/files/areas/${options.areaTag}`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': contentType,
        'content-length': head.length + file.bytes + tail.length,
        authorization: `Bearer ${options.accessToken}`,
      },
    });
    request.on('response', (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    request.on('error', reject);
    request.write(head);
    pipeline(createReadStream(file.path), request, { end: false })
      .then(() => request.end(tail))
      .catch(reject);
  });
  const seconds = (performance.now() - started) / 1000;
  const peak = sampler.stop();
  const copyAfter = await streamCopyRate(file, options.scratchFile);
  const copyFileBytesPerSec = await copyFileRate(file, options.scratchFile);
  const record = (response.status === 201 ? JSON.parse(response.body) : {}) as {
    fileId?: number;
    sha256?: string;
    byteSize?: number;
  };
  const isStored = response.status === 201 && record.sha256 === file.sha256 && record.byteSize === file.bytes;
  const referenceBytesPerSec = (copyBefore + copyAfter) / 2;
  const baudBytesPerSec = file.bytes / seconds;
  return {
    fileId: isStored ? (record.fileId ?? null) : null,
    result: {
      bytes: file.bytes,
      baudBytesPerSec,
      referenceBytesPerSec,
      referenceTitle: 'stream copy of the same file (mean of one before and one after the upload)',
      ratio: baudBytesPerSec / referenceBytesPerSec,
      rssGrowthBytes: peak - baseline,
      alsoMeasured: { 'fs.copyFile': copyFileBytesPerSec },
      problem: isStored ? null : `upload not stored as sent: HTTP ${response.status} ${response.body.slice(0, 200)}`,
    },
  };
}

/** One whole download over a new connection, bytes thrown away as they arrive. */
function downloadOnce(url: string, headers: Readonly<Record<string, string>>) {
  return new Promise<{ status: number; bytes: number; seconds: number }>((resolve, reject) => {
    const started = performance.now();
    http
      .get(url, { agent: false, headers }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, bytes, seconds: (performance.now() - started) / 1000 }),
        );
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/**
 * Downloads file `fileId` from baud and the same bytes from the ceiling process serving them
 * with a raw `fs.createReadStream`, alternately, `rounds` times each; the medians are
 * compared. The server's RSS is sampled during baud's downloads.
 */
export async function measureDownload(options: {
  readonly apiUrl: string;
  readonly accessToken: string;
  readonly fileId: number;
  readonly file: TransferFile;
  readonly ceiling: CeilingServer;
  readonly serverPid: number;
  readonly rounds: number;
  readonly progress: Progress;
}): Promise<TransferResult> {
  const { file, ceiling } = options;
  await ceiling.serveFile(file.path, file.bytes);
  const baudRates: number[] = [];
  const rawRates: number[] = [];
  const problems: string[] = [];
  const baseline = residentBytes(options.serverPid);
  let peak = baseline;
  for (let round = 1; round <= options.rounds; round += 1) {
    options.progress.update(`  download round ${round}/${options.rounds}`);
    const raw = await downloadOnce(`${ceiling.origin}/file`, {});
    rawRates.push(raw.bytes / raw.seconds);
    const sampler = sampleResident(options.serverPid);
    const baud = await downloadOnce(`${options.apiUrl}/files/${options.fileId}/download`, {
      authorization: `Bearer ${options.accessToken}`,
    });
    peak = Math.max(peak, sampler.stop());
    baudRates.push(baud.bytes / baud.seconds);
    if (baud.status !== 200 || baud.bytes !== file.bytes) {
      problems.push(`download answered ${baud.status} with ${baud.bytes} of ${file.bytes} bytes`);
    }
  }
  const baudBytesPerSec = median(baudRates);
  const referenceBytesPerSec = median(rawRates);
  return {
    bytes: file.bytes,
    baudBytesPerSec,
    referenceBytesPerSec,
    referenceTitle: `bare node:http + fs.createReadStream of the same file (median of ${options.rounds})`,
    ratio: baudBytesPerSec / referenceBytesPerSec,
    rssGrowthBytes: peak - baseline,
    alsoMeasured: {},
    problem: problems[0] ?? null,
  };
}
