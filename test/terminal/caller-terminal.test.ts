import { beforeAll, expect, it } from 'vitest';
import type { Board } from '../../src/board.js';
import type { UserCaller } from '../../src/caller.js';
import { describeEachDialect } from '../support/test-board.js';
import { readScreen } from './support/screen-reader.js';
import { PASSWORD, terminalBoard } from './support/terminal-board.js';

const ESC = '\u001b';

describeEachDialect('terminal screens and input', (dialect) => {
  const terminal = terminalBoard(dialect, { contentServers: { terminal: { idleTimeoutSeconds: 600 } } });
  let bob: UserCaller;
  const board = () => terminal.test.board;

  async function liveSessionCount(username: string): Promise<number> {
    const rows = await board()
      .db.selectFrom('refreshFamilies')
      .innerJoin('users', 'users.id', 'refreshFamilies.userId')
      .select(['refreshFamilies.id'])
      .where('users.username', '=', username)
      .where('refreshFamilies.revokedAt', 'is', null)
      .execute();
    return rows.length;
  }

  const messagesIn = async (areaTag: string) =>
    (await board().messages.listAreaMessages(bob, areaTag, { limit: 100, afterKey: null })).items;

  beforeAll(async () => {
    for (const name of ['alice', 'bob', 'carol', 'dumbo', 'pc', 'hostile', 'narrow', 'drop', 'idler', 'zed']) {
      await terminal.createUser(name);
    }
    bob = await terminal.serviceCaller('bob');
    await board().messages.postMessage(bob, 'chatter', {
      subject: 'Art ─ piece',
      message: `${ESC}[1;33m┌──┐ Café${ESC}[0m\n│█░│ ok\n└──┘ ${ESC}]0;owned title\u0007${ESC}[10;10Hmoved${ESC}P1$r${ESC}\\ bell\u0007 ${ESC}[?1049h end`,
    });
  });

  /** Reads the first message of chatter from the main menu. */
  async function openArt(caller: Awaited<ReturnType<typeof terminal.dialAndLogIn>>) {
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Area (number or tag, Enter: back): ');
    caller.type('chatter\r');
  }

  it('sends a dumb terminal ASCII only, without a single escape byte', async () => {
    const caller = await terminal.dialAndLogIn('dumbo', { terminalType: 'dumb' });
    await openArt(caller);
    const shown = await caller.waitFor('[Q] Quit: ');
    expect(shown).toContain('Subj: Art - piece');
    expect(shown).toContain('+--+ Cafe');
    expect(shown).toContain('|#:|'.replace(':', '#'));
    caller.type('q');
    await caller.waitFor('Your choice: ');
    const bytes = caller.connection.written();
    expect(bytes.includes(0x1b)).toBe(false);
    expect(
      [...bytes].every((byte) => byte === 0x0d || byte === 0x0a || byte === 0x08 || (byte >= 0x20 && byte < 0x7f)),
    ).toBe(true);
    caller.connection.drop();
  });

  it('treats a terminal that names no type as dumb', async () => {
    const caller = terminal.dial({ terminalType: '' });
    await caller.waitFor('Username: ');
    expect(caller.connection.written().includes(0x1b)).toBe(false);
    caller.connection.drop();
  });

  it('talks CP437 both ways with a BBS terminal', async () => {
    const caller = await terminal.dialAndLogIn('pc', { terminalType: 'syncterm' });
    await openArt(caller);
    await caller.waitFor('[Q] Quit: ');
    const bytes = caller.connection.written();
    // ┌ ─ ┐ é █ ░ in code page 437, and none of them in UTF-8.
    for (const byte of [0xda, 0xc4, 0xbf, 0x82, 0xdb, 0xb0]) expect(bytes.includes(byte)).toBe(true);
    expect(bytes.includes(Buffer.from('─', 'utf8'))).toBe(false);
    expect(caller.screen()).toContain('┌──┐ Café');
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Post in (number or tag, Enter: back): ');
    caller.type('general\r');
    await caller.waitFor('To: All');
    caller.type('\r');
    await caller.waitFor('Subject: ');
    caller.type(Buffer.from([0x43, 0x61, 0x66, 0x82, 0x20, 0xc4, 0x0d]));
    await caller.waitFor('  1: ');
    caller.type(Buffer.from([0x9c, 0x35, 0x0d, 0x2f, 0x73, 0x0d]));
    await caller.waitFor('Posted as message #');
    const posted = (await messagesIn('general')).find((message) => message.fromUserName === 'pc');
    expect(posted?.subject).toBe('Café ─');
    expect((await board().messages.getMessage(bob, posted?.uuid ?? '')).body).toBe('£5');
    caller.connection.drop();
  });

  it('draws a message’s colours and art but none of its other sequences', async () => {
    const caller = await terminal.dialAndLogIn('carol');
    await openArt(caller);
    await caller.waitFor('[Q] Quit: ');
    const text = caller.connection.written().toString('utf8');
    expect(text).toContain(`${ESC}[0;93m┌──┐ Café${ESC}[0m`);
    expect(text).not.toContain(`${ESC}]`);
    expect(text).not.toContain(`${ESC}P`);
    expect(text).not.toContain('\u0007');
    expect(text).not.toContain(`${ESC}[?`);
    expect(text).not.toMatch(new RegExp(`${ESC}\\[\\d+;\\d+H`));
    // The title's text goes with its sequence; the cursor jump is drawn on the art's own screen.
    expect(caller.screen()).not.toContain('owned title');
    expect(caller.screen()).toMatch(/\n {9}moved bell {2}end/);
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('says goodbye and hangs up after idleTimeoutSeconds without a key, and ends the session', async () => {
    const caller = await terminal.dialAndLogIn('idler');
    expect(await liveSessionCount('idler')).toBe(1);
    terminal.timers.advance(599_000);
    caller.type('w');
    await caller.waitFor('[Q] Back: ');
    terminal.timers.advance(599_000);
    expect(caller.connection.isClosed).toBe(false);
    terminal.timers.advance(1_000);
    await caller.waitFor('Nothing typed for 10 minutes: goodbye.');
    await caller.waitForClose();
    await expect.poll(() => liveSessionCount('idler')).toBe(0);
  });

  it('leaves no message and no live session when the line drops in the middle of the editor', async () => {
    const before = (await messagesIn('general')).length;
    const caller = await terminal.dialAndLogIn('drop');
    caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Post in (number or tag, Enter: back): ');
    caller.type('general\r');
    await caller.waitFor('To: All');
    caller.type('\r');
    await caller.waitFor('Subject: ');
    caller.type('Half done\r');
    await caller.waitFor('  1: ');
    caller.type('A first line\rand a sec');
    await caller.waitFor('  2: and a sec');
    caller.connection.drop();
    await expect.poll(() => liveSessionCount('drop')).toBe(0);
    expect(await messagesIn('general')).toHaveLength(before);
    expect(terminal.logged).toEqual([]);
  });

  it('draws the screen again for a new window size, what is typed included', async () => {
    const caller = await terminal.dialAndLogIn('zed');
    expect(caller.screen()).toContain('[N] New scan                  [R] Read an area');
    caller.connection.resize(40, 20);
    await caller.waitFor('Your choice: ');
    let screen = readScreen(caller.connection.written(), { columns: 40 }).screen;
    expect(screen).toContain('[N] New scan\n[R] Read an area');
    caller.type('r');
    // 40 columns leave no room for the prompt's hint.
    await caller.waitFor('Conference or area: ');
    caller.type('ma');
    const before = caller.connection.written().length;
    for (let width = 100; width >= 60; width -= 1) caller.connection.resize(width, 12);
    await caller.waitFor('Conference or area: ma');
    // Forty-one window changes in one go make one redraw.
    expect(caller.connection.written().length - before).toBeLessThan(400);
    screen = readScreen(caller.connection.written(), { columns: 60 }).screen;
    const rows = screen.split('\n');
    expect(rows).toHaveLength(5);
    expect(rows.slice(0, 2)).toEqual(['Conferences', '']);
    expect(rows[2]).toMatch(/^1\) Main +main$/);
    expect(rows[3]).toMatch(/^2\) Other +other$/);
    expect(rows[4]).toBe('Conference or area: ma');
    caller.connection.drop();
  });

  it('pages a long message on a 20×5 window', async () => {
    const lines = Array.from({ length: 12 }, (_, index) => `line ${index + 1}`);
    await board().messages.postMessage(bob, 'offtopic', { subject: 'Long one', message: lines.join('\n') });
    const caller = await terminal.dialAndLogIn('narrow', { columns: 20, rows: 5 });
    caller.type('r');
    await caller.waitFor('Conference or area: ');
    caller.type('other\r');
    await caller.waitFor(/Area: $/);
    caller.type('offtopic\r');
    await caller.waitFor('Subj: Long one');
    await caller.waitFor('%)');
    let screen = readScreen(caller.connection.written(), { columns: 20 }).screen.split('\n');
    expect(screen.length).toBeLessThanOrEqual(5);
    const pages: string[] = [];
    for (let page = 0; page < 6 && !pages.join('\n').includes('line 12'); page += 1) {
      caller.type(' ');
      await caller.waitFor(/\[N\/B\/R\/Q\]: $/);
      screen = readScreen(caller.connection.written(), { columns: 20 }).screen.split('\n');
      expect(screen.length).toBeLessThanOrEqual(5);
      pages.push(...screen);
    }
    expect(pages).toContain('line 12');
    caller.connection.drop();
  });

  it('reads hostile input at every prompt as the plain text in it', async () => {
    // Controls, a title, a cursor jump, a device string and an escape flood: none may reach text.
    const junk = `\u0000\u0001\u0007${ESC}]0;pwned\u0007${ESC}[999;999H${ESC}P1$r${ESC}\\${`${ESC}[A`.repeat(5000)}\u0002`;
    const caller = terminal.dial();
    const answer = async (prompt: string, text: string) => {
      await caller.waitFor(prompt);
      caller.type(`${junk}${text}${junk}\r`);
    };
    await answer('Username: ', 'hostile');
    await answer('Password: ', PASSWORD);
    await caller.waitFor('Your choice: ');
    caller.type(`${junk}p`);
    await answer('Conference or area (number or tag, Enter: back): ', 'main');
    await answer('Post in (number or tag, Enter: back): ', 'general');
    await caller.waitFor('To: All');
    caller.type(`${junk}\r`);
    await answer('Subject: ', 'Clean subject');
    await answer('  1: ', 'a clean line');
    // A 1 MB paste in one line, in the chunks a socket hands over: the line keeps 500
    // characters, and the session goes on.
    await caller.waitFor('  2: ');
    const paste = Buffer.from(`${'y'.repeat(1024 * 1024)}\r`);
    for (let offset = 0; offset < paste.length; offset += 64 * 1024)
      caller.type(paste.subarray(offset, offset + 64 * 1024));
    await answer('  3: ', 'ab\u007fc');
    await answer('  4: ', '/s');
    await caller.waitFor('Posted as message #');
    const posted = (await messagesIn('general')).find((message) => message.fromUserName === 'hostile');
    expect(posted?.subject).toBe('Clean subject');
    expect((await board().messages.getMessage(bob, posted?.uuid ?? '')).body).toBe(
      `a clean line\n${'y'.repeat(500)}\nac`,
    );
    await caller.waitFor('Your choice: ');
    caller.type(`${junk}s`);
    await answer('Search for (Enter: back): ', 'clean');
    await answer('Number, or ', '');
    await caller.waitFor('Your choice: ');
    caller.type(`${junk}u`);
    await caller.waitFor('[Q] Quit: ');
    caller.type(`${junk}3`);
    await answer('Affiliations (empty clears it): ', 'Acme');
    await caller.waitFor('Affiliations saved.');
    expect((await board().profiles.getOwnProfile(await terminal.serviceCaller('hostile'))).affiliations).toBe('Acme');
    caller.type(`${junk}q`);
    await caller.waitFor('Your choice: ');
    caller.type(`${junk}m`);
    await caller.waitFor('Number, or ');
    caller.type(`${junk}w`);
    await answer('To: ', 'bob');
    await answer('Subject: ', 'Mail subject');
    await answer('  1: ', 'mail line');
    await answer('  2: ', '/s');
    await caller.waitFor('Mail sent.');
    await caller.waitFor('Number, or ');
    caller.type(`${junk}q`);
    await caller.waitFor('Your choice: ');
    const [mail] = (await board().mail.listBox(bob, 'inbox', false, { limit: 1, afterKey: null })).items;
    expect(mail).toMatchObject({ from: 'hostile', subject: 'Mail subject' });
    expect((await board().mail.getMail(bob, mail?.uuid ?? '')).body).toBe('mail line');
    caller.type(`${`${ESC}[`}${'9'.repeat(500_000)}m${'\u0003'.repeat(100)}`);
    // Far more than a caller can type at once: what is over the input bound is dropped, the
    // session reads the rest and answers the next key.
    caller.type(Buffer.alloc(8 * 1024 * 1024, 0x1b));
    // Worked through a slice per turn of the event loop; a key typed once it is done is read.
    await expect
      .poll(() => {
        if (!caller.connection.isClosed) caller.type('g');
        return caller.transcript();
      })
      .toContain('Goodbye, hostile.');
    await caller.waitForClose();
    expect(caller.connection.written().length).toBeLessThan(64 * 1024);
    expect(terminal.logged).toEqual([]);
  });

  it('stops taking body lines at the message size limit, and saves what fits', async () => {
    await terminal.createUser('verbose');
    const caller = await terminal.dialAndLogIn('verbose');
    caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Post in (number or tag, Enter: back): ');
    caller.type('general\r');
    await caller.waitFor('To: All');
    caller.type('\r');
    await caller.waitFor('Subject: ');
    caller.type('Long story\r');
    await caller.waitFor('  1: ');
    const line = 'w'.repeat(399);
    caller.type(`${line}\r`.repeat(170));
    await caller.waitFor('The message is full (64 KiB): /s saves it, /a aborts.');
    caller.type('/s\r');
    await caller.waitFor('Posted as message #');
    const posted = (await messagesIn('general')).find((message) => message.fromUserName === 'verbose');
    const { body } = await board().messages.getMessage(bob, posted?.uuid ?? '');
    expect(body).toBe(Array.from({ length: 163 }, () => line).join('\n'));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(64 * 1024);
    caller.connection.drop();
  });

  it('hangs up with one line when the login session is ended elsewhere', async () => {
    const caller = await terminal.dialAndLogIn('alice');
    await board().credentials.setPassword('alice', 'a brand new password');
    caller.type('l');
    await caller.waitFor(
      'Your session has ended (signed out elsewhere, account locked, or password changed). Goodbye.',
    );
    await caller.waitForClose();
  });

  it('notices an ended session within a minute even without a key', async () => {
    await terminal.createUser('quiet');
    const caller = await terminal.dialAndLogIn('quiet');
    const quiet = await terminal.serviceCaller('quiet');
    const [session] = (await board().loginSessions.listOwnSessions(quiet)).filter((entry) => !entry.current);
    await board().loginSessions.endOwnSession(quiet, session?.id ?? '');
    terminal.timers.advance(60_000);
    await caller.waitFor('Your session has ended');
    await caller.waitForClose();
  });

  it('refreshes the access token when it expires and goes on', async () => {
    await terminal.createUser('long');
    const caller = await terminal.dialAndLogIn('long');
    const tokensOfLong = async () =>
      (
        await board()
          .db.selectFrom('refreshTokens')
          .innerJoin('refreshFamilies', 'refreshFamilies.id', 'refreshTokens.familyId')
          .innerJoin('users', 'users.id', 'refreshFamilies.userId')
          .select(['refreshTokens.id'])
          .where('users.username', '=', 'long')
          .execute()
      ).length;
    expect(await tokensOfLong()).toBe(1);
    terminal.timers.advance(8 * 60_000);
    caller.type('l');
    await caller.waitFor('[Q] Back: ');
    caller.type('q');
    await caller.waitFor('Your choice: ');
    // 16 minutes in: the first access token (15 minutes) is dead.
    terminal.timers.advance(8 * 60_000);
    caller.type('u');
    await caller.waitFor('Your profile: long');
    await expect.poll(tokensOfLong).toBe(2);
    expect(caller.connection.isClosed).toBe(false);
    caller.connection.drop();
  });

  it('tells the caller "something went wrong" for an unexpected failure, logs it, and stays connected', async () => {
    await terminal.createUser('unlucky');
    const failing = (real: Board): Board => ({
      ...real,
      messages: { ...real.messages, listUnread: () => Promise.reject(new Error('the disk is on fire')) },
    });
    const caller = await terminal.dialAndLogIn('unlucky', { board: failing });
    caller.type('n');
    await caller.waitFor('Something went wrong; please try again.');
    await caller.waitFor('Your choice: ');
    expect(terminal.logged).toHaveLength(1);
    expect(String((terminal.logged[0] as { err: Error }).err)).toContain('the disk is on fire');
    terminal.logged.length = 0;
    caller.type('g');
    await caller.waitForClose();
  });
});
