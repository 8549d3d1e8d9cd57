import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TELNET_COMMAND, TELNET_OPTION } from '../../src/terminal/telnet-protocol.js';
import { TERMINAL_TYPE_WAIT_MS } from '../../src/terminal/telnet-server.js';
import { SHUTDOWN_GOODBYE, startTerminalServers, type TerminalServers } from '../../src/terminal/terminal-servers.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';
import { connectRaw, type RawConnection } from './support/raw-connection.js';
import { createRecordingSessions, type RecordedCall } from './support/recording-session.js';
import { printedText } from './support/telnet-client.js';

const { IAC, DONT, DO, WONT, WILL, SB, SE } = TELNET_COMMAND;
const { ECHO, SUPPRESS_GO_AHEAD: SGA, TERMINAL_TYPE: TTYPE, NAWS } = TELNET_OPTION;
const PASSWORD = 'correct horse battery';
const WAIT = { timeout: 10_000, interval: 20 };

const bytes = (...values: number[]) => Buffer.from(values);
/** NAWS as a client sends it: a 255 in the sizes doubled, as everywhere in telnet. */
const naws = (columns: number, rows: number) => {
  const sizes = [columns >> 8, columns & 255, rows >> 8, rows & 255].flatMap((byte) =>
    byte === IAC ? [IAC, IAC] : [byte],
  );
  return bytes(IAC, SB, NAWS, ...sizes, IAC, SE);
};
const ttypeIs = (name: string) => Buffer.concat([bytes(IAC, SB, TTYPE, 0), Buffer.from(name), bytes(IAC, SE)]);
const OPENING = bytes(IAC, WILL, ECHO, IAC, WILL, SGA, IAC, DO, NAWS, IAC, DO, TTYPE);

function recordingLog() {
  const errors: string[] = [];
  return {
    errors,
    log: { info() {}, error: (_details: Record<string, unknown>, message: string) => errors.push(message) },
  };
}

/** Answers the server's opening as a full telnet client does: agrees, tells its size, then its terminal type. */
async function negotiate(connection: RawConnection, terminalType: string, size = { columns: 120, rows: 40 }) {
  await vi.waitFor(() => expect(connection.received().subarray(0, OPENING.length)).toEqual(OPENING), WAIT);
  connection.socket.write(
    Buffer.concat([
      bytes(IAC, DO, ECHO, IAC, DO, SGA, IAC, WILL, NAWS),
      naws(size.columns, size.rows),
      bytes(IAC, WILL, TTYPE),
    ]),
  );
  // Asked for its terminal type only once it said it will tell it.
  await vi.waitFor(() => expect(connection.received().includes(bytes(IAC, SB, TTYPE, 1, IAC, SE))).toBe(true), WAIT);
  connection.socket.write(ttypeIs(terminalType));
}

