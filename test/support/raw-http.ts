import { connect, type Socket } from 'node:net';

/** An HTTP/1.1 response read off a raw socket. */
export interface RawResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Parses the first HTTP response in `bytes` (Content-Length or chunked body, or a body that
 * runs to the end of the connection). Null when the head has not arrived yet.
 */
export function parseRawResponse(bytes: Buffer, isConnectionClosed: boolean): RawResponse | null {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return null;
  const [statusLine = '', ...headerLines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(headEnd + 4);
  const length = headers['content-length'];
  if (length !== undefined) {
    if (rest.length < Number(length)) return null;
    return { status, headers, body: rest.subarray(0, Number(length)).toString('utf8') };
  }
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const chunks: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', offset);
      if (lineEnd === -1) return null;
      const size = Number.parseInt(rest.subarray(offset, lineEnd).toString('latin1'), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(chunks).toString('utf8') };
      if (rest.length < lineEnd + 2 + size + 2) return null;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
    }
  }
  return isConnectionClosed ? { status, headers, body: rest.toString('utf8') } : null;
}

/** What happened to a raw connection: the bytes the server sent and when it closed. */
export interface RawOutcome {
  readonly received: Buffer;
  /** Milliseconds from connecting until the server closed (or reset) the connection; null if it never did. */
  readonly closedAfterMs: number | null;
  /** Milliseconds from connecting until the first response byte arrived; null if none did. */
  readonly firstByteAfterMs: number | null;
  readonly bytesSent: number;
}

export interface RawClientOptions {
  readonly port: number;
  /** Sent at once after connecting. */
  readonly prelude: string;
  /** Then one of these bytes every `trickleEveryMs` (the sequence repeats); empty = send nothing more. */
  readonly trickle?: string;
  readonly trickleEveryMs?: number;
  /** At most this many trickled bytes (e.g. to stay one byte short of a Content-Length). */
  readonly maxTrickleBytes?: number;
  /** Give up (and destroy the socket) after this long. */
  readonly giveUpAfterMs: number;
}

/** A client that sends `prelude`, then trickles bytes, and records how the server reacts. */
export function rawClient(options: RawClientOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let bytesSent = 0;
    let firstByteAfterMs: number | null = null;
    let trickled = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket: Socket = connect({ port: options.port, host: '127.0.0.1' });
    const finish = (closedAfterMs: number | null) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ received: Buffer.concat(chunks), closedAfterMs, firstByteAfterMs, bytesSent });
    };
    const giveUp = setTimeout(() => finish(null), options.giveUpAfterMs);
    socket.on('connect', () => {
      socket.write(options.prelude);
      bytesSent += Buffer.byteLength(options.prelude);
      const trickle = options.trickle ?? '';
      if (trickle === '') return;
      timer = setInterval(() => {
        if (socket.destroyed || !socket.writable) return;
        if (options.maxTrickleBytes !== undefined && trickled >= options.maxTrickleBytes) return;
        socket.write(trickle[trickled % trickle.length] ?? ' ');
        trickled += 1;
        bytesSent += 1;
      }, options.trickleEveryMs ?? 250);
    });
    socket.on('data', (data: Buffer) => {
      firstByteAfterMs ??= performance.now() - started;
      chunks.push(data);
    });
    socket.on('error', () => {});
    socket.on('close', () => finish(performance.now() - started));
  });
}

/** A crowd of slow clients that reconnect whenever the server cuts them off, until stopped. */
export interface SlowCrowd {
  /** Connections open right now. */
  open(): number;
  /** Connections the server closed so far. */
  cutOff(): number;
  stop(): void;
}

export function slowCrowd(
  count: number,
  options: Omit<RawClientOptions, 'giveUpAfterMs'> & { readonly preludeFor?: (index: number) => string },
): SlowCrowd {
  const sockets = new Set<Socket>();
  let cutOff = 0;
  let isStopped = false;
  const open = (index: number) => {
    if (isStopped) return;
    const socket = connect({ port: options.port, host: '127.0.0.1' });
    let trickled = 0;
    let timer: NodeJS.Timeout | undefined;
    sockets.add(socket);
    socket.on('connect', () => {
      socket.write(options.preludeFor ? options.preludeFor(index) : options.prelude);
      const trickle = options.trickle ?? '';
      if (trickle === '') return;
      timer = setInterval(() => {
        if (!socket.writable) return;
        if (options.maxTrickleBytes !== undefined && trickled >= options.maxTrickleBytes) return;
        socket.write(trickle[trickled % trickle.length] ?? ' ');
        trickled += 1;
      }, options.trickleEveryMs ?? 250);
    });
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      sockets.delete(socket);
      if (isStopped) return;
      cutOff += 1;
      open(index);
    });
  };
  for (let index = 0; index < count; index++) open(index);
  return {
    open: () => [...sockets].filter((socket) => !socket.connecting && !socket.destroyed).length,
    cutOff: () => cutOff,
    stop() {
      isStopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

/**
 * Writes `request` on a fresh connection, sends nothing more, and waits (at most 30 s) for the
 * server to answer and close. For requests no HTTP client library would send: malformed lines,
 * bodies that never arrive, huge headers.
 */
export async function rawExchange(
  port: number,
  request: string,
): Promise<RawResponse & { readonly closedAfterMs: number | null }> {
  const outcome = await rawClient({ port, prelude: request, giveUpAfterMs: 30_000 });
  const response = parseRawResponse(outcome.received, true) ?? { status: 0, headers: {}, body: '' };
  return { ...response, closedAfterMs: outcome.closedAfterMs };
}
