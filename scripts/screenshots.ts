/**
 * `npm run screenshots`: starts a demo board, opens the reader's main views in headless
 * Chromium and writes a PNG of each to docs/screenshots/ (linked from the README); then dials in
 * to a demo board with OpenSSH in tmux and writes its terminal screens as PNGs too
 * (docs/terminal-screens.md shows them).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type BaudClient, createBaudClient } from '../clients/typescript/src/index.js';
import { loadConfig } from '../src/config/load-config.js';
import { initBoard } from '../src/setup/init-board.js';
import { serveBoard } from '../src/setup/serve-board.js';
import { logInThroughForm, startReaderFixture } from '../test/support/reader-server.js';
import { openTmuxTerminal, type TmuxTerminal } from '../test/support/tmux-terminal.js';
import { terminalScreenHtml } from './terminal-screen-html.js';

const OUTPUT_DIR = path.resolve(import.meta.dirname, '..', 'docs', 'screenshots');

/** A few mails from the sysop to the demo user, for the mailbox's pictures (web and terminal). */
const SYSOP_MAILS = [
  ['Welcome aboard', 'Glad to have you here. Ask me anything about the board.'],
  ['Your upload', 'Thanks for WELCOME.TXT. Could you add a FILE_ID.DIZ next time?'],
  ['Net meeting on Friday', 'We meet in the Retro area at 20:00.\nBring your best ANSI.'],
] as const;

async function sendSysopMails(sysop: BaudClient, to: string): Promise<void> {
  for (const [subject, text] of SYSOP_MAILS) {
    await sysop.api.POST('/_baud/api/v1/mail', { body: { to, subject, body: text } });
  }
}

/** The terminal the screens are drawn for: the size every caller's terminal is assumed to have. */
const TERMINAL_ROWS = 24;

/** Draws what `terminal` shows now, colours and all, as a PNG of a terminal window titled `title`. */
async function shootTerminal(browser: Browser, terminal: TmuxTerminal, name: string, title: string): Promise<void> {
  const html = terminalScreenHtml(await terminal.screenWithColours(), { rows: TERMINAL_ROWS, title });
  const page = await browser.newPage();
  try {
    await page.setContent(html);
    await page.locator('body').screenshot({ path: path.join(OUTPUT_DIR, `terminal-${name}.png`) });
  } finally {
    await page.close();
  }
  process.stdout.write(`  docs/screenshots/terminal-${name}.png\n`);
}

/**
 * The demo board's terminal screens, as a caller dialling in with OpenSSH sees them: a demo
 * board of its own (the reader's fixture serves no SSH) on free ports, with a welcome pause so
 * the welcome screen stays up to be seen, the sysop's mails, and the demo user's new-scan
 * pointers at the retro area's ANSI art (everything before it read).
 */
