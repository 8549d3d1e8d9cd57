import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { openBoard } from '../../src/board.js';
import { configFromObject } from '../../src/config/load-config.js';
import type { Dialect } from '../../src/db/database.js';
import { type RunningBoard, serveBoard } from '../../src/setup/serve-board.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';
import { describeWithTerminalClients, openTmuxTerminal, type TmuxTerminal } from '../support/tmux-terminal.js';
import { totpCode } from '../support/totp-code.js';

const PASSWORD = 'correct horse battery';
const BOARD_NAME = 'Sector 7';
/** How long a test polls the API for what a caller did before it fails (it ends as soon as it holds). */
const POLL = { timeout: 10_000, interval: 50 };

/** An answer of the API: its status and its JSON body. */
interface Answer<Body = unknown> {
  readonly status: number;
  readonly body: Body;
}

/** What the tests read of the API's answers. */
interface Page<Item> {
  readonly data: Item[];
}
interface OwnSession {
  readonly via: string;
}
interface NodeEntry {
  readonly username: string;
  readonly isSecure: boolean;
}
interface MessageSummary {
  readonly messageId: number;
  readonly uuid: string;
  readonly fromUserName: string;
  readonly toUserName: string;
  readonly subject: string;
  readonly replyToMessageId: number | null;
}
interface MailSummary {
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly read: boolean;
}

/**
 * Callers dialling in with Debian's own clients — OpenSSH's `ssh` and `telnet` — to a board
 * served by `serveBoard` as `baud serve` serves it (HTTP, SSH and telnet on free ports), each
 * client in a tmux pane read back as a person sees it. What the callers do is checked through
 * the HTTP API, as another client of the same board would see it.
 */
