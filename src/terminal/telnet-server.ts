import net from 'node:net';
import type { ConnectionLimits } from './connection-limits.js';
import { createTelnetProtocol, escapeTelnetOutput } from './telnet-protocol.js';
import type { TerminalConnection } from './terminal-connection.js';
import {
  createTransportConnection,
  DEFAULT_TERMINAL_SIZE,
  reportedTerminalSize,
  type TransportConnection,
} from './transport-connection.js';

/**
 * How long a new connection waits for the client's terminal type before the session starts
 * without one. A telnet client answers within a round trip; one that does not negotiate at all
 * (netcat, a script) never answers, and should not sit in silence for long.
 */
export const TERMINAL_TYPE_WAIT_MS = 2000;

/** Typing kept from before the session starts; a person types a few bytes in that time. */
const MAX_TYPED_EARLY_BYTES = 4096;

/** How long a hung-up caller's socket may take to close before it is cut. */
const HANG_UP_GRACE_MS = 5000;

export interface TelnetServerOptions {
  readonly address: string;
  readonly port: number;
  readonly limits: ConnectionLimits;
  readonly loginTimeoutSeconds: number;
  /** Telnet logs in inside the session: `login` is null, and `onLoggedIn` is how it says it did. */
  startSession(connection: TerminalConnection, options: { login: null; onLoggedIn: () => void }): void;
  onError(error: unknown, context: string): void;
}

export interface TelnetServer {
  readonly address: string;
  readonly port: number;
  /** Stops accepting, writes `goodbye` to every caller, hangs up and waits for their sockets to close. */
  stop(goodbye: string): Promise<void>;
}

const line = (text: string) => Buffer.from(`${text}\r\n`);

/**
 * Ends `socket` after what was written to it, and cuts it if the client does not close its side
 * in time. Its input is read and dropped meanwhile: unread input makes the kernel answer the
 * close with a reset, which can throw away the last line before the client reads it.
 */
function hangUpSocket(socket: net.Socket): void {
  socket.resume();
  socket.end();
  setTimeout(() => socket.destroy(), HANG_UP_GRACE_MS).unref();
}

/** Listens for telnet callers (see `TelnetServerOptions`) and resolves once listening. */
export async function startTelnetServer(options: TelnetServerOptions): Promise<TelnetServer> {
  const { limits } = options;
  /** Every open connection's way to say goodbye before the server stops. */
  const open = new Map<net.Socket, (goodbye: string) => void>();

  function serve(socket: net.Socket): void {
    socket.on('error', () => {
      // A reset or a broken pipe: 'close' follows, and that is all there is to do.
    });
    const remoteAddress = socket.remoteAddress ?? '';
    const admission = limits.admit(remoteAddress);
    if (!admission.isAdmitted) {
      socket.write(line(admission.reason));
      hangUpSocket(socket);
      return;
    }
    const { place } = admission;
    socket.setNoDelay(true);
    const protocol = createTelnetProtocol();
    let transport: TransportConnection | null = null;
    let terminalType = '';
    let size = DEFAULT_TERMINAL_SIZE;
    /** Typed before the session starts (a second or two at most); held as the session's typing is. */
    const typedEarly: Buffer[] = [];
    let typedEarlyBytes = 0;
    let isHangingUp = false;

    const hangUp = (text?: string) => {
      if (isHangingUp) return;
      isHangingUp = true;
      if (text !== undefined) socket.write(escapeTelnetOutput(line(text)));
      hangUpSocket(socket);
    };

    const loginTimer = setTimeout(
      () => hangUp(`You did not log in within ${options.loginTimeoutSeconds} seconds. Goodbye.`),
      options.loginTimeoutSeconds * 1000,
    );
    const terminalTypeTimer = setTimeout(startSession, TERMINAL_TYPE_WAIT_MS);

    function startSession(): void {
      clearTimeout(terminalTypeTimer);
      if (transport || isHangingUp || socket.destroyed) return;
      const started = createTransportConnection({
        transport: 'telnet',
        remoteAddress,
        isSecure: false,
        terminalType,
        size,
        write: (bytes) => socket.write(escapeTelnetOutput(typeof bytes === 'string' ? Buffer.from(bytes) : bytes)),
        hangUp: () => hangUp(),
      });
      transport = started;
      try {
        options.startSession(started.connection, {
          login: null,
          onLoggedIn: () => {
            clearTimeout(loginTimer);
            place.loggedIn();
          },
        });
      } catch (error) {
        options.onError(error, 'telnet: the caller session failed to start');
        hangUp();
        return;
      }
      for (const bytes of typedEarly.splice(0)) started.receive(bytes);
    }

    socket.on('data', (chunk: Buffer) => {
      if (isHangingUp) return;
      const input = protocol.receive(chunk);
      if (input.reply.length > 0) socket.write(input.reply);
      for (const event of input.events) {
        if (event.type === 'window-size') {
          if (transport) transport.resize(event);
          else size = reportedTerminalSize(event, size);
        } else {
          if (event.type === 'terminal-type' && !transport) terminalType = event.name;
          startSession();
        }
      }
      if (input.data.length === 0) return;
      if (transport) {
        transport.receive(input.data);
      } else if (typedEarlyBytes + input.data.length <= MAX_TYPED_EARLY_BYTES) {
        typedEarly.push(input.data);
        typedEarlyBytes += input.data.length;
      }
    });

    socket.once('close', () => {
      clearTimeout(loginTimer);
      clearTimeout(terminalTypeTimer);
      open.delete(socket);
      place.release();
      transport?.closed();
    });

    open.set(socket, (goodbye) => hangUp(`\r\n${goodbye}`));
    socket.write(protocol.opening);
  }

  const server = net.createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (error) => options.onError(error, 'telnet: the listening socket failed'));
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : options.port;

  return {
    address: options.address,
    port,
    async stop(goodbye) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const sayGoodbye of open.values()) sayGoodbye(goodbye);
      await closed;
    },
  };
}