describeEachDialect('telnet server', (dialect) => {
  const sessions = createRecordingSessions();
  const { errors, log } = recordingLog();
  const opened: RawConnection[] = [];
  let test: TestBoard;
  let servers: TerminalServers;
  let port: number;

  let nextAddress = 10;
  /** Each connection from an address of its own unless told: the per-address caps stay out of the way. */
  const connect = async (localAddress = `127.0.2.${nextAddress++}`) => {
    const connection = await connectRaw(port, localAddress);
    opened.push(connection);
    return connection;
  };
  const text = (connection: RawConnection) => printedText(connection.received());
  /** The session of the connection that typed `line` last. */
  const callThatTyped = (line: string): RecordedCall | undefined =>
    sessions.calls.filter((call) => call.lines.includes(line)).at(-1);

  beforeAll(async () => {
    test = await createTestBoard(dialect, {
      config: {
        contentServers: {
          telnet: { enabled: true, address: '127.0.0.1', port: 0 },
          terminal: { maxConnectionsPerAddress: 3, maxUnauthenticatedPerAddress: 2 },
        },
      },
    });
    servers = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    port = servers.telnet?.port ?? 0;
    await test.userWithToken('alice');
  });
  afterEach(() => {
    for (const connection of opened.splice(0)) connection.socket.destroy();
  });
  afterAll(async () => {
    await servers.stop();
    await test.close();
    expect(errors).toEqual([]);
  });

  it('negotiates, starts the session with the terminal type and size, and logs in inside the session', async () => {
    expect(servers).toMatchObject({ ssh: null, telnet: { address: '127.0.0.1', port } });
    const connection = await connect('127.0.0.9');
    await negotiate(connection, 'XTERM-256COLOR');
    await vi.waitFor(() => expect(text(connection)).toContain('login:\r\n'), WAIT);
    expect(text(connection)).toBe('telnet term=xterm-256color size=120x40 secure=false\r\nlogin:\r\n');
    // CR NUL ends a line as telnet's NVT sends it; the session sees a CR.
    connection.socket.write(`login alice ${PASSWORD}\r\0`);
    await vi.waitFor(() => expect(text(connection)).toContain('hello alice\r\n'), WAIT);
    const call = callThatTyped(`login alice ${PASSWORD}`);
    expect(call?.login).toBeNull();
    expect(call?.connection).toMatchObject({ transport: 'telnet', remoteAddress: '127.0.0.9', isSecure: false });
    expect(Buffer.concat(call?.bytes ?? []).toString('latin1')).toBe(`login alice ${PASSWORD}\r`);
  });

  it('passes NAWS after the start to the session as a resize, clamped', async () => {
    const connection = await connect();
    await negotiate(connection, 'ansi');
    await vi.waitFor(() => expect(text(connection)).toContain('login:'), WAIT);
    connection.socket.write(Buffer.concat([naws(100, 30), Buffer.from('mark resize\r\n')]));
    await vi.waitFor(() => expect(text(connection)).toContain('size 100x30\r\n'), WAIT);
    connection.socket.write(naws(65535, 2));
    await vi.waitFor(() => expect(text(connection)).toContain('size 255x5\r\n'), WAIT);
    expect(callThatTyped('mark resize')?.resizes).toEqual([
      { columns: 100, rows: 30 },
      { columns: 255, rows: 5 },
    ]);
  });

  it('reads IAC IAC as 255 from the caller and escapes 255 in what the session writes', async () => {
    const connection = await connect();
    await negotiate(connection, 'ansi');
    await vi.waitFor(() => expect(text(connection)).toContain('login:'), WAIT);
    connection.socket.write(Buffer.concat([Buffer.from('x'), bytes(IAC, IAC), Buffer.from('y\r\nbyte255\r\n')]));
    await vi.waitFor(() => expect(connection.received().includes(bytes(0x41, IAC, IAC, 0x42))).toBe(true), WAIT);
    const call = callThatTyped('byte255');
    expect(Buffer.concat(call?.bytes ?? [])).toEqual(
      Buffer.concat([bytes(0x78, 255, 0x79, 13), Buffer.from('byte255\r')]),
    );
  });

  it('refuses what it does not speak and starts at once when the client will not tell its terminal type', async () => {
    const connection = await connect();
    await vi.waitFor(() => expect(connection.received().length).toBeGreaterThanOrEqual(OPENING.length), WAIT);
    connection.socket.write(bytes(IAC, WONT, TTYPE, IAC, WONT, NAWS, IAC, DO, 34, IAC, WILL, 0));
    await vi.waitFor(() => expect(text(connection)).toContain('login:'), WAIT);
    const afterOpening = connection.received().subarray(OPENING.length);
    expect(afterOpening.subarray(0, 6)).toEqual(bytes(IAC, WONT, 34, IAC, DONT, 0));
    expect(text(connection)).toBe('telnet term=(none) size=80x24 secure=false\r\nlogin:\r\n');
  });

  it('hangs up when the session ends the call, and ends the session when the caller hangs up', async () => {
    const byeing = await connect();
    await negotiate(byeing, 'ansi');
    await vi.waitFor(() => expect(text(byeing)).toContain('login:'), WAIT);
    byeing.socket.write('bye\r\n');
    await byeing.closed;
    expect(text(byeing)).toMatch(/bye\r\n$/);

    const leaving = await connect();
    await negotiate(leaving, 'ansi');
    leaving.socket.write('leaving now\r\n');
    await vi.waitFor(() => expect(callThatTyped('leaving now')).toBeDefined(), WAIT);
    leaving.socket.destroy();
    await vi.waitFor(() => expect(callThatTyped('leaving now')?.isClosed).toBe(true), WAIT);
  });

  it('refuses a connection over the limits with one readable line and no session', async () => {
    const first = await connect('127.0.0.2');
    const second = await connect('127.0.0.2');
    await vi.waitFor(() => expect(first.received().length + second.received().length).toBeGreaterThan(0), WAIT);
    const callsBefore = sessions.calls.length;
    const third = await connect('127.0.0.2');
    await third.closed;
    expect(third.received().toString('latin1')).toBe(
      'Too many connections from your address are still logging in; finish one and call again.\r\n',
    );
    // Logging in frees a place among those logging in, not one among the address's connections.
    await negotiate(first, 'ansi');
    first.socket.write(`login alice ${PASSWORD}\r\n`);
    await vi.waitFor(() => expect(text(first)).toContain('hello alice'), WAIT);
    const fourth = await connect('127.0.0.2');
    await negotiate(fourth, 'ansi');
    const fifth = await connect('127.0.0.2');
    await fifth.closed;
    expect(fifth.received().toString('latin1')).toBe(
      'Too many connections from your address; hang up one of them and call again.\r\n',
    );
    expect(sessions.calls.length - callsBefore).toBe(2);
  });

  it('says goodbye to every caller when the servers stop, and hangs up', async () => {
    const second = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    const waiting = await connectRaw(second.telnet?.port ?? 0);
    const inSession = await connectRaw(second.telnet?.port ?? 0);
    await negotiate(inSession, 'ansi');
    await vi.waitFor(() => expect(text(inSession)).toContain('login:'), WAIT);
    await second.stop();
    await Promise.all([waiting.closed, inSession.closed]);
    expect(text(inSession)).toBe(`telnet term=ansi size=120x40 secure=false\r\nlogin:\r\n\r\n${SHUTDOWN_GOODBYE}\r\n`);
    expect(text(waiting)).toBe(`\r\n${SHUTDOWN_GOODBYE}\r\n`);
  });
});

