import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import type { Credential } from '../../src/setup/init-board.js';
import {
  apiClientOf,
  axeViolations,
  describeInBrowser,
  logInThroughForm,
  readerForBlock,
} from '../support/reader-server.js';

const API = '/_baud/api/v1';

const label = (prefix: string, n: number) => `${prefix} ${String(n).padStart(2, '0')}`;
/** Subjects `prefix from` … `prefix to`, ascending. */
const range = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => label(prefix, from + i));

/**
 * Reading an area from either end (beyond-v1.md "Reading: from the newest end"): a member
 * lands on the first unread message, a guest on the newest page; Older and Newer lead both
 * ways and every page has an address that reloads to itself.
 */
describeInBrowser('reading an area in the web reader', () => {
  const { fixture, pages } = readerForBlock();
  beforeAll(async () => {
    const sysop = await clientOf(fixture().sysop);
    for (const [areaTag, prefix] of [
      ['lounge', 'Lounge'],
      ['general', 'General'],
    ] as const) {
      for (let n = 1; n <= 60; n++) {
        const posted = await sysop.api.POST(`${API}/messages/areas/{areaTag}/messages`, {
          params: { path: { areaTag } },
          body: { subject: label(prefix, n), message: `Message ${n}.` },
        });
        expect(posted.response.status).toBe(201);
      }
    }
  });

  const clientOf = (credential: Credential) => apiClientOf(fixture(), credential);
  const open = () => pages.open();

  /** Waits for the message list to show exactly `subjects`, top to bottom. */
  async function shows(page: Page, subjects: readonly string[]) {
    await page.waitForFunction(
      ([first, last]) => {
        const links = [...document.querySelectorAll('table.messages tbody tr td:first-child a')];
        return links[0]?.textContent === first && links[links.length - 1]?.textContent === last;
      },
      [subjects[0], subjects[subjects.length - 1]],
    );
    await expect(page.locator('table.messages tbody tr td:first-child a').allTextContents()).resolves.toEqual([
      ...subjects,
    ]);
  }

  const pager = (page: Page) => page.getByRole('navigation', { name: 'Message pages' });

  it('opens an area at a member’s first unread message, pages older and newer, and reloads each page to itself', async () => {
    const demo = await clientOf(fixture().demo);
    const all = await demo.api.GET(`${API}/messages/areas/{areaTag}/messages`, {
      params: { path: { areaTag: 'lounge' }, query: { order: 'newest', limit: 31 } },
    });
    const read = all.data?.data.find((message) => message.subject === label('Lounge', 30));
    if (!read) throw new Error('Lounge 30 missing');
    const moved = await demo.api.PUT(`${API}/messages/areas/{areaTag}/pointer`, {
      params: { path: { areaTag: 'lounge' } },
      body: { lastReadMessageId: read.messageId },
    });
    expect(moved.data?.unreadCount).toBe(30);

    const page = await open();
    await logInThroughForm(page, fixture().demo);
    await page.goto('/areas/lounge');
    await shows(page, range('Lounge', 31, 55));
    await expect(page.locator('table.messages .badge.new').count()).resolves.toBe(25);
    // Names, not tags: the conference is "Members Lounge" (members).
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    // The names come with the board's conferences, which may land after the page's messages.
    await expect.poll(() => crumbs.getByRole('link').allTextContents()).toEqual(['Conferences', 'Members Lounge']);
    expect(await axeViolations(page)).toEqual([]);

    await pager(page).getByRole('link', { name: /Older/ }).click();
    await shows(page, range('Lounge', 6, 30));
    await expect(page.locator('table.messages .badge.new').count()).resolves.toBe(0);
    const olderAddress = new URL(page.url());
    expect(olderAddress.searchParams.get('order')).toBe('newest');
    await page.reload();
    await shows(page, range('Lounge', 6, 30));
    await pager(page).getByRole('link', { name: /Newer/ }).click();
    await shows(page, range('Lounge', 31, 55));
    await pager(page).getByRole('link', { name: /Newer/ }).click();
    await shows(page, range('Lounge', 56, 60));
    expect(new URL(page.url()).searchParams.get('order')).toBe('oldest');
    await page.reload();
    await shows(page, range('Lounge', 56, 60));
    expect(await pager(page).getByRole('link', { name: /Newer/ }).count()).toBe(0);
    await pager(page).getByRole('link', { name: /Older/ }).click();
    await shows(page, range('Lounge', 31, 55));

    // The message names its area and conference too.
    await page.getByRole('link', { name: label('Lounge', 31), exact: true }).click();
    await page.locator('article.message h1').waitFor();
    await expect
      .poll(() => page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link').allTextContents())
      .toEqual(['Conferences', 'Members Lounge', 'Lounge']);
    await expect(page.locator('.message-header dd').nth(3).textContent()).resolves.toBe('Lounge in Members Lounge');
  });

  it('opens an area at its newest page for a guest, pages back in time and forward again', async () => {
    const page = await open();
    await page.goto('/areas/general');
    await shows(page, range('General', 36, 60));
    expect(await pager(page).getByRole('link', { name: /Newer/ }).count()).toBe(0);
    await expect
      .poll(() => page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link').allTextContents())
      .toEqual(['Conferences', 'Public Square']);
    expect(await axeViolations(page)).toEqual([]);
    await pager(page).getByRole('link', { name: /Older/ }).click();
    await shows(page, range('General', 11, 35));
    await pager(page).getByRole('link', { name: /Older/ }).click();
    const oldest = page.locator('table.messages tbody tr td:first-child a');
    await page.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
    await expect(oldest.last().textContent()).resolves.toBe(label('General', 10));
    const bookmark = page.url();
    await pager(page).getByRole('link', { name: /Newer/ }).click();
    await shows(page, range('General', 11, 35));
    await pager(page).getByRole('link', { name: /Newer/ }).click();
    await shows(page, range('General', 36, 60));

    // A bookmark opened in a new tab shows its page; with no way back remembered, Newer is the newest page.
    const fresh = await open();
    await fresh.goto(bookmark.replace(fixture().baseUrl, ''));
    await fresh.waitForFunction(() => !document.body.textContent?.includes('Loading…'));
    await expect(fresh.locator('table.messages tbody tr td:first-child a').last().textContent()).resolves.toBe(
      label('General', 10),
    );
    await pager(fresh).getByRole('link', { name: /Newer/ }).click();
    await shows(fresh, range('General', 36, 60));
  });
});
