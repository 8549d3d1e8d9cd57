import { describe, expect, it } from 'vitest';
import type { Board } from '../../src/board.js';
import { describeEachDialect } from '../support/test-board.js';
import { totpCode } from '../support/totp-code.js';
import { PASSWORD, type TerminalBoard, terminalBoard } from './support/terminal-board.js';

/** The user's login sessions that are alive (not revoked), with how they came in. */
async function liveSessionsOf(board: Board, userId: number) {
  const rows = await board.db
    .selectFrom('refreshFamilies')
    .select(['via', 'clientAddress', 'isSecure'])
    .where('userId', '=', userId)
    .where('revokedAt', 'is', null)
    .execute();
  return rows.map((row) => ({ ...row, isSecure: Number(row.isSecure) }));
}

async function userIdOf(board: Board, username: string): Promise<number | undefined> {
  const row = await board.db.selectFrom('users').select(['id']).where('username', '=', username).executeTakeFirst();
  return row?.id;
}

/** Turns two-factor login on for `username`; returns the TOTP secret. */
async function enableTwoFactor(terminal: TerminalBoard, username: string): Promise<string> {
  const { board } = terminal.test;
  const tokens = await terminal.loginTokens(username);
  const caller = await board.callers.resolve({ accessToken: tokens.token.accessToken }, { isSecure: true });
  const { secret } = await board.twoFactor.enrol(caller, { password: PASSWORD, clientAddress: '127.0.0.1' });
  await board.twoFactor.confirm(caller, totpCode(secret, terminal.clock.now().getTime()));
  await board.auth.logout(tokens.refreshToken);
  // The confirming code is spent: the next one to work is the next step's.
  terminal.clock.advance(30_000);
  return secret;
}

