import net from 'node:net';
import ssh2, {
  type AuthContext,
  type AuthenticationType,
  type Connection,
  type KeyboardAuthContext,
  type PublicKeyAuthContext,
  type ServerChannel,
  type Session,
} from 'ssh2';
import type { AuthService, LoginResult, SessionTokens } from '../auth/auth-service.js';
import type { SshKeyService } from '../auth/ssh-key-service.js';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '../errors.js';
import type { ConnectionLimits } from './connection-limits.js';
import { NEW_USER_NAME } from './screens/login.js';
import type { SshHostKey } from './ssh-host-key.js';
import type { TerminalConnection, TerminalSize } from './terminal-connection.js';
import {
  createTransportConnection,
  DEFAULT_TERMINAL_SIZE,
  reportedTerminalSize,
  type TransportConnection,
  terminalTypeName,
} from './transport-connection.js';

/** How long a hung-up caller's connection may take to close before it is cut. */
const HANG_UP_GRACE_MS = 5000;

/** What the server announces itself as (`SSH-2.0-baud`). */
const IDENT = 'baud';

export interface SshServerOptions {
  readonly address: string;
  readonly port: number;
  readonly hostKey: SshHostKey;
  readonly limits: ConnectionLimits;
  /** From accept until the shell starts: handshake, login and opening the shell. */
  readonly loginTimeoutSeconds: number;
  readonly auth: Pick<AuthService, 'login' | 'loginWithSshKey' | 'logout'>;
  /** The handshake's question whether a key is one the user registered. */
  readonly sshKeys: Pick<SshKeyService, 'isRegistered'>;
  /** Whether `ssh new@…` may come in without credentials to sign up (registration not closed). */
  allowsSignUp(): boolean;
  /**
   * The caller logged in before the shell opened (`login` holds their session's tokens), or came
   * as `new` to sign up (`login` null, `signUp` true: the session asks, and calls `onLoggedIn`).
   */
  startSession(
    connection: TerminalConnection,
    options: { login: SessionTokens | null; signUp: boolean; onLoggedIn: () => void },
  ): void;
  onError(error: unknown, context: string): void;
}

export interface SshServer {
  readonly address: string;
  readonly port: number;
  readonly fingerprint: string;
  /** Stops accepting, writes `goodbye` to every caller in a shell, hangs up and waits for every connection to close. */
  stop(goodbye: string): Promise<void>;
}

/** What a caller proved who they are with: a password, or a key whose signature was verified. */
type Proof = { readonly password: string } | { readonly algorithm: string; readonly keyData: Buffer };

/** How one login attempt ended, in the terms SSH authentication answers with. */
type LoginOutcome =
  | { readonly kind: 'logged-in'; readonly tokens: SessionTokens }
  /** The proof holds and the account has two-factor login on: the code is still to come. */
  | { readonly kind: 'needs-code' }
  | { readonly kind: 'refused' }
  /** The login throttle's budget for this username or address is spent (the API's 429). */
  | { readonly kind: 'throttled' };

async function outcomeOf(login: Promise<LoginResult>): Promise<LoginOutcome> {
  try {
    const { token, refreshToken } = await login;
    return { kind: 'logged-in', tokens: { token, refreshToken } };
  } catch (error) {
    if (error instanceof UnauthorizedError && error.members.otpRequired === true) return { kind: 'needs-code' };
    if (error instanceof TooManyRequestsError) return { kind: 'throttled' };
    // Wrong password, key or code, unknown or locked account, an account awaiting approval: SSH
    // has one answer for all of them, as the API has one status for the first three.
    if (error instanceof UnauthorizedError || error instanceof ForbiddenError) return { kind: 'refused' };
    throw error;
  }
}

/** Asks one question with echo off; null when the client gave up on keyboard-interactive or hung up. */
function ask(context: KeyboardAuthContext, socket: net.Socket, prompt: string): Promise<string | null> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(null);
    const onClose = () => resolve(null);
    socket.once('close', onClose);
    context.prompt([{ prompt, echo: false }], (answers: unknown) => {
      socket.off('close', onClose);
      // ssh2 calls back with an Error instead of answers when the client aborts.
      resolve(Array.isArray(answers) ? String(answers[0] ?? '') : null);
    });
  });
}

/** A key blob as ssh2 reads it, or null when it is none it can verify with. */
function publicKeyOf(keyData: Buffer): ssh2.ParsedKey | null {
  const parsed: ssh2.ParsedKey | ssh2.ParsedKey[] | Error = ssh2.utils.parseKey(keyData);
  if (parsed instanceof Error || Array.isArray(parsed)) return null;
  return parsed;
}

/**
 * Listens for SSH callers and resolves once listening. Callers log in with their board account
 * (a registered public key, a password, or keyboard-interactive asking the password; then the
 * two-factor code by keyboard-interactive when the account has it on) and get exactly one
 * shell, which becomes a TerminalConnection for `startSession`.
 * Everything else SSH can carry is refused: exec, subsystems (sftp), X11 and agent forwarding,
 * port forwarding both ways, and every other channel or global request (ssh2 answers what no
 * listener takes with a failure, and none is registered for them here).
 */
