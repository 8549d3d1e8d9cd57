import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SHUTDOWN_GOODBYE, startTerminalServers, type TerminalServers } from '../../src/terminal/terminal-servers.js';
import { newSshKey } from '../auth/ssh-key-fixtures.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { enrolTwoFactor, totpCode } from '../support/totp-code.js';
import { connectRaw, type RawConnection } from './support/raw-connection.js';
import { createRecordingSessions } from './support/recording-session.js';
import { openShell, type SshCall, sshLogin } from './support/ssh-client.js';

const API = '/_baud/api/v1';
const PASSWORD = 'correct horse battery';
const STEP_MS = 30_000;
const WAIT = { timeout: 10_000, interval: 20 };

/** The servers' log: errors are collected so a test run with one fails. */
function recordingLog() {
  const errors: string[] = [];
  return {
    errors,
    log: { info() {}, error: (_details: Record<string, unknown>, message: string) => errors.push(message) },
  };
}

/** What `sshLogin` rejected with: the error, and what the server answered on the way. */
async function refusedLogin(login: Promise<SshCall>): Promise<SshCall> {
  const error = await login.then(
    ({ client }) => {
      client.end();
      throw new Error('logged in, but should have been refused');
    },
    (caught: unknown) => caught as { call: SshCall },
  );
  return error.call;
}

/** Turns two-factor login on for `username` through the API; returns the authenticator's secret. */
async function turnOnTwoFactor(test: TestBoard, token: string, clock: ReturnType<typeof fakeClock>) {
  const { secret } = await enrolTwoFactor(test.app, {
    apiPrefix: API,
    headers: { authorization: `Bearer ${token}` },
    password: PASSWORD,
    codeFor: (secret) => totpCode(secret, clock.now().getTime()),
  });
  clock.advance(STEP_MS);
  return secret;
}

/** Registers the public key `line` for the owner of `token` through the API. */
async function registerKey(test: TestBoard, token: string, line: string): Promise<void> {
  const added = await test.app.inject({
    method: 'POST',
    url: `${API}/users/me/ssh-keys`,
    headers: { authorization: `Bearer ${token}` },
    payload: { publicKey: line },
  });
  expect(added.statusCode).toBe(201);
}