describeEachDialect('terminal login prompt', (dialect) => {
  describe('with open registration', () => {
    const terminal = terminalBoard(dialect, {
      contentServers: { web: { restApi: { loginThrottle: { maxFailures: 4, windowSeconds: 900 } } } },
    });

    it('logs in with the right password, unechoed, into a terminal session, and ends it on goodbye', async () => {
      const userId = await terminal.createUser('alice');
      const caller = terminal.dial({ remoteAddress: '10.1.0.1' });
      await caller.waitFor('New here? Type new as your user name to sign up.');
      await caller.waitFor('Username: ');
      caller.type('alice\r');
      await caller.waitFor('Password: ');
      caller.type(`${PASSWORD}\r`);
      const shown = await caller.waitFor('Your choice: ');
      expect(shown).not.toContain(PASSWORD);
      expect(shown).toContain('Welcome, alice!');
      expect(caller.loggedIn).toBe(true);
      expect(await liveSessionsOf(terminal.test.board, userId)).toEqual([
        { via: 'terminal', clientAddress: '10.1.0.1', isSecure: 0 },
      ]);
      caller.type('G');
      await caller.waitFor('Goodbye, alice. Thanks for calling Sector 7!');
      await caller.waitForClose();
      expect(caller.connection.wasEnded).toBe(true);
      await expect.poll(() => liveSessionsOf(terminal.test.board, userId)).toEqual([]);
    });

    it('refuses a wrong password, and hangs up after three failed tries', async () => {
      await terminal.createUser('bob');
      const caller = terminal.dial({ remoteAddress: '10.1.0.2' });
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        await caller.waitFor('Username: ');
        caller.type('bob\r');
        await caller.waitFor('Password: ');
        caller.type('wrong password\r');
        await caller.waitFor('Login incorrect.');
      }
      await caller.waitFor('Too many failed tries.');
      await caller.waitForClose();
      expect(caller.loggedIn).toBe(false);
    });

    it('counts failures in the API’s throttle: throttled, it says when to try again and hangs up', async () => {
      await terminal.createUser('carol');
      const address = '10.1.0.3';
      const { board } = terminal.test;
      for (let attempt = 0; attempt < 4; attempt += 1) {
        await expect(
          board.auth.login({ username: 'carol', password: 'nope', clientAddress: address, isSecure: false }),
        ).rejects.toMatchObject({ code: 'auth.invalid-credentials' });
      }
      const caller = terminal.dial({ remoteAddress: address });
      await caller.waitFor('Username: ');
      caller.type('carol\r');
      await caller.waitFor('Password: ');
      caller.type(`${PASSWORD}\r`);
      await caller.waitFor('Too many failed logins; try again in 15 minutes.');
      await caller.waitForClose();
      expect(caller.loggedIn).toBe(false);
    });

    it('asks for the code of an account with two-factor login, and refuses a wrong one', async () => {
      await terminal.createUser('dave');
      const secret = await enableTwoFactor(terminal, 'dave');
      const caller = terminal.dial({ remoteAddress: '10.1.0.4' });
      await caller.waitFor('Username: ');
      caller.type('dave\r');
      await caller.waitFor('Password: ');
      caller.type(`${PASSWORD}\r`);
      await caller.waitFor('Code: ');
      caller.type('000000\r');
      await caller.waitFor('Wrong code.');
      await caller.waitFor('Username: ');
      caller.type('dave\r');
      await caller.waitFor('Password: ');
      caller.type(`${PASSWORD}\r`);
      await caller.waitFor('Code: ');
      const code = totpCode(secret, terminal.clock.now().getTime());
      caller.type(`${code}\r`);
      const shown = await caller.waitFor('Your choice: ');
      expect(shown).not.toContain(code);
      expect(caller.loggedIn).toBe(true);
      caller.type('g');
      await caller.waitForClose();
    });

    it('signs up a new user with `new` and lets them log in at once', async () => {
      const caller = terminal.dial({ remoteAddress: '10.1.0.5' });
      await caller.waitFor('Username: ');
      caller.type('NEW\r');
      await caller.waitFor('Choose a user name: ');
      caller.type('erin\r');
      await caller.waitFor('Choose a password: ');
      caller.type('short\r');
      await caller.waitFor('Type it again: ');
      caller.type('short\r');
      await caller.waitFor('Real name (optional): ');
      caller.type('Erin Example\r');
      await caller.waitFor('Location (optional): ');
      caller.type('Lisbon\r');
      // The service's own rule, in its own words; the caller chooses again.
      await caller.waitFor('Password must be at least 8 characters.');
      await caller.waitFor('Choose a password: ');
      caller.type('a long enough password\r');
      await caller.waitFor('Type it again: ');
      caller.type('a long enough password\r');
      await caller.waitFor('Your account erin is ready: log in with it now.');
      await caller.waitFor('Username: ');
      caller.type('erin\r');
      await caller.waitFor('Password: ');
      caller.type('a long enough password\r');
      await caller.waitFor('Welcome, erin!');
      await caller.waitFor('Your choice: ');
      const profile = await terminal.test.board.db
        .selectFrom('users')
        .select(['realName', 'location', 'isPending'])
        .where('username', '=', 'erin')
        .executeTakeFirstOrThrow();
      expect(profile).toEqual({ realName: 'Erin Example', location: 'Lisbon', isPending: 0 });
      caller.type('g');
      await caller.waitForClose();
    });

    it('starts with the sign-up questions for an SSH caller who came as `new`', async () => {
      const caller = terminal.dial({ signUp: true, remoteAddress: '10.1.0.6' });
      const shown = await caller.waitFor('Choose a user name: ');
      expect(shown).not.toContain('Username: ');
      expect(caller.loggedIn).toBe(false);
      caller.type('fran\r');
      await caller.waitFor('Choose a password: ');
      caller.type('a long enough password\r');
      await caller.waitFor('Type it again: ');
      caller.type('a long enough password\r');
      await caller.waitFor('Real name (optional): ');
      caller.type('\r');
      await caller.waitFor('Location (optional): ');
      caller.type('\r');
      await caller.waitFor('Your account fran is ready: log in with it now.');
      await caller.waitFor('Username: ');
      caller.type('fran\r');
      await caller.waitFor('Password: ');
      caller.type('a long enough password\r');
      await caller.waitFor('Your choice: ');
      expect(caller.loggedIn).toBe(true);
      caller.type('g');
      await caller.waitForClose();
    });

    it('asks for another name when the one chosen is taken', async () => {
      await terminal.createUser('frank');
      const caller = terminal.dial({ remoteAddress: '10.1.0.6' });
      await caller.waitFor('Username: ');
      caller.type('new\r');
      await caller.waitFor('Choose a user name: ');
      caller.type('Frank\r');
      for (const prompt of ['Choose a password: ', 'Type it again: ']) {
        await caller.waitFor(prompt);
        caller.type(`${PASSWORD}\r`);
      }
      await caller.waitFor('Real name (optional): ');
      caller.type('\r');
      await caller.waitFor('Location (optional): ');
      caller.type('\r');
      await caller.waitFor('The username "Frank" is taken.');
      await caller.waitFor('Choose another user name: ');
      caller.type('frankie\r');
      await caller.waitFor('Your account frankie is ready');
      expect(await userIdOf(terminal.test.board, 'frankie')).toBeDefined();
      caller.connection.drop();
    });

    it('hangs up on Ctrl-D at the prompt', async () => {
      const caller = terminal.dial({ remoteAddress: '10.1.0.8' });
      await caller.waitFor('Username: ');
      caller.type('\u0004');
      await caller.waitForClose();
      expect(caller.loggedIn).toBe(false);
    });

    it('hangs up when the login prompt takes longer than loginTimeoutSeconds', async () => {
      const caller = terminal.dial({ remoteAddress: '10.1.0.7' });
      await caller.waitFor('Username: ');
      caller.type('alic');
      terminal.timers.advance(59_000);
      expect(caller.connection.isClosed).toBe(false);
      terminal.timers.advance(1_000);
      await caller.waitFor('The time to log in is up: goodbye.');
      await caller.waitForClose();
    });
  });

  describe('with registration by approval', () => {
    const terminal = terminalBoard(dialect, { users: { registration: 'approval' } });

    it('tells a new user they wait for the sysop, hangs up, and the account is pending', async () => {
      const caller = terminal.dial();
      await caller.waitFor('Username: ');
      caller.type('new\r');
      await caller.waitFor('The sysop approves new accounts: you can log in once they have.');
      await caller.waitFor('Choose a user name: ');
      caller.type('gina\r');
      for (const prompt of ['Choose a password: ', 'Type it again: ']) {
        await caller.waitFor(prompt);
        caller.type(`${PASSWORD}\r`);
      }
      for (const prompt of ['Real name (optional): ', 'Location (optional): ']) {
        await caller.waitFor(prompt);
        caller.type('\r');
      }
      await caller.waitFor('A note for the sysop (optional): ');
      caller.type('Met you at the party\r');
      await caller.waitFor(
        'Thank you, gina. The sysop will look at your application: you can log in once it is approved.',
      );
      await caller.waitForClose();
      const row = await terminal.test.board.db
        .selectFrom('users')
        .select(['isPending', 'registrationNote'])
        .where('username', '=', 'gina')
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ isPending: 1, registrationNote: 'Met you at the party' });
    });

    it('says an account waiting for approval cannot log in yet, and hangs up', async () => {
      await terminal.test.board.credentials.createAccount({ username: 'hank', password: PASSWORD, isPending: true });
      const caller = terminal.dial();
      await caller.waitFor('Username: ');
      caller.type('hank\r');
      await caller.waitFor('Password: ');
      caller.type(`${PASSWORD}\r`);
      await caller.waitFor('This account awaits approval by the sysop.');
      await caller.waitForClose();
    });
  });

  describe('with registration closed', () => {
    const terminal = terminalBoard(dialect, { users: { registration: 'closed' } });

    it('offers no sign-up and says so to `new`', async () => {
      const caller = terminal.dial();
      await caller.waitFor('Username: ');
      expect(caller.transcript()).not.toContain('sign up');
      caller.type('new\r');
      await caller.waitFor('This board takes no new users: ask the sysop for an account.');
      await caller.waitFor('Username: ');
      expect(await userIdOf(terminal.test.board, 'new')).toBeUndefined();
      caller.connection.drop();
    });
  });

  describe('with a welcome pause', () => {
    const terminal = terminalBoard(dialect, { contentServers: { terminal: { welcomePauseSeconds: 5 } } });

    it('keeps the welcome screen up for welcomePauseSeconds, or until a key', async () => {
      await terminal.createUser('jo');
      const caller = terminal.dial({ login: await terminal.loginTokens('jo') });
      await caller.waitFor('Welcome, jo!');
      await caller.waitFor('Press a key to go on.');
      terminal.timers.advance(4_999);
      expect(caller.transcript()).not.toContain('Main menu');
      terminal.timers.advance(1);
      await caller.waitFor('Your choice: ');
      caller.connection.drop();

      const again = terminal.dial({ login: await terminal.loginTokens('jo') });
      await again.waitFor('Press a key to go on.');
      again.type(' ');
      await again.waitFor('Your choice: ');
      again.connection.drop();
    });
  });

  describe('logged in by SSH', () => {
    const terminal = terminalBoard(dialect);

    it('goes straight to the welcome screen with the tokens SSH got', async () => {
      const userId = await terminal.createUser('ivy');
      const caller = terminal.dial({ login: await terminal.loginTokens('ivy') });
      const shown = await caller.waitFor('Your choice: ');
      expect(shown).not.toContain('Username:');
      expect(shown).toContain('Welcome, ivy!');
      expect(caller.loggedIn).toBe(true);
      caller.connection.drop();
      await expect.poll(() => liveSessionsOf(terminal.test.board, userId)).toEqual([]);
    });
  });
});