async function shootTerminalScreens(browser: Browser): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-terminal-screens-'));
  const configPath = path.join(dir, 'config.hjson');
  const env = { BAUD_PORT: '0' };
  let terminal: TmuxTerminal | null = null;
  let running: Awaited<ReturnType<typeof serveBoard>> | null = null;
  try {
    const created = await initBoard({ configPath, env, demo: true });
    const [sysopCredential, demoCredential] = created.credentials;
    if (!sysopCredential || !demoCredential) throw new Error('the demo board has no sysop or demo user');
    const config = loadConfig({ configPath, env });
    const { contentServers } = config;
    running = await serveBoard({
      ...config,
      logging: { ...config.logging, level: 'silent' },
      contentServers: {
        ...contentServers,
        ssh: { ...contentServers.ssh, port: 0 },
        telnet: { ...contentServers.telnet, enabled: false },
        terminal: { ...contentServers.terminal, welcomePauseSeconds: 60 },
      },
    });
    const baseUrl = new URL(running.url).origin;
    const sysop = createBaudClient({ baseUrl });
    await sysop.login(sysopCredential.username, sysopCredential.password);
    await sendSysopMails(sysop, demoCredential.username);
    const demo = createBaudClient({ baseUrl });
    await demo.login(demoCredential.username, demoCredential.password);
    const retro = await demo.api.GET('/_baud/api/v1/messages/areas/{areaTag}/messages', {
      params: { path: { areaTag: 'retro' } },
    });
    const art = retro.data?.data.find((message) => message.subject === 'ANSI art: the baud logo');
    if (!art) throw new Error('the demo board has no ANSI art in retro');
    // Past the last message (the pointer is clamped to it): those areas are read.
    const pointers = { general: 2 ** 30, announcements: 2 ** 30, lounge: 2 ** 30, retro: art.messageId - 1 };
    for (const [areaTag, lastReadMessageId] of Object.entries(pointers)) {
      await demo.api.PUT('/_baud/api/v1/messages/areas/{areaTag}/pointer', {
        params: { path: { areaTag } },
        body: { lastReadMessageId },
      });
    }
    // Who's online then shows the caller once: in the terminal, not also in this API session.
    await demo.logout();

    const askpass = path.join(dir, 'askpass.sh');
    writeFileSync(askpass, `#!/bin/sh\necho '${demoCredential.password}'\n`);
    chmodSync(askpass, 0o700);
    const port = String(running.ssh?.port);
    // Titled with the demo's own port (`npm start`), the one a reader of the docs dials, not this run's.
    const title = `ssh -p ${contentServers.ssh.port} ${demoCredential.username}@127.0.0.1`;
    terminal = await openTmuxTerminal(
      [
        'ssh',
        '-tt',
        '-F',
        '/dev/null',
        '-p',
        port,
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-o',
        'PubkeyAuthentication=no',
        `${demoCredential.username}@127.0.0.1`,
      ],
      { columns: 80, rows: TERMINAL_ROWS, env: { HOME: dir, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force' } },
    );
    const caller = terminal;
    const shootNow = (name: string) => shootTerminal(browser, caller, name, title);

    await caller.waitFor('Press a key to go on.');
    await shootNow('welcome');
    await caller.type(' ');
    await caller.waitFor('Your choice:');
    await shootNow('main-menu');

    await caller.type('r');
    await caller.waitFor('Conference or area (number or tag, Enter: back):');
    await caller.type('members\r');
    await caller.waitFor(/retro +1 new\n+Area \(number or tag, Enter: back\):/);
    await shootNow('areas');
    await caller.press('Enter');
    await caller.waitFor('Your choice:');

    await caller.type('n');
    await caller.waitFor(/Subj: ANSI art: the baud logo[\s\S]*\[Q\] Quit:/);
    await shootNow('new-scan');
    await caller.type('q');
    await caller.waitFor('Your choice:');

    await caller.type('p');
    await caller.waitFor('Conference or area (number or tag, Enter: back):');
    await caller.type('general\r');
    await caller.waitFor('To: All');
    await caller.press('Enter');
    await caller.waitFor('Subject:');
    await caller.type('Dialled in from a terminal\r');
    await caller.waitFor('  1:');
    await caller.type('Hello from an 80x24 window!\r');
    await caller.waitFor('  2:');
    await caller.type('\r');
    await caller.waitFor('  3:');
    await caller.type('Anyone around for a chat tonight?');
    await caller.waitFor('tonight?');
    await shootNow('line-editor');
    await caller.press('Enter');
    await caller.waitFor('  4:');
    await caller.type('/a\r');
    await caller.waitFor('Aborted: nothing was posted.');

    await caller.type('m');
    await caller.waitFor(/Inbox \(3 unread\)[\s\S]*Number, or/);
    await shootNow('mail');
    await caller.type('q\r');
    await caller.waitFor('Your choice:');

    await caller.type('w');
    await caller.waitFor(/Who's online[\s\S]*\[Q\] Back:/);
    await shootNow('who');
    await caller.type('q');
    await caller.waitFor('Your choice:');
    await caller.type('g');
    await caller.waitFor('Goodbye');
  } finally {
    await terminal?.close();
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  // The live event stream never ends, so "network idle" never comes: wait for the lists to fill.
  await page.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
  await page.screenshot({ path: path.join(OUTPUT_DIR, `${name}.png`), fullPage: true });
  process.stdout.write(`  docs/screenshots/${name}.png\n`);
}

const fixture = await startReaderFixture();
try {
  const { page } = await fixture.newPage({ width: 1100, height: 760 });
  await page.goto('/');
  await page.getByRole('link', { name: 'Public Square' }).waitFor();
  await shoot(page, 'home-anonymous');

  await page.goto('/areas/general');
  await page.getByRole('link', { name: 'Welcome to baud', exact: true }).waitFor();
  await shoot(page, 'area-anonymous');

  await logInThroughForm(page, fixture.demo);
  await page.goto('/');
  await page.getByRole('link', { name: 'Public Square' }).waitFor();
  await shoot(page, 'home');

  await page.goto('/areas/general');
  await page.getByRole('link', { name: 'Welcome to baud', exact: true }).waitFor();
  await shoot(page, 'area');

  await page.goto('/areas/retro');
  await page.getByRole('link', { name: 'ANSI art: the baud logo' }).click();
  await page.locator('pre.ansi').waitFor();
  await shoot(page, 'message-ansi');

  await page.goto('/areas/general');
  await page.getByRole('link', { name: 'Welcome to baud', exact: true }).click();
  await page.getByRole('link', { name: /^Thread/ }).click();
  await page.getByRole('list', { name: 'Messages of the thread' }).waitFor();
  await shoot(page, 'thread');

  await page.goto('/search?q=welcome');
  await page.locator('mark').first().waitFor();
  await shoot(page, 'search');

  await page.goto('/files/areas/public_uploads');
  await page.getByRole('link', { name: 'WELCOME.TXT' }).waitFor();
  await shoot(page, 'files');

  await page.goto('/profile');
  await page.getByRole('heading', { name: 'Your profile' }).waitFor();
  await shoot(page, 'profile');

  await page.goto('/account');
  await page.getByLabel('Your password').fill(fixture.demo.password);
  await page.getByRole('button', { name: 'Set up two-factor login' }).click();
  await page.getByRole('img', { name: /QR code/ }).waitFor();
  await shoot(page, 'account-two-factor');

  const guest = await fixture.newPage({ width: 1100, height: 760 });
  await guest.page.goto('/register');
  await guest.page.getByRole('button', { name: 'Apply' }).waitFor();
  await shoot(guest.page, 'register');
  await guest.page.getByLabel('User name').fill('newcaller');
  await guest.page.getByLabel('Password', { exact: true }).fill('a long enough password');
  await guest.page.getByLabel('Password again').fill('a long enough password');
  await guest.page.getByLabel('A note for the sysop (optional)').fill('Dialled in to the old board in 1994.');
  await guest.page.getByRole('button', { name: 'Apply' }).click();
  await guest.page.getByRole('status').waitFor();

  const desk = await fixture.newPage({ width: 1100, height: 760 });
  await logInThroughForm(desk.page, fixture.sysop);
  await desk.page.goto('/admin');
  await desk.page.getByText('Dialled in to the old board in 1994.').waitFor();
  await shoot(desk.page, 'desk');
  await desk.page.goto('/admin/audit');
  await desk.page.locator('table.list').waitFor();
  await shoot(desk.page, 'desk-audit');
  const sysop = createBaudClient({ baseUrl: fixture.baseUrl });
  await sysop.login(fixture.sysop.username, fixture.sysop.password);
  await sendSysopMails(sysop, fixture.demo.username);
  await page.goto('/mail');
  await page.getByRole('link', { name: 'Welcome aboard' }).click();
  await page.locator('pre.ansi').waitFor();
  await shoot(page, 'mail');
  await page.goto('/mail');
  await page.getByRole('row', { name: /Net meeting on Friday/ }).waitFor();
  await shoot(page, 'mailbox');

  await page.getByRole('link', { name: 'Net meeting on Friday' }).click();
  await page.getByRole('link', { name: 'Reply' }).click();
  await page.getByLabel('Message').waitFor();
  await page.getByLabel('Message').press('Control+End');
  await page.getByLabel('Message').pressSequentially("I'll be there, with a new logo.");
  await shoot(page, 'mail-compose');

  const phone = await fixture.newPage({ width: 390, height: 844 });
  await logInThroughForm(phone.page, fixture.demo);
  await phone.page.goto('/areas/retro');
  await phone.page.getByRole('link', { name: 'ANSI art: the baud logo' }).click();
  await phone.page.locator('pre.ansi').waitFor();
  await shoot(phone.page, 'phone-message');

  const phoneDesk = await fixture.newPage({ width: 390, height: 844 });
  await logInThroughForm(phoneDesk.page, fixture.sysop);
  await phoneDesk.page.goto('/admin');
  await phoneDesk.page.getByText('Dialled in to the old board in 1994.').waitFor();
  await shoot(phoneDesk.page, 'phone-desk');
  await phone.page.goto('/mail');
  await phone.page.getByRole('row', { name: /Net meeting on Friday/ }).waitFor();
  await shoot(phone.page, 'phone-mailbox');

  await page.getByRole('button', { name: 'Light theme' }).click();
  await page.goto('/areas/retro');
  await page.getByRole('link', { name: 'ANSI art: the baud logo' }).click();
  await page.locator('pre.ansi').waitFor();
  await shoot(page, 'message-light-theme');

  await shootTerminalScreens(fixture.browser);
} finally {
  await fixture.close();
}
