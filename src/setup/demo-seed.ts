import { fileURLToPath } from 'node:url';
import type { Board } from '../board.js';
import type { UserCaller } from '../caller.js';

/** Demo files shipped with baud (assets/demo, one directory up from both src/ and dist/). */
const DEMO_ASSET = (name: string) => fileURLToPath(new URL(`../../assets/demo/${name}`, import.meta.url));

/** A small piece of ANSI art as BBS artists draw it: CP437 box drawing and blocks, bright colours, iCE background. */
const DEMO_ANSI_ART = [
  '\u001b[1;36m╔══════════════════════════╗\u001b[0m',
  '\u001b[1;36m║\u001b[0m  \u001b[1;33m█▀▀▄ ▄▀▀▄ █  █ █▀▀▄\u001b[0m     \u001b[1;36m║\u001b[0m',
  '\u001b[1;36m║\u001b[0m  \u001b[1;33m█▀▀▄ █▀▀█ █  █ █  █\u001b[0m     \u001b[1;36m║\u001b[0m',
  '\u001b[1;36m║\u001b[0m  \u001b[33m▀▀▀  ▀  ▀  ▀▀  ▀▀▀\u001b[0m      \u001b[1;36m║\u001b[0m',
  '\u001b[1;36m╚══════════════════════════╝\u001b[0m',
  '\u001b[44m \u001b[1;37mdial in\u001b[0;44m \u001b[0m \u001b[32m░▒▓\u001b[1;32m█\u001b[0m |12pipe codes too|07',
].join('\r\n');

async function callerFor(board: Board, username: string): Promise<UserCaller> {
  const { userId } = await board.users.getUser(username);
  const user = await board.users.loadCallerUser(userId);
  if (!user) throw new Error(`demo user ${username} is missing or disabled`);
  return { kind: 'user', user, via: 'token', scopes: new Set(['read', 'write']), isSecure: false, session: null };
}

/**
 * Demo content: messages in both conferences (one with ANSI colour and pipe codes, one
 * reply) and two small files (a zip with a FILE_ID.DIZ, a text file). Goes through the same
 * services as posting and `baud file import`, so the demo exercises the real rules.
 */
export async function seedDemoContent(
  board: Board,
  users: { readonly sysopName: string; readonly demoUserName: string },
): Promise<void> {
  const sysop = await callerFor(board, users.sysopName);
  const demo = await callerFor(board, users.demoUserName);
  const welcome = await board.messages.postMessage(sysop, 'general', {
    subject: 'Welcome to baud',
    message: 'Hello and welcome! This conference is readable without an account.\nLog in to post.',
  });
  await board.messages.postMessage(demo, 'general', {
    subject: 'Re: Welcome to baud',
    message: 'Thanks, sysop! Glad to be here.',
    toUserName: users.sysopName,
    replyToMessageId: welcome.messageId,
  });
  await board.messages.postMessage(sysop, 'announcements', {
    subject: 'Board rules',
    message: 'Be kind, stay on topic, and no warez.',
  });
  await board.messages.postMessage(demo, 'retro', {
    subject: '\u001b[1;35mColour\u001b[0m test',
    message:
      '\u001b[1;31mRed\u001b[0m, \u001b[1;32mgreen\u001b[0m and |03cyan|07 in one message.\n' +
      'Ask for ?stripAnsi=false to see the escape codes.',
  });
  await board.messages.postMessage(sysop, 'retro', {
    subject: 'ANSI art: the baud logo',
    message: DEMO_ANSI_ART,
  });
  await board.messages.postMessage(demo, 'lounge', {
    subject: 'Members only',
    message: 'Only logged-in members can read this area.',
  });
  await board.files.importFile('public_uploads', DEMO_ASSET('BAUDPACK.ZIP'));
  await board.files.importFile('public_uploads', DEMO_ASSET('WELCOME.TXT'), { desc: 'Read me first' });
  await board.files.importFile('member_files', DEMO_ASSET('WELCOME.TXT'), { desc: 'A welcome note for members' });
}
