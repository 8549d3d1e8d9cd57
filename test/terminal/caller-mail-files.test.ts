import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { UserCaller } from '../../src/caller.js';
import { describeEachDialect } from '../support/test-board.js';
import { terminalBoard } from './support/terminal-board.js';

describeEachDialect('terminal mail, files and the board', (dialect) => {
  const terminal = terminalBoard(dialect);
  let bob: UserCaller;
  const board = () => terminal.test.board;
  const inboxOf = async (caller: UserCaller) =>
    (await board().mail.listBox(caller, 'inbox', false, { limit: 50, afterKey: null })).items;

  beforeAll(async () => {
    for (const name of ['alice', 'bob', 'carol', 'dora']) await terminal.createUser(name);
    bob = await terminal.serviceCaller('bob');
  });

  it('M lists the inbox, opens a mail (marking it read), replies, and writes a new one', async () => {
    const alice = await terminal.serviceCaller('alice');
    await board().mail.sendMail(bob, { to: 'alice', subject: 'Lunch?', body: 'Noon at the usual place?' });
    const caller = await terminal.dialAndLogIn('alice');
    expect(caller.transcript()).toContain('You have 1 unread mail.');
    caller.type('m');
    let shown = await caller.waitFor('Number, or ');
    expect(shown).toContain('Inbox (1 unread)');
    expect(shown).toMatch(/1\) \* bob +Lunch\?/);
    caller.type('1\r');
    shown = await caller.waitFor('[D] Delete  [Q] Quit: ');
    expect(shown).toContain('From: bob');
    expect(shown).toContain('Subj: Lunch?');
    expect(shown).toContain('Noon at the usual place?');
    expect(await board().mail.unreadCount(alice)).toBe(0);
    caller.type('r');
    await caller.waitFor('To: bob');
    caller.type('\r');
    await caller.waitFor('Subject: Re: Lunch?');
    caller.type('\r');
    await caller.waitFor('  3: ');
    caller.type('Yes, see you there.\r/s\r');
    await caller.waitFor('Mail sent.');
    const [reply] = await inboxOf(bob);
    expect(reply).toMatchObject({ from: 'alice', subject: 'Re: Lunch?', read: false });
    const original = (await inboxOf(alice))[0];
    expect(reply?.replyToUuid).toBe(original?.uuid);
    expect((await board().mail.getMail(bob, reply?.uuid ?? '')).body).toBe(
      '> Noon at the usual place?\n\nYes, see you there.',
    );

    await caller.waitFor('Number, or ');
    // The list's keys answer at once, without Enter.
    caller.type('w');
    await caller.waitFor('New mail');
    await caller.waitFor('To: ');
    caller.type('nobody\r');
    await caller.waitFor('No user named "nobody".');
    await caller.waitFor('To: nobody');
    for (let index = 0; index < 'nobody'.length; index += 1) caller.type('\u007f');
    caller.type('carol\r');
    await caller.waitFor('Subject: ');
    caller.type('Hello Carol\r');
    await caller.waitFor('  1: ');
    caller.type('Just saying hello.\r/s\r');
    await caller.waitFor('Mail sent.');
    const carol = await terminal.serviceCaller('carol');
    expect(await inboxOf(carol)).toMatchObject([{ from: 'alice', subject: 'Hello Carol' }]);

    await caller.waitFor('Number, or ');
    caller.type('s');
    shown = await caller.waitFor('Number, or ');
    expect(shown).toContain('Sent mail');
    expect(shown).toMatch(/1\) {3}carol +Hello Carol/);
    expect(shown).toMatch(/2\) {3}bob +Re: Lunch\?/);
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('tells the recipient of a new mail in one line, at whatever prompt they are', async () => {
    const caller = await terminal.dialAndLogIn('dora');
    await board().mail.sendMail(bob, { to: 'carol', subject: 'Not for Dora', body: 'private' });
    await board().mail.sendMail(bob, { to: 'dora', subject: 'Party', body: 'Saturday!' });
    await caller.waitFor('New mail from bob: Party');
    await caller.waitFor('Your choice: ');
    expect(caller.screen().split('\n').slice(-2)).toEqual(['New mail from bob: Party', 'Your choice:']);
    expect(caller.transcript()).not.toContain('Not for Dora');
    caller.connection.drop();
  });

  it('F lists the file areas the caller may browse, an area’s files, and a file’s details', async () => {
    const file = path.join(terminal.test.dir, 'tetris.txt');
    writeFileSync(file, 'falling blocks\n');
    await board().files.importFile('uploads', file, { desc: 'The classic' });
    const caller = await terminal.dialAndLogIn('carol');
    caller.type('f');
    let shown = await caller.waitFor('File area (number or tag, Enter: back): ');
    expect(shown).toContain('1) Uploads');
    expect(shown).toContain('1 file');
    expect(shown).not.toContain('Sysop files');
    caller.type('sysfiles\r');
    await caller.waitFor('You may not browse file area "sysfiles".');
    await caller.waitFor('Your choice: ');
    caller.type('f');
    await caller.waitFor('File area (number or tag, Enter: back): ');
    caller.type('1\r');
    shown = await caller.waitFor('Number, or ');
    expect(shown).toMatch(/1\) tetris\.txt +15 B \d{4}-\d\d-\d\d The classic/);
    caller.type('1\r');
    shown = await caller.waitFor('[Q] Back: ');
    expect(shown).toContain('Size:      15 B (15 bytes)');
    expect(shown).toContain('SHA-256:   ');
    expect(shown).toContain('The classic');
    caller.type('q');
    await caller.waitFor('Number, or ');
    caller.type('\r');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('W shows this caller’s node, kept alive and doing what they do', async () => {
    // Someone with no other session, so the node list shows this caller's alone.
    await terminal.createUser('wendy');
    const caller = await terminal.dialAndLogIn('wendy');
    const actionsOfWendy = async () =>
      (await board().system.listNodes()).filter((node) => node.username === 'wendy').map((node) => node.action);
    // At once, not "Logging in" for the first minute.
    await expect.poll(actionsOfWendy).toEqual(['At the main menu']);
    // A minute on: the session says it is still there, with what it is doing.
    terminal.timers.advance(60_000);
    const keptAliveAt = terminal.clock.now().toISOString();
    const nodesOfWendy = async () =>
      (await board().system.listNodes())
        .filter((node) => node.username === 'wendy')
        .map(({ action, lastActivityAt }) => ({ action, lastActivityAt }));
    // Waited for until written: a W typed before it lands would be the minute's write instead,
    // and the node would read "Reading board information".
    await expect.poll(nodesOfWendy).toEqual([{ action: 'At the main menu', lastActivityAt: keptAliveAt }]);
    caller.type('w');
    const shown = await caller.waitFor('[Q] Back: ');
    expect(shown).toContain("Who's online");
    expect(shown).toMatch(/\d+ wendy +At the main menu +\d+m \(you\)/);
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('L lists the last callers, newest first', async () => {
    const caller = await terminal.dialAndLogIn('dora');
    caller.type('l');
    const shown = await caller.waitFor('[Q] Back: ');
    expect(shown).toContain('Last callers');
    const rows = shown.split('\n').filter((line) => /^\d{4}-\d\d-\d\d \d\d:\d\d /.test(line));
    expect(rows[0]).toMatch(/ dora/);
    expect(rows.some((row) => / alice/.test(row))).toBe(true);
    caller.type('\r');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('U shows the profile and changes a field', async () => {
    const caller = await terminal.dialAndLogIn('carol');
    caller.type('u');
    let shown = await caller.waitFor('[Q] Quit: ');
    expect(shown).toContain('Your profile: carol');
    expect(shown).toContain('Two-factor:   off');
    caller.type('2');
    await caller.waitFor('Location (empty clears it): ');
    caller.type('Paris\r');
    shown = await caller.waitFor('Location saved.');
    expect(caller.screen()).toContain('Location:     Paris');
    const carol = await terminal.serviceCaller('carol');
    expect((await board().profiles.getOwnProfile(carol)).location).toBe('Paris');
    caller.type('1');
    await caller.waitFor('Real name (empty clears it): ');
    caller.type(`${'x'.repeat(70)}\r`);
    await caller.waitFor('Real name saved.');
    expect((await board().profiles.getOwnProfile(carol)).realName).toBe('x'.repeat(64));
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });
});
