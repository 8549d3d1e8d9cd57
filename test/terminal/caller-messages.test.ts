import { beforeAll, expect, it } from 'vitest';
import type { UserCaller } from '../../src/caller.js';
import { describeEachDialect } from '../support/test-board.js';
import { terminalBoard } from './support/terminal-board.js';

describeEachDialect('terminal messages', (dialect) => {
  const terminal = terminalBoard(dialect);
  let bob: UserCaller;
  const ids: Record<string, number> = {};

  /** Bob posts through the service, as any other client would. */
  async function bobPosts(areaTag: string, subject: string, message = `${subject} text`) {
    const posted = await terminal.test.board.messages.postMessage(bob, areaTag, { subject, message });
    ids[subject] = posted.messageId;
    return posted;
  }

  const board = () => terminal.test.board;
  const listArea = async (caller: UserCaller, areaTag: string) =>
    (await board().messages.listAreaMessages(caller, areaTag, { limit: 100, afterKey: null })).items;

  beforeAll(async () => {
    for (const name of ['alice', 'bob', 'carol', 'dan', 'eve']) await terminal.createUser(name);
    bob = await terminal.serviceCaller('bob');
    await bobPosts('general', 'First', 'The first message.\nIts second line.');
    await bobPosts('general', 'Second');
    await bobPosts('offtopic', 'Elsewhere');
  });

  it('N reads the unread messages area by area, moving the pointers as it goes', async () => {
    const alice = await terminal.serviceCaller('alice');
    expect(await board().messages.listUnread(alice)).toEqual([
      { confTag: 'main', areaTag: 'general', lastReadMessageId: null, unreadCount: 2 },
      { confTag: 'other', areaTag: 'offtopic', lastReadMessageId: null, unreadCount: 1 },
    ]);
    const caller = await terminal.dialAndLogIn('alice');
    caller.type('n');
    let shown = await caller.waitFor('Subj: First');
    expect(shown).toContain('General');
    expect(shown).toContain('From: bob');
    await caller.waitFor('The first message.');
    await caller.waitFor('[Q] Quit: ');
    expect(await board().messages.listUnread(alice)).toEqual([
      { confTag: 'main', areaTag: 'general', lastReadMessageId: ids.First, unreadCount: 1 },
      { confTag: 'other', areaTag: 'offtopic', lastReadMessageId: null, unreadCount: 1 },
    ]);
    caller.type('\r');
    await caller.waitFor('Subj: Second');
    caller.type('n');
    shown = await caller.waitFor('Subj: Elsewhere');
    expect(shown).toContain('Off topic');
    caller.type('\r');
    await caller.waitFor('No more new messages.');
    await caller.waitFor('Your choice: ');
    expect(await board().messages.listUnread(alice)).toEqual([]);
    caller.type('n');
    await caller.waitFor('No new messages.');
    caller.type('g');
    await caller.waitForClose();
  });

  it('N stopped with Q keeps the pointer where the caller stopped', async () => {
    const carol = await terminal.serviceCaller('carol');
    const caller = await terminal.dialAndLogIn('carol');
    caller.type('N');
    await caller.waitFor('Subj: First');
    await caller.waitFor('[Q] Quit: ');
    caller.type('q');
    await caller.waitFor('New scan stopped: it goes on from here next time.');
    expect(await board().messages.listUnread(carol)).toEqual([
      { confTag: 'main', areaTag: 'general', lastReadMessageId: ids.First, unreadCount: 1 },
      { confTag: 'other', areaTag: 'offtopic', lastReadMessageId: null, unreadCount: 1 },
    ]);
    caller.connection.drop();
  });

  it('R picks a conference and an area by number or by tag; hidden areas are neither listed nor readable', async () => {
    const caller = await terminal.dialAndLogIn('dan');
    caller.type('r');
    await caller.waitFor('Conferences');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('2\r');
    let shown = await caller.waitFor('Area (number or tag, Enter: back): ');
    expect(shown).toContain('1) Off topic');
    caller.type('1\r');
    await caller.waitFor('Subj: Elsewhere');
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('MAIN\r');
    shown = await caller.waitFor('Area (number or tag, Enter: back): ');
    expect(shown).toMatch(/1\) General +general +2 new/);
    expect(shown).toContain('2) Chatter');
    expect(shown).toContain('3) News');
    expect(shown).not.toContain('Secret');
    expect(shown).not.toContain('Staff');
    caller.type('secret\r');
    await caller.waitFor('You may not read message area "secret".');
    await caller.waitFor('Your choice: ');
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Area (number or tag, Enter: back): ');
    caller.type('9\r');
    await caller.waitFor('There is no number 9 in this list.');
    caller.type('general\r');
    await caller.waitFor('Subj: First');
    caller.type('q');
    await caller.waitFor('Your choice: ');
    // An area's tag at the conference prompt goes straight to the area, hidden ones refused alike.
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('GENERAL\r');
    // At the first unread message: the first was read above.
    await caller.waitFor('Subj: Second');
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('secret\r');
    await caller.waitFor('You may not read message area "secret".');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('goes next and back in the reader, and replies quoting the message', async () => {
    const caller = await terminal.dialAndLogIn('eve');
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Area (number or tag, Enter: back): ');
    caller.type('general\r');
    await caller.waitFor('Subj: First');
    await caller.waitFor('[Q] Quit: ');
    caller.type('n');
    await caller.waitFor('Subj: Second');
    await caller.waitFor('[Q] Quit: ');
    caller.type('b');
    await caller.waitFor('Subj: First');
    await caller.waitFor('[Q] Quit: ');
    caller.type('B');
    await caller.waitFor('This is the first message.');
    await caller.waitFor('[Q] Quit: ');
    caller.type('r');
    await caller.waitFor('Reply to bob');
    await caller.waitFor('To: bob');
    caller.type('\r');
    await caller.waitFor('Subject: Re: First');
    caller.type('\r');
    const shown = await caller.waitFor('  4: ');
    expect(shown).toContain('  1: > The first message.');
    expect(shown).toContain('  2: > Its second line.');
    caller.type('I agree.\r/s\r');
    await caller.waitFor('Reply posted as message #');
    await caller.waitFor('[Q] Quit: ');
    expect(caller.screen()).toContain('Subj: First');
    const eve = await terminal.serviceCaller('eve');
    const reply = (await listArea(eve, 'general')).find((message) => message.fromUserName === 'eve');
    expect(reply).toMatchObject({ subject: 'Re: First', toUserName: 'bob', replyToMessageId: ids.First });
    const detail = await board().messages.getMessage(eve, reply?.uuid ?? '');
    expect(detail.body).toBe('> The first message.\n> Its second line.\n\nI agree.');
    caller.type('q');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('P posts at /s in one service call, and /a writes nothing', async () => {
    const userId = await terminal.createUser('fay');
    const fay = await terminal.serviceCaller('fay');
    const caller = await terminal.dialAndLogIn('fay');
    caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('1\r');
    await caller.waitFor('Post in (number or tag, Enter: back): ');
    caller.type('chatter\r');
    await caller.waitFor('Post in Chatter');
    await caller.waitFor('To: All');
    caller.type('\r');
    await caller.waitFor('Subject: ');
    caller.type('\r');
    await caller.waitFor('A message needs a subject.');
    await caller.waitFor('Subject: ');
    caller.type('Hello chatter\r');
    await caller.waitFor('A line holding only /s saves, /a aborts.');
    await caller.waitFor('  1: ');
    caller.type('/s\r');
    await caller.waitFor('There is no text to save yet: type some, or /a to abort.');
    caller.type('Line one\r');
    expect(await listArea(fay, 'chatter')).toEqual([]);
    caller.type('  indented line two\r/S\r');
    const shown = await caller.waitFor('Your choice: ');
    const [posted] = await listArea(fay, 'chatter');
    expect(shown).toContain(`Posted as message #${posted?.messageId} in Chatter.`);
    expect(posted).toMatchObject({ subject: 'Hello chatter', toUserName: 'All', fromUserName: 'fay' });
    expect((await board().messages.getMessage(fay, posted?.uuid ?? '')).body).toBe('Line one\n  indented line two');

    caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Post in (number or tag, Enter: back): ');
    caller.type('2\r');
    await caller.waitFor('To: All');
    caller.type('\r');
    await caller.waitFor('Subject: ');
    caller.type('Never mind\r');
    await caller.waitFor('  1: ');
    caller.type('this is not sent\r/a\r');
    await caller.waitFor('Aborted: nothing was posted.');
    expect(await listArea(fay, 'chatter')).toHaveLength(1);
    const posts = await board()
      .db.selectFrom('users')
      .select(['postCount'])
      .where('id', '=', userId)
      .executeTakeFirst();
    expect(Number(posts?.postCount)).toBe(1);
    caller.connection.drop();
  });

  it('P in an area only sysops write in says so in one line, before any editor', async () => {
    const caller = await terminal.dialAndLogIn('alice');
    caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Post in (number or tag, Enter: back): ');
    caller.type('news\r');
    const shown = await caller.waitFor('You may not post in message area "news".');
    expect(shown).not.toContain('Subject:');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('S searches the messages the caller may read and opens a hit', async () => {
    const sysop = await terminal.createUser('root', ['sysops']).then(() => terminal.serviceCaller('root'));
    await board().messages.postMessage(sysop, 'staff', { subject: 'Hidden banana', message: 'banana in the vault' });
    await bobPosts('chatter', 'Fruit talk', 'I like a banana now and then.');
    const caller = await terminal.dialAndLogIn('alice');
    caller.type('s');
    await caller.waitFor('Search for (Enter: back): ');
    caller.type('banana\r');
    const shown = await caller.waitFor('Number, or ');
    expect(shown).toContain('Messages matching "banana"');
    expect(shown).toContain('1) Fruit talk');
    expect(shown).toContain('I like a banana now and then.');
    expect(shown).not.toContain('Hidden banana');
    caller.type('1\r');
    await caller.waitFor('Subj: Fruit talk');
    await caller.waitFor('[R] Reply  [Q] Quit: ');
    caller.type('q');
    await caller.waitFor('Number, or ');
    caller.type('\r');
    await caller.waitFor('Your choice: ');
    caller.type('s');
    await caller.waitFor('Search for (Enter: back): ');
    caller.type('-banana\r');
    await caller.waitFor('Q has no words to search for.');
    await caller.waitFor('Your choice: ');
    caller.connection.drop();
  });

  it('tells a caller reading an area of a new post there, keeping what they type', async () => {
    await terminal.createUser('gus');
    const caller = await terminal.dialAndLogIn('gus');
    caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back): ');
    caller.type('main\r');
    await caller.waitFor('Area (number or tag, Enter: back): ');
    caller.type('general\r');
    await caller.waitFor('[Q] Quit: ');
    caller.type('r');
    await caller.waitFor('To: bob');
    caller.type('\r');
    await caller.waitFor('Subject: Re: ');
    caller.type('\r');
    await caller.waitFor('  4: ');
    caller.type('half a li');
    await bobPosts('offtopic', 'Not here');
    await bobPosts('general', 'Breaking news');
    await caller.waitFor('New message in General from bob: Breaking news');
    await caller.waitFor('  4: half a li');
    expect(caller.screen().split('\n').slice(-2)).toEqual([
      'New message in General from bob: Breaking news',
      '  4: half a li',
    ]);
    expect(caller.transcript()).not.toContain('Not here');
    caller.type('ne\r/a\r');
    await caller.waitFor('Aborted: nothing was posted.');
    caller.connection.drop();
  });
});