describeWithTerminalClients('terminal callers with real clients', () => {
  describeEachDialect('OpenSSH and telnet', (dialect) => {
    let board: ServedBoard;
    const terminals: TmuxTerminal[] = [];
    const tokens: Record<string, string> = {};
    const ids: Record<string, number> = {};

    /** A client in a tmux pane, closed after the test. */
    async function dial(command: readonly string[], options: Parameters<typeof openTmuxTerminal>[1] = {}) {
      const terminal = await openTmuxTerminal(command, { ...options, env: { HOME: board.dir, ...options.env } });
      terminals.push(terminal);
      return terminal;
    }

    /** OpenSSH as a caller runs it, with no configuration of this machine's in the way. */
    const ssh = (username: string, options: readonly string[]) => [
      'ssh',
      '-tt',
      '-F',
      '/dev/null',
      '-p',
      String(board.running.ssh?.port),
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      // The "permanently added" warning would be the first line of the screen.
      '-o',
      'LogLevel=ERROR',
      ...options,
      `${username}@127.0.0.1`,
    ];
    const telnet = () => ['telnet', '127.0.0.1', String(board.running.telnet?.port)];

    /** The API of the served board over HTTP, as `token`'s owner. */
    async function api<Body>(method: string, url: string, token?: string, payload?: unknown): Promise<Answer<Body>> {
      const response = await fetch(`${board.running.url}${url}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as Body };
    }

    async function post(username: string, areaTag: string, subject: string, message: string): Promise<number> {
      const posted = await api<MessageSummary>('POST', `/messages/areas/${areaTag}/messages`, tokens[username], {
        subject,
        message,
      });
      expect(posted.status).toBe(201);
      return posted.body.messageId;
    }

    const terminalSessionsOf = async (username: string) => {
      const sessions = await api<Page<OwnSession>>('GET', '/users/me/sessions', tokens[username]);
      expect(sessions.status).toBe(200);
      return sessions.body.data.filter((session) => session.via === 'terminal');
    };
    /** The nodes of SSH callers (the API callers here come over plain HTTP: not secure). */
    const sshNodesOf = async (username: string) => {
      const nodes = await api<Page<NodeEntry>>('GET', '/system/nodes', tokens.bob);
      expect(nodes.status).toBe(200);
      return nodes.body.data.filter((node) => node.username === username && node.isSecure);
    };

    beforeAll(async () => {
      board = await serveTestBoard(dialect, ['alice', 'bob', 'carol', 'dave', 'erin']);
      for (const username of ['alice', 'bob', 'carol', 'dave', 'erin']) {
        const login = await api<{ accessToken: string }>('POST', '/auth/login', undefined, {
          username,
          password: PASSWORD,
        });
        expect(login.status).toBe(200);
        tokens[username] = login.body.accessToken;
      }
      ids.first = await post('bob', 'general', 'First', 'The first message.');
      ids.second = await post('bob', 'general', 'Second', 'The second message.\nWith a second line.');
    });
    afterEach(async () => {
      for (const terminal of terminals.splice(0)) await terminal.close();
    });
    afterAll(async () => {
      await board?.close();
    });

    it('OpenSSH with a registered key: new scan, reply, post, mail, who, last callers, goodbye', async () => {
      const keyFile = path.join(board.dir, 'alice_ed25519');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@laptop', '-f', keyFile]);
      const added = await api<{ type: string; fingerprint: string; label: string | null }>(
        'POST',
        '/users/me/ssh-keys',
        tokens.alice,
        { publicKey: readFileSync(`${keyFile}.pub`, 'utf8') },
      );
      expect(added.status).toBe(201);
      // The fingerprint OpenSSH itself prints for the key.
      const [, fingerprint] = execFileSync('ssh-keygen', ['-l', '-f', `${keyFile}.pub`], { encoding: 'utf8' }).split(
        ' ',
      );
      expect(added.body).toMatchObject({ type: 'ssh-ed25519', fingerprint });

      const caller = await dial(
        ssh('alice', ['-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', 'PreferredAuthentications=publickey']),
      );
      let screen = await caller.waitFor('Your choice:');
      expect(screen.slice(0, 8)).toEqual([
        'Main menu',
        '',
        '[N] New scan                  [R] Read an area',
        '[P] Post a message            [M] Mail',
        '[F] Files                     [S] Search messages',
        "[W] Who's online              [L] Last callers",
        '[U] Your profile              [G] Goodbye',
        'Your choice:',
      ]);
      // The caller is a node of the board and a terminal session of their account while connected.
      await expect.poll(() => sshNodesOf('alice'), POLL).toHaveLength(1);
      expect(await terminalSessionsOf('alice')).toHaveLength(1);

      // N: bob's two messages, one after the other; R on the second replies, quoting it.
      await caller.type('n');
      screen = await caller.waitFor(/Subj: First[\s\S]*\[Q\] Quit:/);
      expect(screen.slice(0, 7)).toEqual([
        `General  #${ids.first}`,
        'From: bob',
        'To:   All',
        'Subj: First',
        expect.stringMatching(/^Date: \d{4}-\d\d-\d\d \d\d:\d\d$/),
        '',
        'The first message.',
      ]);
      await caller.press('Enter');
      await caller.waitFor('Subj: Second');
      await caller.waitFor('[Q] Quit:');
      await caller.type('r');
      await caller.waitFor('To: bob');
      await caller.press('Enter');
      await caller.waitFor('Subject: Re: Second');
      await caller.press('Enter');
      screen = await caller.waitFor('  4:');
      expect(screen).toEqual(
        expect.arrayContaining(['  1: > The second message.', '  2: > With a second line.', '  3:', '  4:']),
      );
      await caller.type('Agreed, bob.\r');
      await caller.waitFor('  5:');
      await caller.type('/s\r');
      screen = await caller.waitFor(/Reply posted as message #\d+\./);
      const replyId = Number(/Reply posted as message #(\d+)\./.exec(screen.join('\n'))?.[1]);
      const reply = await api<MessageSummary & { body: string }>(
        'GET',
        `/messages/${(await messagesIn('general')).find((message) => message.messageId === replyId)?.uuid}`,
        tokens.bob,
      );
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        fromUserName: 'alice',
        toUserName: 'bob',
        subject: 'Re: Second',
        replyToMessageId: ids.second,
        body: '> The second message.\n> With a second line.\n\nAgreed, bob.',
      });
      // On to the reply just written (the scan goes through the area), then past the end.
      await caller.press('Enter');
      await caller.waitFor('Subj: Re: Second');
      await caller.waitFor('[Q] Quit:');
      await caller.press('Enter');
      await caller.waitFor('No more new messages.');
      const general = await api<{ unreadCount: number; lastReadMessageId: number }>(
        'GET',
        '/messages/areas/general',
        tokens.alice,
      );
      expect(general.status).toBe(200);
      expect(general.body).toMatchObject({ unreadCount: 0, lastReadMessageId: replyId });

      // P: a new message in chatter, in the API as soon as the caller saved it.
      await caller.type('p');
      await caller.waitFor('Post in (number or tag, Enter: back):');
      await caller.type('chatter\r');
      await caller.waitFor('To: All');
      await caller.press('Enter');
      await caller.waitFor('Subject:');
      await caller.type('Hello from a terminal\r');
      await caller.waitFor('  1:');
      await caller.type('Typed in OpenSSH, in tmux.\r');
      await caller.waitFor('  2:');
      await caller.type('/s\r');
      screen = await caller.waitFor(/Posted as message #\d+ in Chatter\./);
      const [posted] = await messagesIn('chatter');
      expect(posted).toMatchObject({ fromUserName: 'alice', toUserName: 'All', subject: 'Hello from a terminal' });
      expect(screen.join('\n')).toContain(`Posted as message #${posted?.messageId} in Chatter.`);
      expect((await api<{ body: string }>('GET', `/messages/${posted?.uuid}`, tokens.bob)).body.body).toBe(
        'Typed in OpenSSH, in tmux.',
      );

      // M: a mail to bob, in bob's mailbox.
      await caller.type('m');
      await caller.waitFor('Inbox (0 unread)');
      await caller.waitFor('Number, or');
      // The list's keys answer at once, without Enter.
      await caller.type('w');
      await caller.waitFor('To:');
      await caller.type('bob\r');
      await caller.waitFor('Subject:');
      await caller.type('Meet on Friday?\r');
      await caller.waitFor('  1:');
      await caller.type('In the chatter area, at eight.\r');
      await caller.waitFor('  2:');
      await caller.type('/s\r');
      await caller.waitFor('Mail sent.');
      const bobsMail = await api<Page<MailSummary>>('GET', '/mail', tokens.bob);
      expect(bobsMail.status).toBe(200);
      expect(bobsMail.body.data).toEqual([
        expect.objectContaining({ from: 'alice', to: 'bob', subject: 'Meet on Friday?', read: false }),
      ]);
      await caller.type('q\r');
      await caller.waitFor('Your choice:');

      // W: this caller among the nodes; L: among the last callers.
      await caller.type('w');
      screen = await caller.waitFor(/Who's online[\s\S]*\[Q\] Back:/);
      // Two nodes are alice's: the API login the test made, and this call.
      expect(screen.filter((row) => / alice /.test(row))).toEqual([
        expect.stringMatching(/^ +\d+ alice +\S.* \d+m \(you\)$/),
        expect.stringMatching(/^ +\d+ alice +\S.* \d+m \(you\)$/),
      ]);
      await caller.type('q');
      await caller.waitFor('Your choice:');
      await caller.type('l');
      screen = await caller.waitFor(/Last callers[\s\S]*\[Q\] Back:/);
      expect(screen.join('\n')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d alice/m);
      await caller.type('q');
      await caller.waitFor('Your choice:');

      // G: goodbye, and OpenSSH exits; the login session and the node go with the call.
      await caller.type('g');
      await caller.waitFor(`Goodbye, alice. Thanks for calling ${BOARD_NAME}!`);
      await expect.poll(() => caller.hasExited(), POLL).toBe(true);
      await expect.poll(() => terminalSessionsOf('alice'), POLL).toEqual([]);
      expect(await sshNodesOf('alice')).toEqual([]);
    });

    it('OpenSSH with a password and two-factor login: Password and Code asked by keyboard-interactive', async () => {
      const enrolled = await api<{ secret: string }>('POST', '/users/me/totp', tokens.carol, { password: PASSWORD });
      expect(enrolled.status).toBe(200);
      const { secret } = enrolled.body;
      // The server takes the code of the step before its own too (clock skew): confirming with
      // that one leaves the code of this step for the login (each step's code is taken once).
      const confirmed = await api('POST', '/users/me/totp/confirm', tokens.carol, {
        code: totpCode(secret, Date.now() - 30_000),
      });
      expect(confirmed.status).toBe(200);
      // What OpenSSH asks, answered by a script as a caller would type it; the script notes each prompt.
      const askpass = path.join(board.dir, 'askpass.sh');
      const prompts = path.join(board.dir, 'prompts.txt');
      writeFileSync(
        askpass,
        [
          '#!/bin/sh',
          `printf '%s\\n' "$1" >> '${prompts}'`,
          'case "$1" in',
          `  *Code*) echo '${totpCode(secret, Date.now())}' ;;`,
          `  *) echo '${PASSWORD}' ;;`,
          'esac',
          '',
        ].join('\n'),
      );
      chmodSync(askpass, 0o700);

      const caller = await dial(ssh('carol', ['-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1']), {
        env: { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force' },
      });
      await caller.waitFor('Your choice:');
      expect(readFileSync(prompts, 'utf8')).toBe('(carol@127.0.0.1) Password: \n(carol@127.0.0.1) Code: \n');
      expect(await terminalSessionsOf('carol')).toHaveLength(1);
      await caller.type('g');
      await caller.waitFor(`Goodbye, carol. Thanks for calling ${BOARD_NAME}!`);
      await expect.poll(() => caller.hasExited(), POLL).toBe(true);
      await expect.poll(() => terminalSessionsOf('carol'), POLL).toEqual([]);
    });

    it('telnet: a login prompt that hides the password, the menu, a post as a notice, goodbye', async () => {
      const caller = await dial(telnet());
      let screen = await caller.waitFor('Username:');
      expect(screen).toContain(BOARD_NAME);
      expect(screen).toContain('New here? Type new as your user name to sign up.');
      // A wrong password first: the refusal is printed below once the server read every key
      // before Enter, so an echo of them would be on screen by then.
      await caller.type('dave\r');
      await caller.waitFor('Password:');
      await caller.type('not the password\r');
      screen = await caller.waitFor(/Login incorrect\.\n+Username:/);
      expect(screen.filter((row) => row.startsWith('Password:'))).toEqual(['Password:']);
      expect(screen.join('\n')).not.toContain('not the password');
      await caller.type('dave\r');
      await caller.waitFor(/Username: dave\n+Password:/);
      await caller.type(`${PASSWORD}\r`);
      screen = await caller.waitFor('Your choice:');
      expect(screen).toContain('[N] New scan                  [R] Read an area');
      expect(screen.join('\n')).not.toContain(PASSWORD);

      // Reading general, where bob posts through the API: one line tells of it.
      await caller.type('r');
      await caller.waitFor('Area (number or tag, Enter: back):');
      await caller.type('general\r');
      await caller.waitFor(/Subj: First[\s\S]*\[Q\] Quit:/);
      await post('bob', 'general', 'Breaking news', 'Posted while dave reads.');
      screen = await caller.waitFor('New message in General from bob: Breaking news');
      expect(screen.filter((row) => row.includes('Breaking news'))).toEqual([
        'New message in General from bob: Breaking news',
      ]);
      // The caller goes on where they were: the reader's keys still answer.
      await caller.waitFor('[Q] Quit:');
      await caller.type('q');
      await caller.waitFor('Your choice:');
      await caller.type('g');
      screen = await caller.waitFor(`Goodbye, dave. Thanks for calling ${BOARD_NAME}!`);
      await expect.poll(() => caller.hasExited(), POLL).toBe(true);
      expect((await caller.screen()).join('\n')).toContain('Connection closed by foreign host.');
      await expect.poll(() => terminalSessionsOf('dave'), POLL).toEqual([]);
    });

    it('telnet: `new` signs up, and the new account logs in at once', async () => {
      const caller = await dial(telnet());
      await caller.waitFor('Username:');
      await caller.type('new\r');
      await caller.waitFor('Choose a user name:');
      await caller.type('frank\r');
      await caller.waitFor('Choose a password:');
      await caller.type('a long enough password\r');
      await caller.waitFor('Type it again:');
      await caller.type('a long enough password\r');
      await caller.waitFor('Real name (optional):');
      await caller.type('Frank Caller\r');
      await caller.waitFor('Location (optional):');
      await caller.type('Lisbon\r');
      await caller.waitFor('Your account frank is ready: log in with it now.');
      await caller.waitFor(/ready: log in with it now\.\n+Username:/);
      expect((await caller.screen()).join('\n')).not.toContain('a long enough password');
      const profile = await api<{ username: string; location: string }>('GET', '/users/frank', tokens.bob);
      expect(profile.status).toBe(200);
      expect(profile.body).toMatchObject({ username: 'frank', location: 'Lisbon' });
      await caller.type('frank\r');
      await caller.waitFor('Password:');
      await caller.type('a long enough password\r');
      await caller.waitFor('Your choice:');
      await caller.type('g');
      await caller.waitFor(`Goodbye, frank. Thanks for calling ${BOARD_NAME}!`);
      await expect.poll(() => caller.hasExited(), POLL).toBe(true);
    });

    it('draws the screen again at the new size when the window changes', async () => {
      const caller = await dial(ssh('erin', passwordOptions()), { env: askpassEnv() });
      let screen = await caller.waitFor('Your choice:');
      expect(screen).toContain('[N] New scan                  [R] Read an area');
      await caller.resize(40, 20);
      // One entry to a row on 40 columns.
      screen = await caller.waitFor(/\[N\] New scan\n\[R\] Read an area\n/);
      expect(screen).toHaveLength(20);
      expect(screen.slice(0, 13)).toEqual([
        'Main menu',
        '',
        '[N] New scan',
        '[R] Read an area',
        '[P] Post a message',
        '[M] Mail',
        '[F] Files',
        '[S] Search messages',
        "[W] Who's online",
        '[L] Last callers',
        '[U] Your profile',
        '[G] Goodbye',
        'Your choice:',
      ]);
      // In the middle of a prompt, with something typed: the list is laid out again for 100
      // columns (its name column widens) and the prompt drawn again with what was typed.
      await caller.type('r');
      screen = await caller.waitFor(/^Area:$/m);
      expect(screen.slice(0, 5)).toEqual([
        'Main',
        '',
        expect.stringMatching(/^1\) General {8}general( +\d+ new)?$/),
        expect.stringMatching(/^2\) Chatter {8}chatter( +\d+ new)?$/),
        'Area:',
      ]);
      await caller.type('gen');
      await caller.resize(100, 30);
      screen = await caller.waitFor(/^1\) General {24}general/m);
      screen = await caller.waitFor(/^Area: gen$/m);
      expect(screen).toHaveLength(30);
      expect(screen.slice(0, 5)).toEqual([
        'Main',
        '',
        expect.stringMatching(/^1\) General {24}general( +\d+ new)?$/),
        expect.stringMatching(/^2\) Chatter {24}chatter( +\d+ new)?$/),
        'Area: gen',
      ]);
      await caller.type('eral\r');
      await caller.waitFor('Subj: First');
      await caller.type('q');
      await caller.waitFor('Your choice:');
      await caller.type('g');
      await expect.poll(() => caller.hasExited(), POLL).toBe(true);
    });

    it('sends a terminal of type dumb no escape at all: plain ASCII, no colour', async () => {
      const caller = await dial(['env', 'TERM=dumb', ...ssh('erin', passwordOptions())], { env: askpassEnv() });
      await caller.waitFor('Your choice:');
      expect(await caller.screenWithColours()).not.toContain('\u001b');
      await caller.type('r');
      await caller.waitFor('Area (number or tag, Enter: back):');
      await caller.type('general\r');
      await caller.waitFor(/From: bob[\s\S]*\[Q\] Quit:/);
      const colours = await caller.screenWithColours();
      expect(colours).toContain('From: bob');
      expect(colours).not.toContain('\u001b');
      await caller.type('q');
      await caller.waitFor('Your choice:');
      await caller.type('g');
      await expect.poll(() => caller.hasExited(), POLL).toBe(true);
    });

    /** OpenSSH's options for a password login answered by the askpass script of `askpassEnv`. */
    function passwordOptions(): string[] {
      return ['-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1'];
    }

    /** The environment in which OpenSSH asks a script for the password (erin has no second factor). */
    function askpassEnv(): Record<string, string> {
      const askpass = path.join(board.dir, 'password.sh');
      writeFileSync(askpass, `#!/bin/sh\necho '${PASSWORD}'\n`);
      chmodSync(askpass, 0o700);
      return { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force' };
    }

    /** An area's messages as the API lists them, newest first. */
    async function messagesIn(areaTag: string): Promise<MessageSummary[]> {
      const listed = await api<Page<MessageSummary>>(
        'GET',
        `/messages/areas/${areaTag}/messages?order=newest`,
        tokens.bob,
      );
      expect(listed.status).toBe(200);
      return listed.body.data;
    }
  });
});

