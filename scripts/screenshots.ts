/**
 * `npm run screenshots`: starts a demo board, opens the reader's main views in headless
 * Chromium and writes a PNG of each to docs/screenshots/ (linked from the README).
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createBaudClient } from '../clients/typescript/src/index.js';
import { logInThroughForm, startReaderFixture } from '../test/support/reader-server.js';

const OUTPUT_DIR = path.resolve(import.meta.dirname, '..', 'docs', 'screenshots');

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
  // A few mails from the sysop, the oldest already read, for the mailbox's pictures.
  const sysop = createBaudClient({ baseUrl: fixture.baseUrl });
  await sysop.login(fixture.sysop.username, fixture.sysop.password);
  const mails = [
    ['Welcome aboard', 'Glad to have you here. Ask me anything about the board.'],
    ['Your upload', 'Thanks for WELCOME.TXT. Could you add a FILE_ID.DIZ next time?'],
    ['Net meeting on Friday', 'We meet in the Retro area at 20:00.\nBring your best ANSI.'],
  ] as const;
  for (const [subject, text] of mails) {
    await sysop.api.POST('/_baud/api/v1/mail', { body: { to: fixture.demo.username, subject, body: text } });
  }
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
} finally {
  await fixture.close();
}
