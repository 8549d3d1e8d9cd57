import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import {
  apiClientOf,
  axeViolations,
  describeInBrowser,
  logInThroughForm,
  readerForBlock,
} from '../support/reader-server.js';

const API = '/_baud/api/v1';

/**
 * Issue 20: the web reader in headless Chromium against a real server holding the demo board
 * (`npm start`'s content). Tests run in order and share the board; each opens its own browser
 * context (own cookies), as a separate visitor would.
 */
describeInBrowser('the web reader in a browser', () => {
  const { fixture, pages } = readerForBlock();

  const open = pages.open;
  const nodeClient = (credential = fixture().sysop) => apiClientOf(fixture(), credential);

  it('shows a guest the board, its public conference, messages and files, and nothing of the members', async () => {
    const page = await open();
    await page.goto('/');
    await page.getByRole('heading', { level: 1, name: 'baud demo board' }).waitFor();
    await page.getByRole('link', { name: 'Public Square' }).waitFor();
    expect(await page.getByRole('link', { name: 'Members Lounge' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Unread' }).count()).toBe(0);

    await page.getByRole('link', { name: 'General' }).click();
    await page.waitForURL('**/areas/general');
    expect(await page.getByRole('link', { name: 'New message' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Welcome to baud', exact: true }).click();
    await page.waitForURL(/\/messages\/[0-9a-f-]{36}$/);
    await expect(page.locator('pre.ansi').textContent()).resolves.toContain('Hello and welcome!');
    expect(await page.getByRole('button', { name: 'Reply' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByRole('link', { name: 'Public Uploads' }).click();
    await page.getByRole('link', { name: 'WELCOME.TXT' }).waitFor();
    expect(await page.getByRole('link', { name: "Members' Files" }).count()).toBe(0);

    // Every address is its own page: a reload shows the same thing.
    await page.goto('/areas/lounge');
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Log in to see this\.$/);
  });

  it('logs in through the form, keeps the login across a reload without storing the token, and logs out', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().demo);
    await page.getByRole('link', { name: 'Members Lounge' }).waitFor();
    // Unread counts per area, each a link to that area's unread messages.
    const unread = page.getByRole('link', { name: /^\d+ unread in General$/ });
    await expect(unread.getAttribute('href')).resolves.toBe('/areas/general?unread=1');
    await page.getByRole('link', { name: 'Members Lounge' }).click();
    await page.waitForURL('**/conferences/members');
    await page.getByRole('heading', { level: 1, name: 'Members Lounge' }).waitFor();
    await page.getByRole('link', { name: 'Retro Computing', exact: true }).waitFor();
    await page.reload();
    await page.getByRole('banner').getByRole('link', { name: fixture().demo.username, exact: true }).waitFor();
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    expect(stored).not.toContain('eyJ');
    const cookies = await page.context().cookies();
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly])).toEqual([['baud_refresh', true]]);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Log in' }).waitFor();
    await page.reload();
    await page.getByRole('banner').getByRole('link', { name: 'Log in' }).waitFor();
    await page.getByRole('link', { name: 'Public Square' }).waitFor();
    expect(await page.getByRole('link', { name: 'Members Lounge' }).count()).toBe(0);
  });

  it('says what went wrong on a refused login, beside the form', async () => {
    const page = await open();
    await page.goto('/login');
    await page.getByLabel('User name').fill(fixture().demo.username);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('The username or password is incorrect.');
  });

  it('renders ANSI art in colour with CP437 blocks kept, and as plain text on request', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().demo);
    await page.goto('/areas/retro');
    await page.getByRole('link', { name: 'ANSI art: the baud logo' }).click();
    const art = page.locator('pre.ansi');
    await art.waitFor();
    const colourOf = (text: string) =>
      art
        .locator('span', { hasText: text })
        .last()
        .evaluate((span) => {
          const style = getComputedStyle(span);
          return [style.color, style.backgroundColor];
        });
    await expect(colourOf('dial in')).resolves.toEqual(['rgb(255, 255, 255)', 'rgb(0, 0, 170)']);
    await expect(colourOf('░▒▓')).resolves.toEqual(['rgb(0, 170, 0)', 'rgba(0, 0, 0, 0)']);
    await expect(colourOf('pipe codes too')).resolves.toEqual(['rgb(255, 85, 85)', 'rgba(0, 0, 0, 0)']);
    await expect(colourOf('╔═')).resolves.toEqual(['rgb(85, 255, 255)', 'rgba(0, 0, 0, 0)']);
    const text = await art.textContent();
    expect(text).toContain('╔══════════════════════════╗');
    expect(text).toContain('█▀▀▄ ▄▀▀▄ █  █ █▀▀▄');
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('|12');
    // 80 columns are kept: the art's block is as wide as 80 characters of its font.
    const widths = await art.evaluate((pre) => {
      const probe = document.createElement('span');
      probe.textContent = 'x'.repeat(80);
      pre.append(probe);
      const width = probe.getBoundingClientRect().width;
      probe.remove();
      return { probe: width, pre: pre.clientWidth };
    });
    expect(widths.pre).toBeGreaterThanOrEqual(Math.floor(widths.probe));

    await page.getByRole('button', { name: 'Plain text' }).click();
    expect(await art.locator('span.fg11, span.fg14').count()).toBe(0);
    await expect(art.textContent()).resolves.toContain('dial in');
    await page.getByRole('button', { name: 'Colour' }).click();
    await expect(colourOf('dial in')).resolves.toEqual(['rgb(255, 255, 255)', 'rgb(0, 0, 170)']);
  });

  it('shows a thread as an indented tree whose branches fold', async () => {
    const page = await open();
    await page.goto('/areas/general');
    await page.getByRole('link', { name: 'Welcome to baud', exact: true }).click();
    await page.getByRole('link', { name: /^Thread \(1 reply\)$/ }).click();
    const tree = page.getByRole('list', { name: 'Messages of the thread' });
    await tree.getByRole('link', { name: 'Re: Welcome to baud' }).waitFor();
    await expect(tree.locator('li').nth(1).getAttribute('class')).resolves.toContain('depth-1');
    const fold = tree.getByRole('button', { name: /^Collapse 1 reply to Welcome to baud$/ });
    await expect(fold.getAttribute('aria-expanded')).resolves.toBe('true');
    await fold.click();
    expect(await tree.getByRole('link', { name: 'Re: Welcome to baud' }).count()).toBe(0);
    await tree.getByRole('button', { name: /^Expand 1 reply/ }).click();
    await tree.getByRole('link', { name: 'Re: Welcome to baud' }).waitFor();
  });

  it('searches with the query grammar, highlights the hits and keeps the search in the address', async () => {
    const page = await open();
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Words').fill('welcome -thanks');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/search\?q=welcome\+-thanks/);
    const results = page.locator('ol.results > li');
    await results.first().waitFor();
    expect(await results.count()).toBe(1);
    await expect(results.first().getByRole('link').textContent()).resolves.toBe('Welcome to baud');
    await expect(results.first().locator('mark').first().textContent()).resolves.toMatch(/^welcome$/i);

    // Only an exclusion: nothing to search for, which the API refuses with a 400 on q.
    await page.getByLabel('Words').fill('-welcome');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect(page.locator('#search-q-error').textContent()).resolves.toBe('q has no words to search for.');
  });

  it('highlights only real hits, never guillemets a poster wrote', async () => {
    const client = await nodeClient();
    await client.api.POST(`${API}/messages/areas/{areaTag}/messages`, {
      params: { path: { areaTag: 'general' } },
      body: { subject: 'Forged', message: 'Click «here» now» for a free forgedmarker' },
    });
    const page = await open();
    await page.goto('/search?q=forgedmarker');
    const snippet = page.locator('ol.results > li p.snippet');
    await snippet.locator('mark').first().waitFor();
    await expect(snippet.locator('mark').allTextContents()).resolves.toEqual(['forgedmarker']);
    await expect(snippet.textContent()).resolves.toBe('Click ‹here› now› for a free forgedmarker');
  });

  it('walks the new-scan with n, moving the pointer as messages are read, until nothing is unread', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().sysop);
    const client = await nodeClient(fixture().sysop);
    const unreadBefore = (await client.api.GET(`${API}/messages/unread`)).data?.data ?? [];
    const total = unreadBefore.reduce((sum, area) => sum + area.unreadCount, 0);
    expect(total).toBeGreaterThan(3);

    await page.goto('/unread');
    await page.getByRole('button', { name: 'Read the next unread message' }).click();
    const seen: string[] = [];
    for (let step = 0; step < total; step++) {
      await page.waitForURL(/\/messages\//);
      await page.locator('article.message h1').waitFor();
      seen.push(page.url());
      await page.waitForFunction((known) => location.href === known, page.url());
      // Wait until the pointer moved past this message before asking for the next.
      await expect
        .poll(async () =>
          ((await client.api.GET(`${API}/messages/unread`)).data?.data ?? []).reduce((s, a) => s + a.unreadCount, 0),
        )
        .toBe(total - step - 1);
      await page.keyboard.press('n');
      if (step < total - 1) await page.waitForURL((url) => url.href !== seen[seen.length - 1]);
    }
    await page.waitForURL('**/unread');
    await page.getByText('You have read everything.').waitFor();
    expect(new Set(seen).size).toBe(total);
  });

  it('shows a message posted by another client while the area is open, without a reload', async () => {
    const page = await open();
    await page.goto('/areas/general');
    await page.getByRole('link', { name: 'Welcome to baud', exact: true }).waitFor();
    const client = await nodeClient();
    await client.api.POST(`${API}/messages/areas/{areaTag}/messages`, {
      params: { path: { areaTag: 'general' } },
      body: { subject: 'Live from another client', message: 'Hello, stream.' },
    });
    await page.getByRole('link', { name: 'Live from another client' }).waitFor({ timeout: 5000 });
  });

  it('posts, replies with a quote, refuses a bad field beside it, and deletes its own message', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().demo);
    await page.goto('/areas/general');
    await page.getByRole('link', { name: 'New message' }).click();
    await page.getByLabel('To').fill(fixture().sysop.username);
    await page.getByLabel('Subject').fill('   ');
    await page.getByLabel('Message').fill('A body.');
    await page.getByRole('button', { name: 'Post' }).click();
    const subjectError = page.locator('#compose-subject-error');
    await subjectError.waitFor();
    await expect(page.getByLabel('Subject').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Subject').getAttribute('aria-describedby')).resolves.toBe('compose-subject-error');
    // The refusal re-renders the form: what the user typed stays.
    await expect(page.getByLabel('To').inputValue()).resolves.toBe(fixture().sysop.username);
    await expect(page.getByLabel('Message').inputValue()).resolves.toBe('A body.');

    await page.getByLabel('Subject').fill('Modems of the nineties');
    await page.getByLabel('Message').fill('My first modem was a 2400 baud one.');
    await page.getByRole('button', { name: 'Post' }).click();
    await page.getByRole('heading', { name: 'Modems of the nineties' }).waitFor();

    await page.getByRole('link', { name: 'Reply' }).click();
    await expect(page.getByLabel('Subject').inputValue()).resolves.toBe('Re: Modems of the nineties');
    await expect(page.getByLabel('To').inputValue()).resolves.toBe(fixture().demo.username);
    await expect(page.getByLabel('Message').inputValue()).resolves.toContain('D> My first modem was a 2400 baud one.');
    await page.getByLabel('Message').press('End');
    await page.getByLabel('Message').pressSequentially('Mine was 14400.');
    await page.getByRole('button', { name: 'Post' }).click();
    await page.getByRole('heading', { name: 'Re: Modems of the nineties' }).waitFor();
    const replyUrl = page.url();
    const uuid = replyUrl.split('/').pop() ?? '';

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForURL('**/areas/general');
    const client = await nodeClient(fixture().demo);
    await expect(client.api.GET(`${API}/messages/{uuid}`, { params: { path: { uuid } } })).rejects.toMatchObject({
      status: 404,
    });
    // Not their own: the sysop's welcome offers no Delete to the demo user.
    await page.getByRole('link', { name: 'Welcome to baud', exact: true }).click();
    await page.getByRole('link', { name: 'Reply', exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
  });

  it('uploads with a progress bar, explains a duplicate, and downloads the file byte for byte', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().demo);
    await page.goto('/files/areas/public_uploads');
    const content = Buffer.alloc(3 * 1024 * 1024, 'baud ');
    // A slow line, so the progress bar has something to show.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 1024 * 1024,
    });
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'BIG.TXT', mimeType: 'text/plain', buffer: content });
    await page.getByLabel('Description (optional)').fill('Three megabytes of baud');
    await page.getByRole('button', { name: 'Upload' }).click();
    const progress = page.locator('progress');
    await progress.waitFor();
    const seen = new Set<number>();
    while ((await progress.count()) > 0) {
      const value = await progress.getAttribute('value').catch(() => null);
      if (value !== null) seen.add(Number(value));
      await page.waitForTimeout(100);
    }
    expect([...seen].some((value) => value > 0 && value < 100)).toBe(true);
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await page.getByRole('status').getByRole('link', { name: 'BIG.TXT' }).waitFor();

    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'AGAIN.TXT', mimeType: 'text/plain', buffer: content });
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toContain(
      'already holds a file with the same content',
    );

    await page.getByRole('table').getByRole('link', { name: 'BIG.TXT' }).click();
    await page.getByRole('heading', { name: 'BIG.TXT' }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /^Download/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('BIG.TXT');
    expect(readFileSync(await download.path()).equals(content)).toBe(true);
  });

  it('edits the own profile within the field limits, and shows another user the public part', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().demo);
    await page.goto('/profile');
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    await page.getByLabel(/^Web address/).fill('ftp://example.org');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#profile-webAddress-error').waitFor();
    await page.getByLabel(/^Web address/).fill('https://example.org/demo');
    await page.getByLabel(/^Location/).fill('Stockholm');
    await expect(page.getByLabel(/^Location/).getAttribute('maxlength')).resolves.toBe('64');
    await page.getByRole('button', { name: 'Save' }).click();
    // Wait for the answer: counting right after the click raced the save (failed once in CI).
    await page.getByRole('status').filter({ hasText: 'Saved' }).first().waitFor();

    const visitor = await open();
    await logInThroughForm(visitor, fixture().sysop);
    await visitor.goto(`/users/${fixture().demo.username}`);
    await visitor.getByText('Stockholm').waitFor();
  });

  it('fits a 390-pixel phone screen: no sideways scrolling of the page, art scrolls in its own box', async () => {
    const page = await open({ width: 390, height: 844 });
    await logInThroughForm(page, fixture().demo);
    for (const path of ['/', '/areas/general', '/files/areas/public_uploads', '/search?q=welcome']) {
      await page.goto(path);
      await page.locator('main h1').waitFor();
      // The live event stream never ends, so "network idle" never comes: wait for the lists to fill.
      await page.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await page.goto('/areas/retro');
    await page.getByRole('link', { name: 'ANSI art: the baud logo' }).click();
    await page.locator('pre.ansi').waitFor();
    await expect(
      page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).resolves.toBeLessThanOrEqual(0);
    await expect(page.locator('pre.ansi').evaluate((pre) => getComputedStyle(pre).overflowX)).resolves.toBe('auto');
  });

  it('has no serious or critical accessibility violation in the main views, in both themes (axe-core)', async () => {
    const page = await open();
    await logInThroughForm(page, fixture().demo);
    const views: Array<[string, () => Promise<unknown>]> = [
      ['/', () => page.getByRole('link', { name: 'Members Lounge' }).waitFor()],
      ['/areas/general', () => page.getByRole('link', { name: 'Welcome to baud', exact: true }).waitFor()],
      ['/search?q=welcome', () => page.locator('mark').first().waitFor()],
      ['/files/areas/public_uploads', () => page.getByRole('link', { name: 'WELCOME.TXT' }).waitFor()],
      ['/profile', () => page.getByRole('heading', { name: 'Your profile' }).waitFor()],
      ['/unread', () => page.getByRole('heading', { name: 'Unread messages' }).waitFor()],
    ];
    for (const theme of ['Light theme', 'Dark theme']) {
      for (const [path, ready] of views) {
        await page.goto(path);
        await ready();
        const violations = await axeViolations(page);
        expect(violations, `${path} before switching to ${theme}`).toEqual([]);
      }
      await page.getByRole('button', { name: theme }).click();
    }
  });

  it('pages search results older and newer, each page showing its own results and the way back', async () => {
    const client = await nodeClient();
    for (let n = 1; n <= 60; n++) {
      await client.api.POST(`${API}/messages/areas/{areaTag}/messages`, {
        params: { path: { areaTag: 'general' } },
        body: { subject: `Paging ${String(n).padStart(2, '0')}`, message: 'A pagingtest message.' },
      });
    }
    const subjectsOf = (from: number, to: number) =>
      Array.from({ length: from - to + 1 }, (_, i) => `Paging ${String(from - i).padStart(2, '0')}`);
    const page = await open();
    const results = page.locator('ol.results > li > a');
    const pager = page.getByRole('navigation', { name: 'Result pages' });
    const shows = async (subjects: string[]) => {
      await page.waitForFunction(
        (first) => document.querySelector('ol.results > li > a')?.textContent === first,
        subjects[0],
      );
      await expect(results.allTextContents()).resolves.toEqual(subjects);
    };

    await page.goto('/search?q=pagingtest');
    await shows(subjectsOf(60, 36));
    expect(await pager.getByRole('link', { name: /Newer/ }).count()).toBe(0);
    await pager.getByRole('link', { name: /Older/ }).click();
    await shows(subjectsOf(35, 11));
    await pager.getByRole('link', { name: /Older/ }).click();
    await shows(subjectsOf(10, 1));
    expect(await pager.getByRole('link', { name: /Older/ }).count()).toBe(0);
    await pager.getByRole('link', { name: /Newer/ }).click();
    await shows(subjectsOf(35, 11));
    await pager.getByRole('link', { name: /Newer/ }).click();
    await shows(subjectsOf(60, 36));
    expect(await pager.getByRole('link', { name: /Newer/ }).count()).toBe(0);
  });
});
