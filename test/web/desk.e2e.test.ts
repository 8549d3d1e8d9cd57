import { expect, it } from 'vitest';
import { createBaudClient } from '../../clients/typescript/src/index.js';
import {
  apiClientOf,
  axeViolations,
  describeInBrowser,
  logInThroughForm,
  readerForBlock,
} from '../support/reader-server.js';
import { totpCode } from '../support/totp-code.js';

const API = '/_baud/api/v1';
const PASSWORD = 'a long enough password';

/**
 * Issue 32: joining a board by approval in the web reader, and the sysop's desk (community.md
 * "Joining", "The sysop's desk"). The demo board asks approval (the default). Tests run in order
 * and share the board; at most 5 applications are accepted from one address in an hour, and all
 * of these come from 127.0.0.1: the file applies 5 times, and the sixth is refused.
 */
describeInBrowser('signing up and the sysop desk in the web reader', () => {
  const { fixture, pages } = readerForBlock();

  it('applies through the form: field errors beside the fields, a taken name, then the pending answer', async () => {
    const page = await pages.open();
    await page.goto('/login');
    await page.getByRole('link', { name: 'Sign up' }).click();
    await page.waitForURL('**/register');
    await page.getByText('A sysop reads each application').waitFor();

    await page.getByLabel('User name').fill('newcaller');
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByLabel('Password again').fill('shorter');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.locator('#register-passwordAgain-error').textContent()).resolves.toBe(
      'The two passwords differ.',
    );

    await page.getByLabel('Password again').fill('short');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.locator('#register-password-error').textContent()).resolves.toBe('must be at least 8 characters');
    await expect(page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');

    await page.getByLabel('User name').fill(fixture().demo.username.toUpperCase());
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.locator('#register-username-error').textContent()).resolves.toBe(
      'This name is taken (in some mix of capitals). Choose another.',
    );

    await page.getByLabel('User name').fill('newcaller');
    await page.getByLabel('E-mail (optional)').fill('newcaller@example.org');
    await page.getByLabel('A note for the sysop (optional)').fill('Dialled in to the old board in 1994.\nHello!');
    await expect(page.locator('#register-note-hint').textContent()).resolves.toContain('43 of 500 characters');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'Thank you, newcaller: your application waits for the sysop.',
    );

    // Logging in before the approval: the board's own reason, not a wrong-password message.
    await page.goto('/login');
    await page.getByLabel('User name').fill('newcaller');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/approv/i);
  });

  it('shows the sysop the queue with the notes, and approves one application and rejects another', async () => {
    const anonymous = createBaudClient({ baseUrl: fixture().baseUrl });
    for (const username of ['applicant1', 'applicant2']) {
      await anonymous.api.POST(`${API}/auth/register`, {
        body: { username, password: PASSWORD, note: `I am ${username}.` },
      });
    }
    const page = await pages.open();
    await logInThroughForm(page, fixture().sysop);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Desk' }).click();
    await page.waitForURL('**/admin');
    const queue = page.locator('ul.applications > li');
    await queue.filter({ hasText: 'applicant1' }).getByText('I am applicant1.').waitFor();
    await queue.filter({ hasText: 'newcaller' }).getByText('Dialled in to the old board in 1994.').waitFor();
    expect(await queue.count()).toBe(3);

    await page.getByRole('button', { name: 'Approve applicant1' }).click();
    await queue.filter({ hasText: 'applicant1' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Reject applicant2' }).click();
    await page.getByRole('button', { name: 'Yes, reject applicant2' }).click();
    await queue.filter({ hasText: 'applicant2' }).waitFor({ state: 'detached' });
    expect(await queue.count()).toBe(1);

    const sysop = await apiClientOf(fixture(), fixture().sysop);
    const listed = async (q: string) =>
      (await sysop.api.GET(`${API}/admin/users`, { params: { query: { q } } })).data?.data ?? [];
    await expect(listed('applicant1')).resolves.toMatchObject([{ status: 'active', groups: ['users'] }]);
    await expect(listed('applicant2')).resolves.toEqual([]);
    // The approved account now logs in.
    await apiClientOf(fixture(), { username: 'applicant1', password: PASSWORD });
  });

  it('filters the accounts, locks and unlocks one, and edits its groups with the refusal beside the field', async () => {
    const page = await pages.open();
    await logInThroughForm(page, fixture().sysop);
    await page.goto('/admin');
    await page.getByLabel('Status').selectOption('pending');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/admin?status=pending');
    const rows = page.locator('table.list tbody tr');
    await rows.filter({ hasText: 'newcaller' }).waitFor();
    expect(await rows.count()).toBe(1);

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Name starts with').fill('APPLI');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/admin?q=APPLI');
    const row = rows.filter({ hasText: 'applicant1' });
    await row.waitFor();
    expect(await rows.count()).toBe(1);

    await row.getByRole('button', { name: 'Lock', exact: true }).click();
    await row.getByRole('button', { name: 'Unlock' }).waitFor();
    await expect(row.locator('.status').textContent()).resolves.toBe('locked');
    // A locked account logs in no more: the board answers it like a wrong password.
    await expect(apiClientOf(fixture(), { username: 'applicant1', password: PASSWORD })).rejects.toMatchObject({
      status: 401,
    });
    await row.getByRole('button', { name: 'Unlock' }).click();
    await row.getByRole('button', { name: 'Lock', exact: true }).waitFor();
    await expect(row.locator('.status').textContent()).resolves.toBe('active');

    await row.getByRole('button', { name: 'Groups' }).click();
    // The form opens below the list with the caret in its field; Cancel closes it unchanged.
    await expect(
      page.getByLabel('Groups of applicant1').evaluate((input) => input === document.activeElement),
    ).resolves.toBe(true);
    await expect(row.getByRole('button', { name: 'Groups' }).getAttribute('aria-expanded')).resolves.toBe('true');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByLabel('Groups of applicant1').count()).toBe(0);
    await row.getByRole('button', { name: 'Groups' }).click();
    await page.getByLabel('Groups of applicant1').fill('users, bad!group');
    await page.getByRole('button', { name: 'Save groups' }).click();
    await expect(page.locator('.groups-form .field-error').textContent()).resolves.toBe(
      'group "bad!group" is not valid (1-32 of A-Z a-z 0-9 _ . -)',
    );
    await expect(page.getByLabel('Groups of applicant1').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByLabel('Groups of applicant1').fill('users, testers');
    await page.getByRole('button', { name: 'Save groups' }).click();
    await row.getByRole('cell', { name: 'testers, users' }).waitFor();

    // A sysop is never offered to lock themself (the API refuses it with 409).
    await page.getByLabel('Name starts with').fill(fixture().sysop.username);
    await page.getByRole('button', { name: 'Filter' }).click();
    await rows.filter({ hasText: fixture().sysop.username }).getByRole('button', { name: 'Groups' }).waitFor();
    expect(
      await rows
        .filter({ hasText: fixture().sysop.username })
        .getByRole('button', { name: 'Lock', exact: true })
        .count(),
    ).toBe(0);
  });

  it('pages the audit log newest first, older and back', async () => {
    const sysop = await apiClientOf(fixture(), fixture().sysop);
    const path = { params: { path: { username: 'applicant1' } } };
    for (let n = 0; n < 15; n++) {
      await sysop.api.POST(`${API}/admin/users/{username}/lock`, path);
      await sysop.api.POST(`${API}/admin/users/{username}/unlock`, path);
    }
    const page = await pages.open();
    await logInThroughForm(page, fixture().sysop);
    await page.goto('/admin');
    await page.getByRole('navigation', { name: 'Desk' }).getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL('**/admin/audit');
    const rows = page.locator('table.list tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(25);
    await expect(rows.first().textContent()).resolves.toContain('applicant1');
    const pager = page.getByRole('navigation', { name: 'Audit pages' });
    expect(await pager.getByRole('link', { name: /Newer/ }).count()).toBe(0);
    const firstPage = await rows.allTextContents();

    // The 30 lock and unlock entries fill the newest page; the approval is older.
    expect(firstPage.every((text) => /user\.(un)?locked/.test(text))).toBe(true);
    await pager.getByRole('link', { name: /Older/ }).click();
    await page.waitForURL(/\/admin\/audit\?cursor=/);
    await page.getByRole('cell', { name: 'user.approved' }).first().waitFor();
    expect(await rows.count()).toBeGreaterThan(5);

    await pager.getByRole('link', { name: /Newer/ }).click();
    await page.waitForURL(/\/admin\/audit$/);
    await expect.poll(() => rows.allTextContents()).toEqual(firstPage);
  });

  it("turns off a member's two-factor login for a lost phone", async () => {
    const member = await apiClientOf(fixture(), { username: 'applicant1', password: PASSWORD });
    // Paths the client's types do not list on this branch yet (web/src/account-api.ts says why).
    const post = member.api.POST as unknown as (path: string, init: object) => Promise<{ data?: unknown }>;
    const { data } = await post(`${API}/users/me/totp`, { body: { password: PASSWORD } });
    const { secret } = data as { secret: string };
    await post(`${API}/users/me/totp/confirm`, { body: { code: totpCode(secret, Date.now()) } });
    await expect(apiClientOf(fixture(), { username: 'applicant1', password: PASSWORD })).rejects.toMatchObject({
      status: 401,
      otpRequired: true,
    });

    const page = await pages.open();
    await logInThroughForm(page, fixture().sysop);
    await page.goto('/admin?q=applicant1');
    const row = page.locator('table.list tbody tr').filter({ hasText: 'applicant1' });
    await row.getByRole('cell', { name: 'on', exact: true }).waitFor();
    await row.getByRole('button', { name: 'Turn off two-factor login of applicant1' }).click();
    await row.getByRole('button', { name: 'Yes, turn it off' }).click();
    await row.getByRole('cell', { name: 'off', exact: true }).waitFor();
    expect(await row.getByRole('button', { name: /two-factor/ }).count()).toBe(0);
    await apiClientOf(fixture(), { username: 'applicant1', password: PASSWORD });
  });

  it('never shows a member the desk, and answers "not allowed" from the API when one goes there', async () => {
    const page = await pages.open();
    await page.goto('/admin');
    await page.getByText('as a sysop to use the desk').waitFor();

    await logInThroughForm(page, fixture().demo);
    expect(await page.getByRole('link', { name: 'Desk' }).count()).toBe(0);
    await page.goto('/admin');
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      "Not allowed: the desk is for the board's sysops.",
    );
    expect(await page.locator('table.list').count()).toBe(0);
    await page.goto('/admin/audit');
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      "Not allowed: the desk is for the board's sysops.",
    );
  });

  it('fits a phone and has no serious accessibility violation on the sign-up form and the desk', async () => {
    const page = await pages.open({ width: 390, height: 844 });
    const check = async (path: string) => {
      await page.goto(path);
      await page.locator('main h1').waitFor();
      await page.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
      expect(await axeViolations(page), path).toEqual([]);
    };
    await check('/register');
    await logInThroughForm(page, fixture().sysop);
    await check('/admin');
    await check('/admin/audit');
    await page.getByRole('button', { name: 'Light theme' }).click();
    await check('/admin');
  });

  it('says when an address has applied too often (429), and when to try again', async () => {
    // Three applications were accepted above; two more reach the limit of five an hour.
    const anonymous = createBaudClient({ baseUrl: fixture().baseUrl });
    for (const username of ['applicant4', 'applicant5']) {
      await anonymous.api.POST(`${API}/auth/register`, { body: { username, password: PASSWORD } });
    }
    const page = await pages.open();
    await page.goto('/register');
    await page.getByLabel('User name').fill('applicant6');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      /^Too many accounts were applied for from your address this hour\. Try again in (59|60) minutes\.$/,
    );
    // Nothing shows as done: the form stays, with what was typed.
    await expect(page.getByLabel('User name').inputValue()).resolves.toBe('applicant6');
  });
});

describeInBrowser('signing up on a closed board', () => {
  const { pages } = readerForBlock({ registration: 'closed' });

  it('offers no sign-up link and says the rule on the form’s address', async () => {
    const page = await pages.open();
    await page.goto('/login');
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    // The rule comes with the board's information: wait until it is there before counting links.
    await page.waitForFunction(() => document.querySelector('footer')?.textContent?.includes('baud 0'));
    expect(await page.getByRole('link', { name: 'Sign up' }).count()).toBe(0);
    await page.goto('/register');
    await page.getByText('This board takes no new members').waitFor();
    expect(await page.getByRole('button', { name: /Apply|Create/ }).count()).toBe(0);
  });
});