describe('telnet timeouts', () => {
  const sessions = createRecordingSessions();
  const { errors, log } = recordingLog();
  let test: TestBoard;
  let servers: TerminalServers;
  let port: number;

  // What is timed here does no database work: one dialect is enough.
  beforeAll(async () => {
    test = await createTestBoard('sqlite', {
      config: {
        contentServers: {
          telnet: { enabled: true, address: '127.0.0.1', port: 0 },
          terminal: { loginTimeoutSeconds: 5 },
        },
      },
    });
    servers = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    port = servers.telnet?.port ?? 0;
    await test.userWithToken('alice');
  });
  afterAll(async () => {
    await servers.stop();
    await test.close();
    expect(errors).toEqual([]);
  });

  it('starts the session without a terminal type when the client never negotiates', async () => {
    const silent = await connectRaw(port);
    await vi.waitFor(() => expect(printedText(silent.received())).toContain('login:'), {
      timeout: TERMINAL_TYPE_WAIT_MS + 5000,
      interval: 50,
    });
    expect(printedText(silent.received())).toBe('telnet term=(none) size=80x24 secure=false\r\nlogin:\r\n');
    silent.socket.destroy();
  });

  it('cuts off a caller who has not logged in after loginTimeoutSeconds, with a line saying why', async () => {
    const idle = await connectRaw(port);
    const loggingIn = await connectRaw(port);
    await negotiate(loggingIn, 'ansi');
    loggingIn.socket.write(`login alice ${PASSWORD}\r\n`);
    await vi.waitFor(() => expect(printedText(loggingIn.received())).toContain('hello alice'), WAIT);
    await vi.waitFor(() => expect(idle.isClosed()).toBe(true), { timeout: 15_000, interval: 100 });
    expect(idle.closedAfterMs()).toBeGreaterThanOrEqual(4900);
    expect(printedText(idle.received())).toMatch(/You did not log in within 5 seconds\. Goodbye\.\r\n$/);
    // Logged in, so past the login timeout: still there, and still heard.
    loggingIn.socket.write('still here\r\n');
    await vi.waitFor(() => expect(printedText(loggingIn.received())).toContain('typed still here'), WAIT);
    loggingIn.socket.destroy();
  });
});
