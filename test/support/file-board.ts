import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import type { Dialect } from '../../src/db/database.js';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { buildMultipart, type FormPart } from './multipart.js';
import { createTestBoard, deepMerge, type TestBoard, type TestBoardOptions } from './test-board.js';

export const API = '/_baud/api/v1';

/**
 * File areas for the file-base tests:
 * - `public_files`: on the anonymous allowlist; any user may upload.
 * - `members`: file-area defaults (read users, upload sysops).
 * - `nodl`: users may browse but only sysops download.
 * - `sysop_only`: only sysops see it at all.
 */
export const FILE_BASE_CONFIG = {
  fileBase: {
    storageTags: { main: 'files/main', other: 'files/other' },
    areas: {
      public_files: {
        name: 'Public files',
        desc: '\u001b[1;33mFree\u001b[0m stuff',
        storageTags: ['main'],
        acs: { write: 'GM[users]' },
      },
      members: { name: 'Members', desc: 'For members', storageTags: ['main', 'other'] },
      nodl: { name: 'No downloads', storageTags: ['other'], acs: { download: 'GM[sysops]' } },
      sysop_only: { name: 'Sysop only', storageTags: ['main'], acs: { read: 'GM[sysops]' } },
    },
  },
  contentServers: { web: { restApi: { files: { publicAccess: { include: ['public_*'] } } } } },
};

export async function createFileTestBoard(
  dialect: Dialect,
  options: TestBoardOptions & { fileBase?: Record<string, unknown> } = {},
): Promise<TestBoard> {
  const config = deepMerge(deepMerge(FILE_BASE_CONFIG, { fileBase: options.fileBase ?? {} }), options.config ?? {});
  return createTestBoard(dialect, { ...options, config });
}

export function storageDir(board: TestBoard, storageTag: string): string {
  const directory = board.config.fileBase.storageTags[storageTag];
  if (directory === undefined) throw new Error(`no storage tag ${storageTag}`);
  return directory;
}

/** Every file in a storage directory: committed files and uploads in progress alike. */
export function storageEntries(board: TestBoard, storageTag = 'main'): string[] {
  const directory = storageDir(board, storageTag);
  const stored = readdirSync(directory).filter((name) => name !== INCOMING_DIRECTORY);
  return [...stored, ...readdirSync(path.join(directory, INCOMING_DIRECTORY))].sort();
}

export function storedPath(board: TestBoard, storageTag: string, fileId: number): string {
  return path.join(storageDir(board, storageTag), String(fileId));
}

/** POSTs a multipart upload through `app.inject`. */
export function upload(
  board: TestBoard,
  areaTag: string,
  parts: readonly FormPart[],
  headers: Record<string, string> = {},
) {
  const { body, contentType } = buildMultipart(parts);
  return board.app.inject({
    method: 'POST',
    url: `${API}/files/areas/${areaTag}`,
    headers: { 'content-type': contentType, ...headers },
    payload: body,
  });
}

/** Upload parts for one file with an optional description. */
export function filePart(fileName: string, content: string | Uint8Array, extra: FormPart[] = []): FormPart[] {
  return [{ name: 'file', fileName, value: content }, ...extra];
}

export interface RawUploadOutcome {
  /** Status of the answer, or null when the connection closed without one. */
  readonly status: number | null;
  /** Response header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Body bytes (chunk framing not counted) the client's socket accepted before it stopped sending. */
  readonly bodyBytesWritten: number;
  /** Bytes the server had read from this connection (request line and headers included) when the answer arrived. */
  readonly serverBytesReadAtAnswer: number | null;
  /** Bytes the server read from this connection in all. */
  readonly serverBytesRead: number;
  /** True when the server ended the connection; false when it stayed open after the answer. */
  readonly wasClosedByServer: boolean;
}

// How long a complete answer may wait for the server to close the connection.
const CLOSE_GRACE_MS = 200;

/** Writes one body chunk; false (nothing written) once the client stopped sending. */
export type WriteBodyChunk = (chunk: Buffer) => Promise<boolean>;

/**
 * POSTs an upload over a raw TCP connection to a listening board, so a test controls exactly
 * when each body byte is sent and sees how many the server read: `sendBody` writes the body
 * through `write` (chunked framing added when the headers ask for it), pausing as it likes;
 * `answered` resolves when the first byte of an answer arrives. Like curl, the client stops
 * sending once an answer arrives or the server closes — unless `keepsSendingAfterAnswer`: a
 * client that writes on, half-closed connection or not, until a write fails.
 * Resolves once the server closed the connection, or — if it stays open — once the answer is
 * complete after `sendBody` returned.
 */
