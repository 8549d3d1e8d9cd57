import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type BinkpFrame,
  BinkpFrameDecoder,
  encodeCommandFrame,
  encodeDataHeader,
} from '../../../src/ftn/binkp-frame.js';
import { type FtnAddress, parseFtnAddress } from '../../../src/ftn/ftn-address.js';
import { type NetworkSpool, openNetworkSpool } from '../../../src/ftn/ftn-spool.js';

export const HUB = parseFtnAddress('21:1/100@fsxnet');
export const NODE = parseFtnAddress('21:1/999@fsxnet');

/** A network spool in a fresh temp directory; `remove` deletes it. */
export function tempSpool(label: string): NetworkSpool & { remove(): void } {
  const dataDir = mkdtempSync(path.join(tmpdir(), `baud-binkp-${label}-`));
  return Object.assign(openNetworkSpool(dataDir, 'fsxnet'), {
    remove: () => rmSync(dataDir, { recursive: true, force: true }),
  });
}

/** Writes `size` random bytes to `directory/name` (dated a minute ago, as a scanner's file is) and returns them. */
export function putFile(directory: string, name: string, size: number): Buffer {
  const content = randomBytes(size);
  const file = path.join(directory, name);
  writeFileSync(file, content);
  const minuteAgo = new Date(Date.now() - 60_000);
  utimesSync(file, minuteAgo, minuteAgo);
  return content;
}

/** The names in a directory, sorted. */
export function filesIn(directory: string): string[] {
  return readdirSync(directory).sort();
}

export function readIn(directory: string, name: string): Buffer {
  return readFileSync(path.join(directory, name));
}

/** The outbound of `link` in `spool`. */
export function outboundOf(spool: NetworkSpool, link: FtnAddress): string {
  return spool.outboundFor(link);
}

/**
 * A TCP proxy to `target` that passes everything both ways until `cutAfterBytes` have gone in
 * `direction` (to the target, or from it), then drops both connections: a line that fails in the
 * middle of a file. `forwarded` is what went that way.
 */
export async function startCuttingProxy(options: {
  targetPort: number;
  direction: 'to-target' | 'from-target';
  cutAfterBytes: number;
}): Promise<{ port: number; forwarded(): number; close(): Promise<void> }> {
  let forwarded = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: options.targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    const [from, to] = options.direction === 'to-target' ? [client, upstream] : [upstream, client];
    const [back, forth] = options.direction === 'to-target' ? [upstream, client] : [client, upstream];
    back.on('data', (chunk: Buffer) => forth.write(chunk));
    from.on('data', (chunk: Buffer) => {
      const room = options.cutAfterBytes - forwarded;
      if (room <= 0) return;
      const part = chunk.subarray(0, room);
      forwarded += part.length;
      to.write(part, () => {
        if (forwarded >= options.cutAfterBytes) {
          client.destroy();
          upstream.destroy();
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    forwarded: () => forwarded,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A hand-driven binkp peer for hostile tests: sends whatever bytes or frames a test wants and
 * reads the frames that come back.
 */
export interface RawBinkpPeer {
  readonly socket: net.Socket;
  sendFrame(command: number, argument?: string): void;
  sendData(data: Buffer): void;
  /** Frames received so far. */
  readonly frames: BinkpFrame[];
  /** Resolves with the first command frame (received so far or later) with this command. */
  waitForCommand(command: number): Promise<string>;
  /** Resolves once the other side closed the connection. */
  readonly closed: Promise<void>;
}

export async function connectRawPeer(port: number): Promise<RawBinkpPeer> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  const decoder = new BinkpFrameDecoder();
  const frames: BinkpFrame[] = [];
  const listeners = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    frames.push(...decoder.push(chunk));
    for (const listener of listeners) listener();
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    frames,
    closed,
    sendFrame(command, argument = '') {
      socket.write(encodeCommandFrame(command as never, Buffer.from(argument, 'latin1')));
    },
    sendData(data) {
      socket.write(Buffer.concat([encodeDataHeader(data.length), data]));
    },
    waitForCommand(command) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const frame = frames.find((candidate) => candidate.kind === 'command' && candidate.command === command);
          if (frame && frame.kind === 'command') {
            listeners.delete(look);
            resolve(frame.argument);
          }
        };
        listeners.add(look);
        look();
        void closed.then(() => {
          look();
          if (listeners.has(look)) {
            listeners.delete(look);
            reject(new Error(`the connection closed before command ${command}`));
          }
        });
      });
    },
  };
}