/** A board served as `baud serve` serves it, on a fresh database, with its scratch directory. */
interface ServedBoard {
  readonly running: RunningBoard;
  readonly dir: string;
  close(): Promise<void>;
}

/**
 * Serves a fresh board on free ports (HTTP, SSH, telnet) with accounts for `usernames`, made
 * before it starts (the API would count them against its registrations per address).
 */
async function serveTestBoard(dialect: Dialect, usernames: readonly string[]): Promise<ServedBoard> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-real-clients-'));
  const schema = `baud_test_${randomBytes(6).toString('hex')}`;
  const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
  const removeData = async () => {
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const config = configFromObject({
      general: { boardName: BOARD_NAME },
      paths: { dataDir: dir },
      database: { url, poolSize: 4 },
      logging: { level: 'silent' },
      users: { registration: 'open' },
      messageConferences: {
        main: { name: 'Main', areas: { general: { name: 'General' }, chatter: { name: 'Chatter' } } },
      },
      contentServers: {
        web: { port: 0, reader: { enabled: false } },
        ssh: { enabled: true, address: '127.0.0.1', port: 0 },
        telnet: { enabled: true, address: '127.0.0.1', port: 0 },
      },
    });
    const setUp = await openBoard(config);
    try {
      for (const username of usernames) {
        await setUp.credentials.createAccount({ username, password: PASSWORD, groups: [] });
      }
    } finally {
      await setUp.close();
    }
    const running = await serveBoard(config);
    return {
      running,
      dir,
      async close() {
        try {
          await running.stop();
        } finally {
          await removeData();
        }
      },
    };
  } catch (error) {
    await removeData();
    throw error;
  }
}
