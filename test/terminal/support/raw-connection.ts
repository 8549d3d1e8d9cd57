import net from 'node:net';

/** A plain TCP connection to a terminal server, with everything it received. */
export interface RawConnection {
  readonly socket: net.Socket;
  received(): Buffer;
  readonly isClosed: () => boolean;
  /** When the server closed it, in ms since it connected (null while open). */
  closedAfterMs(): number | null;
  readonly closed: Promise<void>;
}

/** Connects from `localAddress` (any 127.0.0.0/8 address is this machine) and collects what arrives. */
export function connectRaw(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closedAt: number | null = null;
    const startedAt = Date.now();
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {
      // A reset by the server shows as a close as well.
    });
    const closed = new Promise<void>((done) =>
      socket.once('close', () => {
        closedAt = Date.now();
        done();
      }),
    );
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        isClosed: () => closedAt !== null,
        closedAfterMs: () => (closedAt === null ? null : closedAt - startedAt),
        closed,
      }),
    );
    socket.once('error', reject);
  });
}
