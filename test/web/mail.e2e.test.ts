import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type BaudClient, createBaudClient } from '../../clients/typescript/src/index.js';
import {
  axeViolations,
  describeInBrowser,
  logInThroughForm,
  type ReaderFixture,
  startReaderFixture,
} from '../support/reader-server.js';

const API = '/_baud/api/v1';

/**
 * Issue 33 item 5: the reader's mailbox in headless Chromium against a real server holding the
 * demo board, between its two members (the demo user and the sysop), each in their own browser
 * context. Tests run in order and share the board: each picks up the mail the last one left.
 */
describeInBrowser('the mailbox of the web reader', () => {
  let fixture: ReaderFixture;
  let pages: Page[] = [];
  /** Everything the browser refused under the Content-Security-Policy, and every script error. */
  let pageErrors: string[] = [];

  beforeAll(async () => {
    fixture = await startReaderFixture();
  });
  afterAll(() => fixture?.close());
  afterEach(async () => {
    for (const page of pages) await page.context().close();
    pages = [];
    const errors = pageErrors;
    pageErrors = [];
    expect(errors).toEqual([]);
  });

  async function open(options?: { width?: number; height?: number }): Promise<Page> {
    const { page } = await fixture.newPage(options);
    page.on('pageerror', (error) => pageErrors.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) pageErrors.push(`CSP: ${message.text()}`);
    });
    pages.push(page);
    return page;
  }

  async function openAs(credential: ReaderFixture['demo'], options?: { width?: number; height?: number }) {
    const page = await open(options);
    await logInThroughForm(page, credential);
    return page;
  }

  async function apiClient(credential: ReaderFixture['demo']): Promise<BaudClient> {
    const client = createBaudClient({ baseUrl: fixture.baseUrl });
    await client.login(credential.username, credential.password);
    return client;
  }

  /** The header's Mail link: its accessible name carries the unread count ("Mail 2 unread"). */
  const mailLink = (page: Page) => page.getByRole('banner').getByRole('link', { name: /^Mail/ });

  async function expectMailLink(page: Page, name: string): Promise<void> {
    await page.getByRole('banner').getByRole('link', { name, exact: true }).waitFor({ timeout: 5000 });
  }

  /** Fills the compose form and sends it. */
  async function send(page: Page, mail: { to?: string; subject?: string; body?: string }): Promise<void> {
    if (mail.to !== undefined) await page.getByLabel('To').fill(mail.to);
    if (mail.subject !== undefined) await page.getByLabel('Subject').fill(mail.subject);
    if (mail.body !== undefined) await page.getByLabel('Message').fill(mail.body);
    await page.getByRole('button', { name: 'Send' }).click();
  }

  let firstMailUuid = '';

  it("sends from one member's reader and the other's badge goes up live, without a reload", async () => {
    const sysop = await openAs(fixture.sysop);
    await expectMailLink(sysop, 'Mail');
    const demo = await openAs(fixture.demo);
    await demo.goto('/mail');
    await demo.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await demo.getByText('Your inbox is empty.').waitFor();
    await demo.getByRole('link', { name: 'Write a mail' }).click();
    await demo.waitForURL('**/mail/compose');
    await send(demo, { to: 'SYSOP', subject: 'Your binkd config', body: 'Your node list is out of date.\nFix it?' });
    await demo.getByRole('heading', { level: 1, name: 'Your binkd config' }).waitFor();
    firstMailUuid = demo.url().split('/').pop() ?? '';
    expect(firstMailUuid).toMatch(/^[0-9a-f-]{36}$/);

    // The sysop's page was never reloaded: the event stream's mail.received moved the count.
    await expectMailLink(sysop, 'Mail 1 unread');
    await expect(mailLink(sysop).locator('.badge').textContent()).resolves.toBe('1');

    // The sender's copy is in the sent box, read (only an inbox has anything new).
    await demo.getByRole('link', { name: 'Sent', exact: true }).click();
    await demo.getByRole('heading', { level: 1, name: 'Sent mail' }).waitFor();
    const sentRow = demo.getByRole('row', { name: /Your binkd config/ });
    await expect(sentRow.getByRole('cell').first().textContent()).resolves.toBe(fixture.sysop.username);
    expect(await sentRow.getByText('new').count()).toBe(0);
  });

  it('shows the inbox newest first with unread mail marked, and marks a mail read when it is opened', async () => {
    const sysop = await openAs(fixture.sysop);
    await mailLink(sysop).click();
    await sysop.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    const row = sysop.getByRole('row', { name: /Your binkd config/ });
    await expect(row.getAttribute('class')).resolves.toBe('unread');
    await row.getByText('new', { exact: true }).waitFor();
    await expect(row.getByRole('cell').first().textContent()).resolves.toBe(fixture.demo.username);

    // A mail coming while the inbox is open joins its first page at the top.
    const demoApi = await apiClient(fixture.demo);
    await demoApi.api.POST(`${API}/mail`, { body: { to: 'sysop', subject: 'And the nodelist', body: 'Second.' } });
    await sysop.getByRole('row', { name: /And the nodelist/ }).waitFor({ timeout: 5000 });
    const subjects = await sysop.locator('table.mail-list tbody tr td:nth-child(2) a').allTextContents();
    expect(subjects).toEqual(['And the nodelist', 'Your binkd config']);
    await expectMailLink(sysop, 'Mail 2 unread');

    await sysop.getByRole('link', { name: 'Unread only (2)' }).click();
    await sysop.waitForURL('**/mail?unread=1');
    await row.getByRole('link', { name: 'Your binkd config' }).click();
    await sysop.getByRole('heading', { level: 1, name: 'Your binkd config' }).waitFor();
    await expect(sysop.locator('pre.ansi').textContent()).resolves.toContain('Your node list is out of date.');
    // Opening it sent PATCH { read: true }; the header followed.
    await expectMailLink(sysop, 'Mail 1 unread');
    const sysopApi = await apiClient(fixture.sysop);
    const opened = await sysopApi.api.GET(`${API}/mail/{uuid}`, { params: { path: { uuid: firstMailUuid } } });
    expect(opened.data?.read).toBe(true);

    await sysop.getByRole('link', { name: 'Inbox', exact: true }).click();
    await sysop.getByRole('link', { name: 'Unread only (1)' }).click();
    await sysop.getByRole('row', { name: /And the nodelist/ }).waitFor();
    expect(await sysop.getByRole('row', { name: /Your binkd config/ }).count()).toBe(0);
  });

  it('marks a mail unread again', async () => {
    const sysop = await openAs(fixture.sysop);
    await expectMailLink(sysop, 'Mail 1 unread');
    await sysop.goto(`/mail/${firstMailUuid}`);
    await sysop.getByRole('button', { name: 'Mark unread' }).click();
    await sysop.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await expectMailLink(sysop, 'Mail 2 unread');
    await sysop
      .getByRole('row', { name: /Your binkd config/ })
      .getByText('new', { exact: true })
      .waitFor();
  });

  it('replies with the quoted text, to the sender, and the reply reaches their badge live', async () => {
    const demo = await openAs(fixture.demo);
    await expectMailLink(demo, 'Mail');
    const sysop = await openAs(fixture.sysop);
    await sysop.goto(`/mail/${firstMailUuid}`);
    await sysop.getByRole('link', { name: 'Reply' }).click();
    await sysop.waitForURL(`**/mail/${firstMailUuid}/reply`);
    await sysop.getByRole('heading', { level: 1, name: `Reply to ${fixture.demo.username}` }).waitFor();
    await expect(sysop.getByLabel('To').inputValue()).resolves.toBe(fixture.demo.username);
    await expect(sysop.getByLabel('Subject').inputValue()).resolves.toBe('Re: Your binkd config');
    await expect(sysop.getByLabel('Message').inputValue()).resolves.toBe(
      `${fixture.demo.username} wrote:\n D> Your node list is out of date.\n D> Fix it?\n\n`,
    );
    await sysop.getByLabel('Message').press('Control+End');
    await sysop.getByLabel('Message').pressSequentially('Fixed, thanks.');
    await sysop.getByRole('button', { name: 'Send' }).click();
    await sysop.getByRole('heading', { level: 1, name: 'Re: Your binkd config' }).waitFor();
    const replyUuid = sysop.url().split('/').pop() ?? '';
    await expect(sysop.getByRole('link', { name: 'the mail it answers' }).getAttribute('href')).resolves.toBe(
      `/mail/${firstMailUuid}`,
    );

    await expectMailLink(demo, 'Mail 1 unread');
    const demoApi = await apiClient(fixture.demo);
    const reply = await demoApi.api.GET(`${API}/mail/{uuid}`, { params: { path: { uuid: replyUuid } } });
    expect(reply.data).toMatchObject({
      from: fixture.sysop.username,
      to: fixture.demo.username,
      replyToUuid: firstMailUuid,
      read: false,
    });
    expect(reply.data?.body).toBe(
      `${fixture.demo.username} wrote:\n D> Your node list is out of date.\n D> Fix it?\n\nFixed, thanks.`,
    );

    await sysop.getByRole('link', { name: 'Sent', exact: true }).click();
    await sysop.getByRole('row', { name: /Re: Your binkd config/ }).waitFor();
  });

  it('finds mail in the own mailbox only, hits marked', async () => {
    const demo = await openAs(fixture.demo);
    await demo.goto('/mail');
    await demo.getByRole('link', { name: 'Search mail' }).click();
    await demo.getByLabel('Words').fill('thanks');
    await demo.getByRole('button', { name: 'Search' }).click();
    await demo.waitForURL('**/mail/search?q=thanks');
    await demo.getByRole('link', { name: 'Re: Your binkd config' }).waitFor();
    await expect(demo.locator('mark').allTextContents()).resolves.toEqual(['thanks']);
    // A word of a public message is no hit here: the search covers mail only.
    await demo.goto('/mail/search?q=welcome');
    await demo.getByText('No mail matches.').waitFor();
  });

  it('deletes a mail from the own box only, after asking; the other party keeps theirs', async () => {
    const sysop = await openAs(fixture.sysop);
    await sysop.goto(`/mail/${firstMailUuid}`);
    await sysop.getByRole('button', { name: 'Delete' }).click();
    await sysop
      .getByRole('group', { name: `Delete this mail from your mailbox? ${fixture.demo.username} keeps their copy.` })
      .waitFor();
    await sysop.getByRole('button', { name: 'Keep it' }).click();
    await sysop.getByRole('button', { name: 'Delete' }).click();
    await sysop.getByRole('button', { name: 'Yes, delete' }).click();
    await sysop.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await sysop.getByRole('row', { name: /And the nodelist/ }).waitFor();
    expect(await sysop.getByRole('row', { name: /Your binkd config/ }).count()).toBe(0);
    // It was unread (marked so above): the count fell with it.
    await expectMailLink(sysop, 'Mail 1 unread');

    await sysop.goto(`/mail/${firstMailUuid}`);
    await sysop.getByText('There is nothing here: it was deleted, or never existed.').waitFor();
    const demoApi = await apiClient(fixture.demo);
    const kept = await demoApi.api.GET(`${API}/mail/{uuid}`, { params: { path: { uuid: firstMailUuid } } });
    expect(kept.data?.subject).toBe('Your binkd config');
  });

  it('refuses an unknown recipient and a bad subject beside their fields, keeping what was typed', async () => {
    const demo = await openAs(fixture.demo);
    await demo.goto('/mail/compose');
    await send(demo, { to: 'nobody_here', subject: 'Hello', body: 'Anyone?' });
    const toError = demo.locator('#mail-to-error');
    await expect(toError.textContent()).resolves.toBe('No user can receive mail as "nobody_here".');
    await expect(demo.getByLabel('To').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(demo.getByLabel('To').getAttribute('aria-describedby')).resolves.toBe('mail-to-hint mail-to-error');
    await expect(demo.getByLabel('Message').inputValue()).resolves.toBe('Anyone?');

    await send(demo, { to: fixture.sysop.username, subject: '   ' });
    await demo.locator('#mail-subject-error').waitFor();
    expect(await demo.locator('#mail-to-error').count()).toBe(0);
    await expect(demo.getByLabel('Subject').getAttribute('aria-invalid')).resolves.toBe('true');
  });

  it("blocks from a profile: the blocked member's mail is refused with the board's words; unblocking on the list lets it through", async () => {
    const sysop = await openAs(fixture.sysop);
    await sysop.goto(`/users/${fixture.demo.username}`);
    await sysop.getByRole('link', { name: 'Send a mail' }).waitFor();
    await expect(sysop.getByRole('link', { name: 'Send a mail' }).getAttribute('href')).resolves.toBe(
      `/mail/compose?to=${fixture.demo.username}`,
    );
    await sysop.getByRole('button', { name: `Block ${fixture.demo.username}` }).click();
    await sysop.getByRole('button', { name: `Unblock ${fixture.demo.username}` }).waitFor();
    await sysop.getByText(`You have blocked ${fixture.demo.username}: their new mail is refused.`).waitFor();

    const demo = await openAs(fixture.demo);
    await demo.goto(`/users/${fixture.sysop.username}`);
    await demo.getByRole('link', { name: 'Send a mail' }).click();
    await demo.waitForURL(`**/mail/compose?to=${fixture.sysop.username}`);
    await expect(demo.getByLabel('To').inputValue()).resolves.toBe(fixture.sysop.username);
    await send(demo, { subject: 'Let me in', body: 'Please.' });
    await expect(demo.locator('#mail-to-error').textContent()).resolves.toBe(
      `${fixture.sysop.username} does not take mail from you.`,
    );

    // The block list on its page: the name, and the way to lift it.
    await sysop.goto('/mail/blocked');
    const entry = sysop.getByRole('list', { name: 'Blocked users' }).getByRole('listitem');
    await expect(entry.getByRole('link').textContent()).resolves.toBe(fixture.demo.username);
    // Blocking oneself is refused beside the name.
    await sysop.getByLabel('Block a member').fill(fixture.sysop.username);
    await sysop.getByRole('button', { name: 'Block', exact: true }).click();
    await expect(sysop.locator('#block-username-error').textContent()).resolves.toBe('You cannot block yourself.');
    await sysop.getByRole('button', { name: `Unblock ${fixture.demo.username}` }).click();
    await sysop.getByText('You have blocked nobody.').waitFor();

    await demo.getByRole('button', { name: 'Send' }).click();
    await demo.getByRole('heading', { level: 1, name: 'Let me in' }).waitFor();
  });

  it('fits a 390-pixel phone screen: inbox, a mail, the compose form and the block list', async () => {
    const sysop = await openAs(fixture.sysop, { width: 390, height: 844 });
    const inbox = await (await apiClient(fixture.sysop)).api.GET(`${API}/mail`, {});
    const uuid = inbox.data?.data[0]?.uuid ?? '';
    for (const path of [
      '/mail',
      '/mail?box=sent',
      `/mail/${uuid}`,
      '/mail/compose',
      '/mail/blocked',
      '/mail/search?q=thanks',
    ]) {
      await sysop.goto(path);
      await sysop.locator('main h1').waitFor();
      // The live event stream never ends, so "network idle" never comes: wait for the lists to fill.
      await sysop.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
      const overflow = await sysop.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
  });

  it('has no serious or critical accessibility violation in the mailbox, in both themes (axe-core)', async () => {
    const sysop = await openAs(fixture.sysop);
    const inbox = await (await apiClient(fixture.sysop)).api.GET(`${API}/mail`, {});
    const uuid = inbox.data?.data[0]?.uuid ?? '';
    const views: Array<[string, () => Promise<unknown>]> = [
      ['/mail', () => sysop.locator('table.mail-list').waitFor()],
      ['/mail?box=sent', () => sysop.locator('table.mail-list').waitFor()],
      [`/mail/${uuid}`, () => sysop.locator('pre.ansi').waitFor()],
      [`/mail/${uuid}/reply`, () => sysop.getByLabel('Message').waitFor()],
      ['/mail/search?q=thanks', () => sysop.locator('mark').first().waitFor()],
      ['/mail/blocked', () => sysop.getByText('You have blocked nobody.').waitFor()],
      [`/users/${fixture.demo.username}`, () => sysop.getByRole('button', { name: /Block/ }).waitFor()],
    ];
    for (const theme of ['Light theme', 'Dark theme']) {
      for (const [path, ready] of views) {
        await sysop.goto(path);
        await ready();
        const violations = await axeViolations(sysop);
        expect(violations, `${path} before switching to ${theme}`).toEqual([]);
      }
      await sysop.getByRole('button', { name: theme }).click();
    }
    // A refused send, its message beside the field, is axe-clean too.
    await sysop.goto('/mail/compose');
    await send(sysop, { to: 'nobody_here', subject: 'x', body: 'y' });
    await sysop.locator('#mail-to-error').waitFor();
    expect(await axeViolations(sysop)).toEqual([]);
  });

  it('says how long to wait when the sending window is full (429)', async () => {
    const demoApi = await apiClient(fixture.demo);
    // Fill the demo user's window of 30 mails per 10 minutes through the API: at most 30 more go through.
    let refused: unknown = null;
    for (let attempt = 0; attempt <= 30 && refused === null; attempt += 1) {
      refused = await demoApi.api
        .POST(`${API}/mail`, { body: { to: fixture.sysop.username, subject: 'Filler', body: 'x' } })
        .then(
          () => null,
          (error: unknown) => error,
        );
    }
    expect(refused).toMatchObject({ status: 429 });
    const demo = await openAs(fixture.demo);
    await demo.goto('/mail/compose');
    await send(demo, { to: fixture.sysop.username, subject: 'One more', body: 'Please.' });
    const alert = demo.locator('form.compose .problem');
    await expect(alert.textContent()).resolves.toMatch(/Try again in \d+ s\.$/);
    await expect(demo.getByLabel('Subject').inputValue()).resolves.toBe('One more');
  });
  it('pages the inbox older and newer, newest first, each page its own mails', async () => {
    const sysopApi = await apiClient(fixture.sysop);
    const all = [];
    let cursor: string | null = null;
    do {
      const page: { data: { subject: string }[]; meta: { nextCursor: string | null } } = (
        await sysopApi.api.GET(`${API}/mail`, { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } })
      ).data ?? { data: [], meta: { nextCursor: null } };
      all.push(...page.data.map((mail) => mail.subject));
      cursor = page.meta.nextCursor;
    } while (cursor !== null);
    // The last test filled the window: more than one page of 25.
    expect(all.length).toBeGreaterThan(25);

    const sysop = await openAs(fixture.sysop);
    await sysop.goto('/mail');
    const subjects = () => sysop.locator('table.mail-list tbody tr td:nth-child(2) a').allTextContents();
    await sysop.locator('table.mail-list').waitFor();
    await expect.poll(subjects).toEqual(all.slice(0, 25));
    expect(await sysop.getByRole('link', { name: 'Newer →' }).count()).toBe(0);
    await sysop.getByRole('link', { name: '← Older' }).click();
    await sysop.waitForURL(/\/mail\?cursor=/);
    await sysop.getByRole('link', { name: 'Newer →' }).waitFor();
    await expect.poll(subjects).toEqual(all.slice(25, 50));
    await sysop.getByRole('link', { name: 'Newer →' }).click();
    await sysop.waitForURL((url) => url.pathname === '/mail' && url.search === '');
    await sysop.getByRole('link', { name: '← Older' }).waitFor();
    await expect.poll(subjects).toEqual(all.slice(0, 25));
  });
  it('keeps the newest unread count when an older answer for it arrives last', async () => {
    const demo = await openAs(fixture.demo);
    const sysopApi = await apiClient(fixture.sysop);
    const before = (await (await apiClient(fixture.demo)).api.GET(`${API}/users/me`, {})).data?.unreadMail ?? 0;
    await expectMailLink(demo, before === 0 ? 'Mail' : `Mail ${before} unread`);

    // The page's next own-profile load (the one the first mail starts) gets its answer from the
    // board at once, but the page receives it only when released: after the second mail's load.
    let releaseFirst = () => {};
    const released = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let isFirst = true;
    let answeredFirst = () => {};
    const firstLoad = new Promise<void>((resolve) => {
      answeredFirst = resolve;
    });
    const ownProfile = (url: URL) => url.pathname === `${API}/users/me`;
    await demo.route(ownProfile, async (route) => {
      if (!isFirst) return route.continue();
      isFirst = false;
      const answer = await route.fetch();
      answeredFirst();
      await released;
      await route.fulfill({ response: answer });
    });
    const send = (subject: string) =>
      sysopApi.api.POST(`${API}/mail`, { body: { to: fixture.demo.username, subject, body: 'Counting.' } });
    await send('First of two');
    await firstLoad;
    await send('Second of two');
    await expectMailLink(demo, `Mail ${before + 2} unread`);

    const firstAnswer = demo.waitForResponse((response) => ownProfile(new URL(response.url())));
    releaseFirst();
    const stale = await (await firstAnswer).json();
    expect(stale.unreadMail).toBe(before + 1);
    // A round trip of the page's own after the stale answer came: it has been handled by then.
    await demo.evaluate(() => fetch('/').then((response) => response.text()));
    await expectMailLink(demo, `Mail ${before + 2} unread`);
  });
});