export async function rawUpload(
  board: TestBoard,
  areaTag: string,
  headers: Readonly<Record<string, string | number>>,
  sendBody: (write: WriteBodyChunk, answered: Promise<void>) => Promise<void>,
  options: { keepsSendingAfterAnswer?: boolean } = {},
): Promise<RawUploadOutcome> {
  const { port } = board.app.server.address() as AddressInfo;
  const isChunked = headers['transfer-encoding'] === 'chunked';
  const isStubborn = options.keepsSendingAfterAnswer === true;
  const serverSockets = trackedServerSockets(board);
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: isStubborn });
  await once(socket, 'connect');
  const server = await serverSocketOf(serverSockets, socket);

  const received: Buffer[] = [];
  let serverBytesReadAtAnswer: number | null = null;
  let hasServerEnded = false;
  let isClosed = false;
  let bodyBytesWritten = 0;
  let markAnswered = () => {};
  const answered = new Promise<void>((resolve) => {
    markAnswered = resolve;
  });
  socket.on('data', (chunk: Buffer) => {
    serverBytesReadAtAnswer ??= server.bytesRead;
    received.push(chunk);
    markAnswered();
  });
  // A reset is how a server that stopped reading ends a connection: not an error here.
  socket.on('error', () => {});
  socket.on('end', () => {
    hasServerEnded = true;
  });
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => {
      isClosed = true;
      resolve();
    });
  });
  const canSend = () => !isClosed && (isStubborn || (received.length === 0 && !hasServerEnded));
  const writeRaw = (data: Buffer | string) =>
    new Promise<boolean>((resolve) => {
      if (!canSend()) return resolve(false);
      socket.write(data, (error) => resolve(!error));
    });
  const head = Object.entries({ host: `127.0.0.1:${port}`, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  await writeRaw(`POST ${API}/files/areas/${areaTag} HTTP/1.1\r\n${head}\r\n`);
  const write: WriteBodyChunk = async (chunk) => {
    const framed = isChunked
      ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
      : chunk;
    const isWritten = await writeRaw(framed);
    if (isWritten) bodyBytesWritten += chunk.length;
    return isWritten;
  };
  await sendBody(write, answered);
  if (isChunked) await writeRaw('0\r\n\r\n');
  await Promise.race([closed, waitForCompleteAnswer(received, () => isClosed)]);
  // The server's FIN may trail its answer by a moment.
  if (!hasServerEnded && !isClosed) {
    await Promise.race([closed, once(socket, 'end'), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS))]);
  }
  const wasClosedByServer = hasServerEnded || isClosed;
  socket.destroy();
  await closed;
  const answer = parseAnswer(Buffer.concat(received));
  return { ...answer, bodyBytesWritten, serverBytesReadAtAnswer, serverBytesRead: server.bytesRead, wasClosedByServer };
}

/** The server's end of `client`, among the sockets the board's server accepted. */
async function serverSocketOf(serverSockets: ReadonlySet<net.Socket>, client: net.Socket): Promise<net.Socket> {
  for (;;) {
    for (const candidate of serverSockets) {
      if (candidate.remotePort === client.localPort) return candidate;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const serverSocketsByApp = new WeakMap<object, Set<net.Socket>>();

/** Every connection the board's server accepted since the first call (remembered per app). */
function trackedServerSockets(board: TestBoard): Set<net.Socket> {
  let sockets = serverSocketsByApp.get(board.app);
  if (!sockets) {
    const tracked = new Set<net.Socket>();
    board.app.server.on('connection', (socket: net.Socket) => tracked.add(socket));
    serverSocketsByApp.set(board.app, tracked);
    sockets = tracked;
  }
  return sockets;
}

/** Resolves once `received` holds a whole answer (headers and Content-Length bytes), or `isDone()`. */
async function waitForCompleteAnswer(received: readonly Buffer[], isDone: () => boolean): Promise<void> {
  while (!isDone()) {
    const text = Buffer.concat(received).toString('latin1');
    const headerEnd = text.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headerEnd))?.[1] ?? 0);
      if (text.length - headerEnd - 4 >= length) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function parseAnswer(raw: Buffer): Pick<RawUploadOutcome, 'status' | 'headers' | 'body'> {
  const text = raw.toString('utf8');
  const headerEnd = text.indexOf('\r\n\r\n');
  if (headerEnd < 0) return { status: null, headers: {}, body: '' };
  const [statusLine = '', ...headerLines] = text.slice(0, headerEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(headerEnd + 4) };
}
