import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { type BaudClient, createBaudClient } from '../../clients/typescript/src/index.js';
import { qrDrawing } from '../../web/src/qr-path.js';
import { newSshKey } from '../auth/ssh-key-fixtures.js';
import {
  apiClientOf,
  axeViolations,
  describeInBrowser,
  type LoginCredential,
  logInThroughForm,
  readerForBlock,
} from '../support/reader-server.js';
import { totpCode } from '../support/totp-code.js';

const API = '/_baud/api/v1';
const PASSWORD = 'a long enough password';

/**
 * Issue 32: an open board's sign-up, and the own account in the web reader (community.md
 * "Your own account"): password change, login sessions, two-factor login with its QR code, the
 * login's code prompt, and SSH keys ("Terminal callers"). Each test signs up its own member (at
 * most 5 per address an hour: this file signs up 4; the SSH keys are the first member's). Tests
 * share the board and run in order.
 */
describeInBrowser('the own account in the web reader', () => {
  const { fixture, pages } = readerForBlock({ registration: 'open' });

  /** A new active member (the board is open), signed up through the API. */
  async function member(username: string): Promise<LoginCredential> {
    const anonymous = createBaudClient({ baseUrl: fixture().baseUrl });
    const answer = await anonymous.api.POST(`${API}/auth/register`, { body: { username, password: PASSWORD } });
    expect(answer.response.status).toBe(201);
    return { username, password: PASSWORD };
  }

  /** Whether a client's login session still lives: its refresh is refused once the session ended. */
  async function isAlive(client: BaudClient): Promise<boolean> {
    try {
      await client.refresh();
      return true;
    } catch (error) {
      expect(error).toMatchObject({ status: 401 });
      return false;
    }
  }

  /** Logs out, and logs in again up to the password: an account with two-factor login then asks the code. */
  async function logInAgain(page: Page, credential: LoginCredential): Promise<void> {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Log in' }).waitFor();
    await page.goto('/login');
    await page.getByLabel('User name').fill(credential.username);
    await page.getByLabel('Password').fill(credential.password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  async function logInWithCode(page: Page, code: string): Promise<void> {
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  it('signs up on an open board: the account is active at once and logs in', async () => {
    const page = await pages.open();
    await page.goto('/');
    await page.getByRole('link', { name: 'Sign up' }).click();
    await page.getByText('Your account is active as soon as it is created.').waitFor();
    // An open board asks no note for a sysop.
    expect(await page.getByLabel(/note for the sysop/).count()).toBe(0);
    await page.getByLabel('User name').fill('opencaller');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the account' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'Welcome, opencaller: your account is ready.',
    );
    await page.getByRole('status').getByRole('link', { name: 'Log in' }).click();
    await logInThroughForm(page, { username: 'opencaller', password: PASSWORD });
  });

  it('changes the password: a wrong current one and a short new one refused beside their fields, other sessions end', async () => {
    const credential = await member('changer');
    const elsewhere = await apiClientOf(fixture(), credential);
    const page = await pages.open();
    await logInThroughForm(page, credential);
    await page.getByRole('banner').getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();

    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('another long password');
    await page.getByLabel('New password again').fill('another long password');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await expect(page.locator('#password-current-error').textContent()).resolves.toBe('That is not your password.');

    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('New password again').fill('short');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await page.locator('#password-new-error').waitFor();
    await expect(page.getByLabel('New password', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');

    await page.getByLabel('New password', { exact: true }).fill('another long password');
    await page.getByLabel('New password again').fill('another long passwort');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await expect(page.locator('#password-again-error').textContent()).resolves.toBe('The two new passwords differ.');

    await page.getByLabel('New password again').fill('another long password');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    await expect(page.getByLabel('Current password').inputValue()).resolves.toBe('');
    await expect(isAlive(elsewhere)).resolves.toBe(false);
    // This page's session goes on, across a reload too.
    await page.reload();
    await page.getByRole('banner').getByRole('link', { name: credential.username, exact: true }).waitFor();
    await apiClientOf(fixture(), { username: credential.username, password: 'another long password' });
  });

  it('lists the login sessions, marks this one, and ends another at once', async () => {
    const credential = await member('sessions');
    const elsewhere = await apiClientOf(fixture(), credential);
    const page = await pages.open();
    await logInThroughForm(page, credential);
    await page.goto('/account');
    const rows = page.locator('table.list tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    await rows.filter({ hasText: 'this one' }).waitFor();
    await rows.getByRole('button', { name: /^End the session started/ }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.textContent()).resolves.toContain('this one');
    await expect(isAlive(elsewhere)).resolves.toBe(false);
  });

  it('sets up two-factor login with a QR code of the secret, then asks the code at login, and turns it off', async () => {
    const credential = await member('twofactor');
    const page = await pages.open();
    await logInThroughForm(page, credential);
    await page.goto('/account');
    await page.getByLabel('Your password').fill('not the password');
    await page.getByRole('button', { name: 'Set up two-factor login' }).click();
    await expect(page.locator('#totp-start-password-error').textContent()).resolves.toBe('That is not your password.');

    await page.getByLabel('Your password').fill(PASSWORD);
    const [enrolled] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith(`${API}/users/me/totp`)),
      page.getByRole('button', { name: 'Set up two-factor login' }).click(),
    ]);
    const { secret, otpauthUrl } = (await enrolled.json()) as { secret: string; otpauthUrl: string };
    // The QR code is drawn in the page from the board's otpauth URL, module for module.
    const qr = page.getByRole('img', { name: /QR code of the two-factor secret/ });
    await expect(qr.locator('path').getAttribute('d')).resolves.toBe(qrDrawing(otpauthUrl).d);
    await expect(page.locator('code.secret').textContent()).resolves.toBe(secret.match(/.{1,4}/g)?.join(' '));

    const now = Date.now();
    const wrong = String((Number(totpCode(secret, now)) + 500_000) % 1_000_000).padStart(6, '0');
    await page.getByLabel('Code from the app').fill(wrong);
    await page.getByRole('button', { name: 'Turn two-factor login on' }).click();
    await expect(page.locator('#totp-confirm-code-error').textContent()).resolves.toMatch(
      /^That is not the app's code of this moment\./,
    );
    await page.getByLabel('Code from the app').fill(totpCode(secret, now));
    await page.getByRole('button', { name: 'Turn two-factor login on' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await expect.poll(() => codes.count()).toBe(10);
    const recoveryCodes = await codes.allTextContents();
    await page.getByText('Save these recovery codes now').waitFor();
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('button', { name: 'Turn two-factor login off' }).waitFor();

    // Logging in asks the code once the password is right; a wrong code is said, a recovery code works.
    await logInAgain(page, credential);
    await page.getByLabel('Code').waitFor();
    await expect(page.getByLabel('Code').evaluate((input) => input === document.activeElement)).resolves.toBe(true);
    await logInWithCode(page, wrong);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'That code is not right, or it was used already (each code works once). Try the next one.',
    );
    await logInWithCode(page, recoveryCodes[0] ?? '');
    await page.getByRole('banner').getByRole('link', { name: credential.username, exact: true }).waitFor();

    // The app's next code (one step of skew is allowed) logs in too.
    await logInAgain(page, credential);
    await logInWithCode(page, totpCode(secret, now + 30_000));
    await page.getByRole('banner').getByRole('link', { name: credential.username, exact: true }).waitFor();

    await page.goto('/account');
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('Code (or a recovery code)').fill(recoveryCodes[1] ?? '');
    await page.getByRole('button', { name: 'Turn two-factor login off' }).click();
    await page.getByRole('button', { name: 'Set up two-factor login' }).waitFor();
    await apiClientOf(fixture(), credential);
  });

  it('adds SSH keys by pasting the .pub line, says beside it what is wrong with a private key, and deletes one after a confirm', async () => {
    const credential = { username: 'opencaller', password: PASSWORD };
    const laptop = newSshKey('ed25519', 'opencaller@laptop');
    const phone = newSshKey('ecdsa-256', 'termux');
    const page = await pages.open();
    await logInThroughForm(page, credential);
    await page.goto('/account');
    await page.getByText('No SSH keys yet.').waitFor();
    const publicKey = page.getByLabel('Public key');

    await publicKey.fill(laptop.privateKey);
    await page.getByRole('button', { name: 'Add the key' }).click();
    await expect(page.locator('#ssh-key-public-error').textContent()).resolves.toMatch(
      /^This is a private key, which must stay on your computer: the board did not keep it\./,
    );
    await expect(publicKey.getAttribute('aria-invalid')).resolves.toBe('true');

    await publicKey.fill(`${laptop.line}\n`);
    await page.getByRole('button', { name: 'Add the key' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Key added: ${laptop.fingerprint}.` })
      .waitFor();
    await expect(publicKey.inputValue()).resolves.toBe('');
    await publicKey.fill(phone.line);
    await page.getByLabel('Label (optional)').fill('phone');
    await page.getByRole('button', { name: 'Add the key' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Key added: ${phone.fingerprint}.` })
      .waitFor();

    // Newest first, with the fingerprint ssh-keygen -lf shows.
    const rows = page.getByRole('region', { name: 'SSH keys' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    await expect(rows.nth(0).textContent()).resolves.toContain(`phone${phone.type}${phone.fingerprint}`);
    await expect(rows.nth(1).textContent()).resolves.toContain(`opencaller@laptop${laptop.type}${laptop.fingerprint}`);

    await publicKey.fill(laptop.line);
    await page.getByRole('button', { name: 'Add the key' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      /^You have registered this key already \(id \d+, "opencaller@laptop"\)\.$/,
    );

    // What was said of the last key added no longer stands beside the refusal.
    await expect(page.getByRole('status').filter({ hasText: 'Key added' }).count()).resolves.toBe(0);
    const laptopRow = rows.filter({ hasText: 'opencaller@laptop' });
    await laptopRow.getByRole('button', { name: 'Delete' }).click();
    await laptopRow.getByText('Delete the key “opencaller@laptop”? It will log you in no more.').waitFor();
    await laptopRow.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.textContent()).resolves.toContain('phone');

    // The board holds what the page shows: the phone's key, kept for the accessibility check below.
    const client = await apiClientOf(fixture(), credential);
    const listed = await client.api.GET(`${API}/users/me/ssh-keys`);
    expect(listed.data?.data.map((key) => [key.label, key.fingerprint])).toEqual([['phone', phone.fingerprint]]);
  });

  it('fits a phone and has no serious accessibility violation on the account page, in both themes', async () => {
    const page = await pages.open({ width: 390, height: 844 });
    await logInThroughForm(page, { username: 'opencaller', password: PASSWORD });
    for (const theme of ['Light theme', 'Dark theme']) {
      await page.goto('/account');
      await page.getByRole('heading', { name: 'Login sessions' }).waitFor();
      await page.getByRole('cell', { name: 'phone', exact: true }).waitFor();
      await page.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: theme }).click();
    }
  });
});