/** Debian's OpenSSH client, run as a caller would (`-tt`: a terminal though stdin is a pipe), with what it printed. */
function runOpenSsh(port: number, destination: string, options: readonly string[], env: Record<string, string>) {
  const child = spawn(
    'ssh',
    [
      '-v',
      '-tt',
      // No configuration files: the machine's own settings stay out of the test.
      '-F',
      '/dev/null',
      '-p',
      String(port),
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      ...options,
      destination,
    ],
    { env: { PATH: process.env.PATH ?? '', TERM: 'vt100', ...env }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (bytes: Buffer) => {
    stdout += bytes.toString('utf8');
  });
  child.stderr.on('data', (bytes: Buffer) => {
    stderr += bytes.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Whether the server took a raw connection (SSH sends its version line at once) or closed it unsaid. */
async function admission(connection: RawConnection): Promise<'admitted' | 'refused'> {
  await vi.waitFor(() => expect(connection.received().length > 0 || connection.isClosed()).toBe(true), WAIT);
  if (connection.received().length > 0) {
    expect(connection.received().toString('latin1')).toMatch(/^SSH-2\.0-baud\r\n/);
    return 'admitted';
  }
  return 'refused';
}

describeEachDialect('SSH server', (dialect) => {
  const clock = fakeClock();
  const sessions = createRecordingSessions();
  const { errors, log } = recordingLog();
  const clients: ssh2.Client[] = [];
  let test: TestBoard;
  let servers: TerminalServers;
  let port: number;
  let carolSecret: string;
  const ALICE_ED25519 = newSshKey('ed25519', 'alice@laptop');
  const ALICE_RSA = newSshKey('rsa-2048', 'alice@work');
  const CAROL_ECDSA = newSshKey('ecdsa-256', 'carol@desk');
  const UNREGISTERED = newSshKey('ed25519', 'nobody@nowhere');

  /** Logs in and keeps the client to end after the file. */
  const login = async (...args: Parameters<typeof sshLogin>) => {
    const call = await sshLogin(...args);
    clients.push(call.client);
    return call;
  };
  const callOf = (username: string) => sessions.calls.filter((call) => call.username === username).at(-1);
  /** A code carol's authenticator shows now, never one shown before (a code is taken once). */
  const carolCode = () => {
    clock.advance(STEP_MS);
    return totpCode(carolSecret, clock.now().getTime());
  };

  beforeAll(async () => {
    test = await createTestBoard(dialect, {
      clock,
      config: {
        contentServers: {
          ssh: { enabled: true, address: '127.0.0.1', port: 0 },
          terminal: { maxConnectionsPerAddress: 50, maxUnauthenticatedPerAddress: 20 },
          web: { restApi: { loginThrottle: { maxFailures: 4, windowSeconds: 600 } } },
        },
      },
    });
    servers = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    port = servers.ssh?.port ?? 0;
    const alice = await test.userWithToken('alice');
    await registerKey(test, alice.token, ALICE_ED25519.line);
    await registerKey(test, alice.token, ALICE_RSA.line);
    await test.userWithToken('dave');
    const carol = await test.userWithToken('carol');
    await registerKey(test, carol.token, CAROL_ECDSA.line);
    carolSecret = await turnOnTwoFactor(test, carol.token, clock);
  });
  afterAll(async () => {
    for (const client of clients) client.end();
    await servers.stop();
    await test.close();
    expect(errors).toEqual([]);
  });

  it('listens where configured, with the fingerprint of the host key the client is shown', async () => {
    let shownKey: Buffer | null = null;
    await login(port, 'alice', [{ password: PASSWORD }], {
      extra: {
        hostVerifier: (key: Buffer) => {
          shownKey = key;
          return true;
        },
      },
    });
    const digest = createHash('sha256')
      .update(shownKey ?? Buffer.alloc(0))
      .digest('base64')
      .replace(/=+$/, '');
    expect(servers.ssh).toEqual({ address: '127.0.0.1', port, fingerprint: `SHA256:${digest}` });
    expect(servers.telnet).toBeNull();
  });

  it('logs in with a password and opens a shell carrying the terminal type, the size and the caller', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(client);
    await vi.waitFor(() => expect(shell.output()).toContain('hello alice'), WAIT);
    expect(shell.output()).toBe('ssh term=xterm-256color size=100x30 secure=true\r\nhello alice\r\n');
    const call = callOf('alice');
    expect(call?.login).not.toBeNull();
    expect(call?.connection.remoteAddress).toBe('127.0.0.1');
    // The login made a session marked as a terminal one, as the session list shows it.
    const families = await test.board.db
      .selectFrom('refreshFamilies')
      .innerJoin('users', 'users.id', 'refreshFamilies.userId')
      .select(['refreshFamilies.via', 'refreshFamilies.isSecure'])
      .where('users.username', '=', 'alice')
      .execute();
    expect(families).toContainEqual({ via: 'terminal', isSecure: 1 });

    shell.channel.write('hi there\r');
    await vi.waitFor(() => expect(shell.output()).toContain('typed hi there\r\n'), WAIT);
    client.end();
    await vi.waitFor(() => expect(call?.isClosed).toBe(true), WAIT);
  });

  it('lets `new` in without credentials to sign up in the shell, counted as not logged in until then', async () => {
    const { client } = await login(port, 'NEW', [{ none: true }]);
    const shell = await openShell(client);
    await vi.waitFor(() => expect(shell.output()).toContain('login:'), WAIT);
    const call = sessions.calls.at(-1);
    expect(call).toMatchObject({ login: null, signUp: true, username: null });
    shell.channel.write(`login dave ${PASSWORD}\r`);
    await vi.waitFor(() => expect(shell.output()).toContain('hello dave'), WAIT);
    client.end();
    await vi.waitFor(() => expect(call?.isClosed).toBe(true), WAIT);
  });

  it('logs in with a registered key, Ed25519 or RSA, asked about first and then signed with', async () => {
    for (const key of [ALICE_ED25519, ALICE_RSA]) {
      const call = await login(port, 'alice', [{ key: key.privateKey }]);
      expect(call.refusals).toEqual([]);
      const shell = await openShell(call.client);
      await vi.waitFor(() => expect(shell.output()).toContain('hello alice\r\n'), WAIT);
    }
  });

  it('refuses a key not registered to the user, and lets the same connection go on with the password', async () => {
    const call = await login(port, 'alice', [
      { key: UNREGISTERED.privateKey },
      { key: CAROL_ECDSA.privateKey },
      { password: PASSWORD },
    ]);
    expect(call.refusals).toEqual([
      { methodsLeft: ['publickey', 'keyboard-interactive', 'password'], isPartialSuccess: false },
      { methodsLeft: ['publickey', 'keyboard-interactive', 'password'], isPartialSuccess: false },
    ]);
  });

  it('refuses a username holding a NUL without asking the database (PostgreSQL text cannot hold one)', async () => {
    const call = await refusedLogin(
      sshLogin(port, 'ali\u0000ce', [{ password: PASSWORD }, { key: ALICE_ED25519.privateKey }]),
    );
    expect(call.refusals).toEqual([
      { methodsLeft: ['publickey', 'keyboard-interactive', 'password'], isPartialSuccess: false },
      { methodsLeft: ['publickey', 'keyboard-interactive', 'password'], isPartialSuccess: false },
    ]);
  });

  it('asks for the code by keyboard-interactive after a key when two-factor login is on', async () => {
    const call = await login(port, 'carol', [{ key: CAROL_ECDSA.privateKey }, { answers: [carolCode()] }]);
    expect(call.refusals).toEqual([{ methodsLeft: ['keyboard-interactive'], isPartialSuccess: true }]);
    expect(call.prompts).toEqual([{ prompt: 'Code: ', echo: false }]);
    const shell = await openShell(call.client);
    await vi.waitFor(() => expect(shell.output()).toContain('hello carol\r\n'), WAIT);
  });

  it('refuses a wrong password, and counts it in the one budget the API login spends too', async () => {
    const localAddress = '127.0.0.7';
    const wrong = await refusedLogin(sshLogin(port, 'dave', [{ password: 'wrong' }], { localAddress }));
    expect(wrong.refusals).toEqual([
      { methodsLeft: ['publickey', 'keyboard-interactive', 'password'], isPartialSuccess: false },
    ]);
    const viaApi = await test.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'dave', password: 'wrong too' },
      remoteAddress: localAddress,
    });
    expect(viaApi.statusCode).toBe(401);
    expect(viaApi.headers['ratelimit-remaining']).toBe('2');
    // Two guesses on one connection, each counted: the budget of 4 is spent.
    const twice = await refusedLogin(
      sshLogin(port, 'dave', [{ password: 'wrong 3' }, { password: 'wrong 4' }], { localAddress }),
    );
    expect(twice.refusals).toHaveLength(2);
    // Now even the right password is refused, and the connection hung up.
    const throttled = await refusedLogin(sshLogin(port, 'dave', [{ password: PASSWORD }], { localAddress }));
    expect(throttled.refusals).toEqual([{ methodsLeft: [], isPartialSuccess: false }]);
    const apiAfter = await test.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'dave', password: PASSWORD },
      remoteAddress: localAddress,
    });
    expect(apiAfter.statusCode).toBe(429);
  });

  it('asks for the code by keyboard-interactive after a right password when two-factor login is on', async () => {
    const code = carolCode();
    const call = await login(port, 'carol', [{ password: PASSWORD }, { answers: [code] }]);
    expect(call.refusals).toEqual([{ methodsLeft: ['keyboard-interactive'], isPartialSuccess: true }]);
    expect(call.prompts).toEqual([{ prompt: 'Code: ', echo: false }]);
    const shell = await openShell(call.client);
    await vi.waitFor(() => expect(shell.output()).toContain('hello carol\r\n'), WAIT);
  });

  it('logs in by keyboard-interactive alone: Password:, then Code: only when two-factor login is on', async () => {
    const carol = await login(port, 'carol', [{ answers: [PASSWORD, carolCode()] }]);
    expect(carol.prompts).toEqual([
      { prompt: 'Password: ', echo: false },
      { prompt: 'Code: ', echo: false },
    ]);
    const alice = await login(port, 'alice', [{ answers: [PASSWORD] }]);
    expect(alice.prompts).toEqual([{ prompt: 'Password: ', echo: false }]);
    expect(alice.refusals).toEqual([]);
  });

  it('refuses a wrong code and asks only the code again', async () => {
    const code = carolCode();
    const wrongCode = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const call = await login(port, 'carol', [{ password: PASSWORD }, { answers: [wrongCode] }, { answers: [code] }], {
      localAddress: '127.0.0.8',
    });
    expect(call.refusals).toEqual([
      { methodsLeft: ['keyboard-interactive'], isPartialSuccess: true },
      { methodsLeft: ['keyboard-interactive'], isPartialSuccess: false },
    ]);
    expect(call.prompts.map(({ prompt }) => prompt)).toEqual(['Code: ', 'Code: ']);
  });

  it('refuses a right password with a replayed code', async () => {
    const code = carolCode();
    await login(port, 'carol', [{ password: PASSWORD }, { answers: [code] }], { localAddress: '127.0.0.9' });
    const replay = await refusedLogin(
      sshLogin(port, 'carol', [{ password: PASSWORD }, { answers: [code] }], { localAddress: '127.0.0.9' }),
    );
    expect(replay.refusals.at(-1)).toEqual({ methodsLeft: ['keyboard-interactive'], isPartialSuccess: false });
  });

  it('refuses exec, sftp, X11 forwarding and port forwarding both ways', async () => {
    /** The error of `request` on a connection of its own (a session channel refused stays open in ssh2's client). */
    const failureOf = async (request: (client: ssh2.Client, done: (error: Error | undefined) => void) => void) => {
      const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
      return new Promise<Error | undefined>((resolve) => request(client, resolve));
    };
    expect((await failureOf((client, done) => client.exec('ls', (error) => done(error))))?.message).toBe(
      'Unable to exec',
    );
    expect((await failureOf((client, done) => client.sftp((error) => done(error))))?.message).toBe(
      'Unable to start subsystem: sftp',
    );
    expect(
      await failureOf((client, done) =>
        client.forwardOut('127.0.0.1', 4000, '127.0.0.1', port, (error) => done(error)),
      ),
    ).toBeInstanceOf(Error);
    expect((await failureOf((client, done) => client.forwardIn('127.0.0.1', 0, (error) => done(error))))?.message).toBe(
      'Unable to bind to 127.0.0.1:0',
    );
    expect(
      (await failureOf((client, done) => client.shell({ term: 'ansi' }, { x11: true }, (error) => done(error))))
        ?.message,
    ).toBe('Unable to request X11');
  });

  it('opens the shell after a refused request whose channel the client closed', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    await new Promise<void>((resolve) => client.shell({ term: 'ansi' }, { x11: true }, () => resolve()));
    const shell = await openShell(client, { term: 'ansi', cols: 80, rows: 25 });
    await vi.waitFor(() => expect(shell.output()).toContain('ssh term=ansi size=80x25'), WAIT);
  });

  it('refuses agent forwarding', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }], {
      extra: { agent: path.join(test.dir, 'no-agent.sock'), agentForward: true },
    });
    const error = await new Promise<Error | undefined>((resolve) => client.shell((caught) => resolve(caught)));
    expect(error?.message).toBe('Unable to request agent forwarding');
  });

  it('refuses a second shell on one connection', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    const first = await openShell(client);
    await vi.waitFor(() => expect(first.output()).toContain('hello alice'), WAIT);
    await expect(openShell(client)).rejects.toThrow();
    first.channel.write('still here\r');
    await vi.waitFor(() => expect(first.output()).toContain('typed still here'), WAIT);
  });

  it('passes window changes to the session, clamped', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(client);
    await vi.waitFor(() => expect(shell.output()).toContain('hello alice'), WAIT);
    const call = callOf('alice');
    shell.channel.setWindow(40, 120, 0, 0);
    await vi.waitFor(() => expect(shell.output()).toContain('size 120x40\r\n'), WAIT);
    shell.channel.setWindow(1000, 1000, 0, 0);
    await vi.waitFor(() => expect(shell.output()).toContain('size 255x255\r\n'), WAIT);
    expect(call?.resizes).toEqual([
      { columns: 120, rows: 40 },
      { columns: 255, rows: 255 },
    ]);
  });

  it('reads a window of 0×0 as not known and 65535×65535 as the largest it draws, in the pty and after', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(client, { term: 'xterm', cols: 65535, rows: 65535 });
    await vi.waitFor(() => expect(shell.output()).toContain('hello alice'), WAIT);
    expect(shell.output()).toMatch(/^ssh term=xterm size=255x255 /);
    const call = callOf('alice');
    // A 0×0 change keeps the size it had: nothing to draw again, so the session is not told.
    for (const [rows, columns] of [
      [0, 0],
      [30, 100],
      [0, 0],
      [65535, 65535],
      [0, 0],
      [1, 1],
    ] as const) {
      shell.channel.setWindow(rows, columns, 0, 0);
    }
    await vi.waitFor(() => expect(shell.output()).toContain('size 20x5\r\n'), WAIT);
    expect(call?.resizes).toEqual([
      { columns: 100, rows: 30 },
      { columns: 255, rows: 255 },
      { columns: 20, rows: 5 },
    ]);
  });

  it('takes a shell without a pty as a terminal that said nothing, 80×24', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(client, false);
    await vi.waitFor(() => expect(shell.output()).toContain('hello alice'), WAIT);
    expect(shell.output()).toMatch(/^ssh term=\(none\) size=80x24 secure=true\r\n/);
  });

  it('hangs up with exit status 0 when the session ends the call', async () => {
    const { client } = await login(port, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(client);
    const exitCode = new Promise<number>((resolve) => shell.channel.once('exit', resolve));
    const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await vi.waitFor(() => expect(shell.output()).toContain('hello alice'), WAIT);
    shell.channel.write('bye\r');
    expect(await exitCode).toBe(0);
    await shell.closed;
    await clientClosed;
    expect(shell.output()).toMatch(/bye\r\n$/);
  });

  it('connects a real OpenSSH client: keyboard-interactive with password and code, a pty, and a clean exit', async () => {
    const code = carolCode();
    const askpass = path.join(test.dir, 'askpass.sh');
    writeFileSync(askpass, `#!/bin/sh\ncase "$1" in\n  *Code*) echo '${code}' ;;\n  *) echo '${PASSWORD}' ;;\nesac\n`);
    chmodSync(askpass, 0o700);
    const ssh = runOpenSsh(
      port,
      'carol@127.0.0.1',
      ['-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1'],
      {
        HOME: test.dir,
        SSH_ASKPASS: askpass,
        SSH_ASKPASS_REQUIRE: 'force',
      },
    );
    try {
      await vi.waitFor(() => expect(ssh.stdout()).toContain('hello carol'), { timeout: 20_000, interval: 50 });
      // No window size on a pipe: the client reports 0×0 ("not known"), and the session gets 80×24.
      expect(ssh.stdout()).toContain('ssh term=vt100 size=80x24 secure=true\r\n');
      ssh.child.stdin.write('bye\r');
      expect(await ssh.exited).toBe(0);
      expect(ssh.stderr()).toContain(`Server host key: ssh-ed25519 ${servers.ssh?.fingerprint}`);
      expect(ssh.stderr()).toMatch(
        /Authenticated to 127\.0\.0\.1 \(\[127\.0\.0\.1\]:\d+\) using "keyboard-interactive"/,
      );
    } finally {
      if (ssh.child.exitCode === null) ssh.child.kill();
    }
  });

  it('connects a real OpenSSH client with a registered key', async () => {
    const keyFile = path.join(test.dir, 'id_ed25519');
    writeFileSync(keyFile, ALICE_ED25519.privateKey, { mode: 0o600 });
    const ssh = runOpenSsh(
      port,
      'alice@127.0.0.1',
      ['-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'PreferredAuthentications=publickey'],
      { HOME: test.dir },
    );
    try {
      await vi.waitFor(() => expect(ssh.stdout()).toContain('hello alice'), { timeout: 20_000, interval: 50 });
      ssh.child.stdin.write('bye\r');
      expect(await ssh.exited).toBe(0);
      expect(ssh.stderr()).toMatch(/Authenticated to 127\.0\.0\.1 \(\[127\.0\.0\.1\]:\d+\) using "publickey"/);
    } finally {
      if (ssh.child.exitCode === null) ssh.child.kill();
    }
  });

  it('says goodbye to every caller in a shell when the servers stop, and hangs up', async () => {
    const second = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    const { client } = await sshLogin(second.ssh?.port ?? 0, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(client);
    await vi.waitFor(() => expect(shell.output()).toContain('hello alice'), WAIT);
    await second.stop();
    await shell.closed;
    expect(shell.output()).toMatch(new RegExp(`hello alice\\r\\n\\r\\n${SHUTDOWN_GOODBYE}\\r\\n$`));
  });
});

describeEachDialect('SSH connection limits', (dialect) => {
  const sessions = createRecordingSessions();
  const { errors, log } = recordingLog();
  const opened: { end(): void }[] = [];
  let test: TestBoard;
  let servers: TerminalServers;
  let port: number;

  const raw = async (localAddress: string) => {
    const connection = await connectRaw(port, localAddress);
    opened.push({ end: () => connection.socket.destroy() });
    return connection;
  };
  const loggedIn = async (localAddress: string) => {
    const call = await sshLogin(port, 'alice', [{ password: PASSWORD }], { localAddress });
    opened.push(call.client);
    return call;
  };
  /** Hangs up everything a test opened. */
  const hangUpAll = () => {
    for (const connection of opened.splice(0)) connection.end();
  };

  beforeAll(async () => {
    test = await createTestBoard(dialect, {
      config: {
        contentServers: {
          ssh: { enabled: true, address: '127.0.0.1', port: 0 },
          terminal: { maxConnectionsPerNode: 4, maxConnectionsPerAddress: 3, maxUnauthenticatedPerAddress: 2 },
        },
      },
    });
    servers = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    port = servers.ssh?.port ?? 0;
    await test.userWithToken('alice');
  });
  afterAll(async () => {
    hangUpAll();
    await servers.stop();
    await test.close();
    expect(errors).toEqual([]);
  });

  it('refuses a third connection still logging in from one address, and takes one again once one closes', async () => {
    const first = await raw('127.0.0.2');
    expect(await admission(first)).toBe('admitted');
    expect(await admission(await raw('127.0.0.2'))).toBe('admitted');
    const third = await raw('127.0.0.2');
    expect(await admission(third)).toBe('refused');
    expect(third.received().length).toBe(0);
    // Another address is not held back by this one.
    expect(await admission(await raw('127.0.0.3'))).toBe('admitted');
    first.socket.destroy();
    await vi.waitFor(async () => expect(await admission(await raw('127.0.0.2'))).toBe('admitted'), WAIT);
    hangUpAll();
  });

  it('caps the connections of one address, logged in or not', async () => {
    await vi.waitFor(async () => expect(await admission(await raw('127.0.0.4'))).toBe('admitted'), WAIT);
    await loggedIn('127.0.0.4');
    await loggedIn('127.0.0.4');
    expect(await admission(await raw('127.0.0.4'))).toBe('refused');
    hangUpAll();
  });

  it('caps the node, whatever the address', async () => {
    for (const address of ['127.0.1.1', '127.0.1.2', '127.0.1.3', '127.0.1.4']) {
      // The closes of the test before may take a moment to reach the server.
      await vi.waitFor(async () => expect(await admission(await raw(address))).toBe('admitted'), WAIT);
    }
    expect(await admission(await raw('127.0.1.5'))).toBe('refused');
    hangUpAll();
  });
});

describe('SSH login timeout', () => {
  const sessions = createRecordingSessions();
  const { errors, log } = recordingLog();
  let test: TestBoard;
  let servers: TerminalServers;
  let port: number;

  // No database work is timed here: one dialect is enough.
  beforeAll(async () => {
    test = await createTestBoard('sqlite', {
      config: {
        contentServers: { ssh: { enabled: true, address: '127.0.0.1', port: 0 }, terminal: { loginTimeoutSeconds: 5 } },
      },
    });
    servers = await startTerminalServers({ board: test.board, startSession: sessions.startSession, log });
    port = servers.ssh?.port ?? 0;
    await test.userWithToken('alice');
  });
  afterAll(async () => {
    await servers.stop();
    await test.close();
    expect(errors).toEqual([]);
  });

  it('cuts off a connection that does not log in, or logs in and opens no shell, after loginTimeoutSeconds', async () => {
    const silent = await connectRaw(port);
    const noShell = await sshLogin(port, 'alice', [{ password: PASSWORD }]);
    const noShellClosed = new Promise<void>((resolve) => noShell.client.once('close', () => resolve()));
    const inShell = await sshLogin(port, 'alice', [{ password: PASSWORD }]);
    const shell = await openShell(inShell.client);
    await vi.waitFor(() => expect(silent.isClosed()).toBe(true), { timeout: 15_000, interval: 100 });
    await noShellClosed;
    expect(silent.closedAfterMs()).toBeGreaterThanOrEqual(4900);
    // The login that never got a shell has its session ended; the one in a shell keeps its own.
    const liveTerminalSessions = () =>
      test.board.db
        .selectFrom('refreshFamilies')
        .select('id')
        .where('via', '=', 'terminal')
        .where('revokedAt', 'is', null)
        .execute();
    await vi.waitFor(async () => expect(await liveTerminalSessions()).toHaveLength(1), WAIT);
    // The caller in a shell is past the login: the session's idle timeout is what watches them now.
    shell.channel.write('still here\r');
    await vi.waitFor(() => expect(shell.output()).toContain('typed still here'), WAIT);
    inShell.client.end();
  });
});
