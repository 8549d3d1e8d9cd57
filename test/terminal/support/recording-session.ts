import type { SessionTokens } from '../../../src/auth/auth-service.js';
import type { TerminalServices } from '../../../src/terminal/caller-session.js';
import type { TerminalConnection, TerminalSize } from '../../../src/terminal/terminal-connection.js';
import type { StartCallerSession } from '../../../src/terminal/terminal-servers.js';

/** One call as the test session saw it. */
export interface RecordedCall {
  readonly connection: TerminalConnection;
  readonly services: TerminalServices;
  /** What the transport logged in before the session (SSH), or null (telnet). */
  readonly login: SessionTokens | null;
  /** The caller came as `new` to sign up (SSH). */
  readonly signUp: boolean;
  /** Every line the caller typed (CR or LF ends one). */
  readonly lines: string[];
  /** The bytes as they came, chunk by chunk. */
  readonly bytes: Buffer[];
  /** The size after each resize. */
  readonly resizes: TerminalSize[];
  /** Whose session it is, once the test session has asked the board (`board.callers`). */
  username: string | null;
  isClosed: boolean;
}

/**
 * A stand-in for the caller session, small enough to read at a glance: it writes what it got
 * (terminal type, size, who logged in, each line typed, each resize) so a test can check it
 * from the client's side. A caller without a login (telnet) logs in by typing
 * `login <name> <password>`, through the board's own login; `bye` hangs up; `byte255` makes
 * the session write the bytes A, 255, B (what telnet must escape).
 */
export function createRecordingSessions(): {
  readonly calls: RecordedCall[];
  readonly startSession: StartCallerSession;
} {
  const calls: RecordedCall[] = [];

  const startSession: StartCallerSession = (services, connection, options) => {
    const call: RecordedCall = {
      connection,
      services,
      login: options.login,
      signUp: options.signUp === true,
      lines: [],
      bytes: [],
      resizes: [],
      username: null,
      isClosed: false,
    };
    calls.push(call);
    const { board } = services;
    const say = (text: string) => connection.write(`${text}\r\n`);

    const greet = async (tokens: SessionTokens) => {
      const caller = await board.callers.resolve(
        { accessToken: tokens.token.accessToken },
        { isSecure: connection.isSecure },
      );
      call.username = caller.user.username;
      say(`hello ${caller.user.username}`);
    };

    const logIn = async (username: string, password: string) => {
      try {
        const { token, refreshToken } = await board.auth.login({
          username,
          password,
          clientAddress: connection.remoteAddress,
          isSecure: connection.isSecure,
          via: 'terminal',
        });
        options.onLoggedIn?.();
        await greet({ token, refreshToken });
      } catch (error) {
        say(`refused: ${(error as { code?: string }).code ?? String(error)}`);
      }
    };

    let partial = '';
    connection.onData((bytes) => {
      call.bytes.push(bytes);
      partial += bytes.toString('utf8');
      const parts = partial.split(/\r|\n/);
      partial = parts.pop() ?? '';
      for (const line of parts.filter((part) => part !== '')) {
        call.lines.push(line);
        const [word, ...rest] = line.split(' ');
        if (word === 'bye') {
          say('bye');
          connection.end();
        } else if (word === 'byte255') {
          connection.write(Buffer.from([0x41, 0xff, 0x42, 0x0d, 0x0a]));
        } else if (word === 'login' && call.username === null) {
          void logIn(rest[0] ?? '', rest.slice(1).join(' '));
        } else {
          say(`typed ${line}`);
        }
      }
    });
    connection.onResize(() => {
      call.resizes.push(connection.size);
      say(`size ${connection.size.columns}x${connection.size.rows}`);
    });
    connection.onClose(() => {
      call.isClosed = true;
    });

    say(
      `${connection.transport} term=${connection.terminalType || '(none)'} size=${connection.size.columns}x${connection.size.rows} secure=${connection.isSecure}`,
    );
    if (options.login) void greet(options.login);
    else say('login:');
  };

  return { calls, startSession };
}
