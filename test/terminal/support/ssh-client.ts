import ssh2, {
  type AuthenticationType,
  type ClientChannel,
  type ConnectConfig,
  type NextAuthHandler,
  type PseudoTtyOptions,
} from 'ssh2';

/** One step of a login, in the order the client tries them. */
export type SshLoginStep =
  | { readonly password: string }
  /** keyboard-interactive: each prompt the server shows is answered with the next of these. */
  | { readonly answers: readonly string[] }
  /** publickey with this OpenSSH private key: ssh2 asks whether the key would do, then signs. */
  | { readonly key: string }
  | { readonly none: true };

/** What the server answered a step with, when it did not let the caller in. */
export interface SshRefusal {
  readonly methodsLeft: readonly AuthenticationType[];
  readonly isPartialSuccess: boolean;
}

export interface SshCall {
  readonly client: ssh2.Client;
  /** Each keyboard-interactive prompt the server showed, and whether it echoes. */
  readonly prompts: { prompt: string; echo: boolean }[];
  readonly refusals: SshRefusal[];
}

/**
 * Connects with ssh2's client and logs in by `steps`; resolves once logged in, rejects with the
 * client's error (the refusals and prompts seen are on the error as `call`).
 */
export function sshLogin(
  port: number,
  username: string,
  steps: readonly SshLoginStep[],
  options: { localAddress?: string; extra?: Partial<ConnectConfig> } = {},
): Promise<SshCall> {
  const client = new ssh2.Client();
  const call: SshCall = { client, prompts: [], refusals: [] };
  const remaining = [...steps];
  let answers: string[] = [];
  let isFirst = true;

  const authHandler = (
    methodsLeft: AuthenticationType[] | null,
    isPartialSuccess: boolean | null,
    next: NextAuthHandler,
  ) => {
    if (!isFirst) call.refusals.push({ methodsLeft: methodsLeft ?? [], isPartialSuccess: isPartialSuccess === true });
    isFirst = false;
    const step = remaining.shift();
    // false ends the login: ssh2 takes it, though its types do not say so.
    if (step === undefined) return next(false as unknown as AuthenticationType);
    if ('password' in step) return next({ type: 'password', username, password: step.password });
    if ('none' in step) return next({ type: 'none', username });
    if ('key' in step) return next({ type: 'publickey', username, key: step.key });
    answers = [...step.answers];
    return next({
      type: 'keyboard-interactive',
      username,
      prompt: (_name, _instructions, _lang, prompts, finish) => {
        call.prompts.push(...prompts.map(({ prompt, echo }) => ({ prompt, echo: echo === true })));
        finish(prompts.map(() => answers.shift() ?? ''));
      },
    });
  };

  return new Promise((resolve, reject) => {
    client.once('ready', () => resolve(call));
    client.once('error', (error) => {
      Object.assign(error, { call });
      reject(error);
    });
    client.once('close', () => reject(Object.assign(new Error('closed before logging in'), { call })));
    client.connect({
      host: '127.0.0.1',
      port,
      username,
      authHandler,
      readyTimeout: 20_000,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...options.extra,
    });
  });
}

/** A shell channel and everything it has printed so far. */
export interface SshShell {
  readonly channel: ClientChannel;
  output(): string;
  readonly closed: Promise<void>;
}

/** Opens a shell (with a pty unless `pty` is false) and collects what it prints. */
export function openShell(
  client: ssh2.Client,
  pty: PseudoTtyOptions | false = { term: 'xterm-256color', cols: 100, rows: 30 },
): Promise<SshShell> {
  return new Promise((resolve, reject) => {
    client.shell(pty, (error, channel) => {
      if (error) return reject(error);
      let text = '';
      channel.on('data', (bytes: Buffer) => {
        text += bytes.toString('utf8');
      });
      const closed = new Promise<void>((done) => channel.once('close', () => done()));
      resolve({ channel, output: () => text, closed });
    });
  });
}