export async function startSshServer(options: SshServerOptions): Promise<SshServer> {
  const { limits, auth, sshKeys, hostKey } = options;
  const methods: AuthenticationType[] = ['publickey', 'keyboard-interactive', 'password'];
  /** Every open connection's way to say goodbye before the server stops. */
  const open = new Map<net.Socket, (goodbye: string) => void>();
  /** Logins and logouts under way: stopping waits for them, as they use the database. */
  const pending = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  function serve(socket: net.Socket): void {
    socket.on('error', () => {
      // A reset or a broken pipe: 'close' follows, and that is all there is to do.
    });
    const remoteAddress = socket.remoteAddress ?? '';
    const admission = limits.admit(remoteAddress);
    if (!admission.isAdmitted) {
      // Before the SSH handshake, so a crowd of refused connections costs no key exchange.
      socket.destroy();
      return;
    }
    const { place } = admission;
    socket.setNoDelay(true);
    let client: Connection | null = null;
    let tokens: SessionTokens | null = null;
    /** Came as `new` to sign up: let in without credentials, still counted as not logged in. */
    let isSigningUp = false;
    /** The proof (password or key) of an account whose second factor is still to come (partial success). */
    let proofAwaitingCode: Proof | null = null;
    /** What may still be tried: after a partial success, only the code. */
    const methodsLeft = (): AuthenticationType[] => (proofAwaitingCode === null ? methods : ['keyboard-interactive']);
    let sessionChannel: Session | null = null;
    let transport: TransportConnection | null = null;
    let isCut = false;

    /** Ends the connection (a disconnect once SSH is up), and destroys it if the client lingers. */
    const cut = () => {
      if (isCut) return;
      isCut = true;
      if (client) client.end();
      else socket.destroy();
      setTimeout(() => socket.destroy(), HANG_UP_GRACE_MS).unref();
    };
    // Until the shell starts: a connection that logged in but opens no shell has no session
    // watching its idle time, so it is held to the login timeout too.
    const loginTimer = setTimeout(cut, options.loginTimeoutSeconds * 1000);

    /** Ends a login session no caller will use, so it does not stand in the session list for 90 days. */
    const endUnused = (unused: SessionTokens) =>
      track(
        auth
          .logout(unused.refreshToken)
          .catch((error) => options.onError(error, 'ssh: ending an unused login session failed')),
      );

    /**
     * `context` was answered by a login: let the caller in, unless the connection went away while
     * the login ran or the client moved on to another attempt meanwhile (then the session it made
     * has no caller).
     */
    const logIn = (username: string, proof: Proof, otp?: string) =>
      outcomeOf(
        'password' in proof
          ? auth.login({
              username,
              password: proof.password,
              otp,
              clientAddress: remoteAddress,
              isSecure: true,
              via: 'terminal',
            })
          : auth.loginWithSshKey({ username, ...proof, otp, clientAddress: remoteAddress, isSecure: true }),
      );

    function settle(context: AuthContext, outcome: LoginOutcome, proof: Proof, isAbandoned = false): void {
      if (isAbandoned || socket.destroyed) {
        if (outcome.kind === 'logged-in') endUnused(outcome.tokens);
        return;
      }
      switch (outcome.kind) {
        case 'logged-in':
          tokens = outcome.tokens;
          context.accept();
          return;
        case 'needs-code':
          proofAwaitingCode = proof;
          context.reject(['keyboard-interactive'], true);
          return;
        case 'refused':
          context.reject(methodsLeft());
          return;
        case 'throttled':
          context.reject([]);
          cut();
          return;
      }
    }

    async function loginInteractively(context: KeyboardAuthContext): Promise<void> {
      const { username } = context;
      // A client may start another attempt while this one's login runs; ssh2 then aborts this one.
      let isAbandoned = false;
      context.once('abort', () => {
        isAbandoned = true;
      });
      let proof = proofAwaitingCode;
      if (proof === null) {
        const password = await ask(context, socket, 'Password: ');
        if (password === null) return;
        proof = { password };
        const outcome = await logIn(username, proof);
        if (outcome.kind !== 'needs-code' || isAbandoned) {
          settle(context, outcome, proof, isAbandoned);
          return;
        }
        proofAwaitingCode = proof;
      }
      const code = await ask(context, socket, 'Code: ');
      if (code === null) return;
      settle(context, await logIn(username, proof, code), proof, isAbandoned);
    }

    /**
     * Without a signature the client asks whether a key would do (answered by whether the user
     * registered it, as OpenSSH answers from authorized_keys); with one, the signature over the
     * session is checked against that key before the board is asked to log the user in with it.
     */
    async function loginWithKey(context: PublicKeyAuthContext): Promise<void> {
      const { username, key } = context;
      if (context.signature === undefined || context.blob === undefined) {
        if (await sshKeys.isRegistered(username, key.algo, key.data)) context.accept();
        else context.reject(methodsLeft());
        return;
      }
      const publicKey = publicKeyOf(key.data);
      if (publicKey === null || publicKey.verify(context.blob, context.signature, context.hashAlgo) !== true) {
        context.reject(methodsLeft());
        return;
      }
      const proof = { algorithm: key.algo, keyData: key.data };
      settle(context, await logIn(username, proof), proof);
    }

    async function authenticate(context: AuthContext): Promise<void> {
      if (context.username.toLowerCase() === NEW_USER_NAME && options.allowsSignUp()) {
        // As at the telnet prompt: the sign-up questions are the session's, asked in the shell.
        isSigningUp = true;
        context.accept();
      } else if (context.username.includes('\u0000')) {
        // No account's name holds a NUL (PostgreSQL's text cannot): nothing to look up.
        context.reject(methodsLeft());
      } else if (context.method === 'keyboard-interactive') {
        await loginInteractively(context);
      } else if (proofAwaitingCode !== null) {
        context.reject(methodsLeft());
      } else if (context.method === 'password') {
        const proof = { password: context.password };
        settle(context, await logIn(context.username, proof), proof);
      } else if (context.method === 'publickey') {
        await loginWithKey(context);
      } else {
        context.reject(methodsLeft());
      }
    }

    function startShell(channel: ServerChannel, login: SessionTokens | null, terminalType: string, size: TerminalSize) {
      clearTimeout(loginTimer);
      const started = createTransportConnection({
        transport: 'ssh',
        remoteAddress,
        isSecure: true,
        terminalType,
        size,
        write: (bytes) => channel.write(bytes),
        hangUp: () => {
          // The exit status makes OpenSSH's client leave with 0; closing the channel, then the connection.
          channel.exit(0);
          channel.end();
          setTimeout(cut, HANG_UP_GRACE_MS).unref();
        },
      });
      transport = started;
      channel.on('data', (bytes: Buffer) => started.receive(bytes));
      channel.on('close', () => {
        started.closed();
        cut();
      });
      try {
        options.startSession(started.connection, {
          login,
          signUp: isSigningUp,
          onLoggedIn: () => place.loggedIn(),
        });
      } catch (error) {
        options.onError(error, 'ssh: the caller session failed to start');
        started.connection.end();
      }
    }

    function openSession(session: Session): void {
      sessionChannel = session;
      let terminalType = '';
      let size = DEFAULT_TERMINAL_SIZE;
      session.on('pty', (accept, reject, info) => {
        if (transport) return reject?.();
        terminalType = terminalTypeName(info.term);
        size = reportedTerminalSize({ columns: info.cols, rows: info.rows }, size);
        accept?.();
      });
      session.on('window-change', (accept, _reject, info) => {
        const reported = { columns: info.cols, rows: info.rows };
        if (transport) transport.resize(reported);
        else size = reportedTerminalSize(reported, size);
        accept?.();
      });
      session.on('shell', (accept, reject) => {
        if (transport || (tokens === null && !isSigningUp)) return reject();
        startShell(accept(), tokens, terminalType, size);
      });
      session.on('close', () => {
        // A session closed without a shell (after a refused exec, say) frees the place for one.
        if (sessionChannel === session && transport === null) sessionChannel = null;
      });
    }

    // A Server per socket: ssh2 hands its connection to the server's listener with nothing that
    // leads back to the socket, and this keeps the two in one scope (it builds only its offer).
    const server = new ssh2.Server({ hostKeys: [{ key: hostKey.privateKey }], ident: IDENT }, (connection) => {
      client = connection;
      connection.on('error', () => {
        // Protocol errors and dead keepalives: the socket closes, and 'close' does the rest.
      });
      connection.on('authentication', (context) => {
        track(
          authenticate(context).catch((error) => {
            options.onError(error, 'ssh: login failed');
            context.reject();
          }),
        );
      });
      // A caller signing up is not logged in yet: the session says when they are.
      connection.on('ready', () => {
        if (!isSigningUp) place.loggedIn();
      });
      connection.on('session', (accept, reject) => {
        // One session channel per connection, carrying one shell.
        if (sessionChannel !== null || transport !== null) return reject();
        openSession(accept());
      });
    });

    socket.once('close', () => {
      clearTimeout(loginTimer);
      open.delete(socket);
      place.release();
      transport?.closed();
      // Logged in but never opened a shell: once the shell is open, the session owns the login.
      if (tokens !== null && transport === null) endUnused(tokens);
    });
    open.set(socket, (goodbye) => {
      if (transport && !transport.isClosed) {
        transport.connection.write(`\r\n${goodbye}\r\n`);
        transport.connection.end();
      } else {
        cut();
      }
    });
    server.injectSocket(socket);
  }

  const listener = net.createServer(serve);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, options.address, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  listener.on('error', (error) => options.onError(error, 'ssh: the listening socket failed'));
  const bound = listener.address();
  const port = typeof bound === 'object' && bound ? bound.port : options.port;

  return {
    address: options.address,
    port,
    fingerprint: hostKey.fingerprint,
    async stop(goodbye) {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      for (const sayGoodbye of open.values()) sayGoodbye(goodbye);
      await closed;
      // A login that ended as its connection closed may have made a session to end: wait for both.
      while (pending.size > 0) await Promise.all(pending);
    },
  };
}
