import { connect } from 'node:net';

/** What came back on a raw connection: the head parsed, the body as text, and when it closed. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Milliseconds from connecting until the server closed the connection. */
  readonly closedAfterMs: number;
}

function parseResponse(text: string, closedAfterMs: number): RawResponse {
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd === -1 ? text : text.slice(0, headEnd);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(statusLine.split(' ')[1] ?? 0),
    headers,
    body: headEnd === -1 ? '' : text.slice(headEnd + 4),
    closedAfterMs,
  };
}

/**
 * Writes `request` bytes to a fresh TCP connection and keeps it open (never sending more)
 * until the server closes it; resolves with what the server answered. For requests no HTTP
 * client library would send: malformed lines, bodies that never arrive, huge headers.
 */
export function rawExchange(port: number, request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(request);
    });
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close while we still write; what it answered before is the result.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks).toString('utf8'), Date.now() - startedAt)));
  });
}
