import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { type BaudClient, createBaudClient } from '../../clients/typescript/src/index.js';
import { type Config, loadConfig } from '../../src/config/load-config.js';
import { type Credential, initBoard } from '../../src/setup/init-board.js';
import { type RunningBoard, serveBoard } from '../../src/setup/serve-board.js';

/** Debian's chromium package (`.ci/run` installs it when missing). */
export const CHROMIUM = process.env.BAUD_TEST_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags for a headless Chromium in a container: no sandbox (runs as root), and none of the
 * background connections to Google's services a closed network refuses.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * `describe` for the browser tests: skipped with a loud message when Chromium is not installed,
 * except under CI, where a missing browser fails like a missing database.
 */
export function describeInBrowser(name: string, body: () => void): void {
  if (existsSync(CHROMIUM) || process.env.CI === 'true') {
    describe(name, body);
    return;
  }
  console.warn(
    `\n*** SKIPPING browser tests "${name}": ${CHROMIUM} not found. Install it with: apt-get install -y chromium ***\n`,
  );
  describe.skip(name, body);
}

/** What logging in takes: any member's name and password (the demo's credentials are ones). */
export type LoginCredential = Pick<Credential, 'username' | 'password'>;

/** A demo board (`npm start`'s content) served on a free port, and a browser to read it with. */
export interface ReaderFixture {
  readonly baseUrl: string;
  readonly sysop: Credential;
  readonly demo: Credential;
  readonly browser: Browser;
  readonly dir: string;
  /** A fresh browser context (own cookies, own storage) with a page in it. */
  newPage(options?: { width?: number; height?: number }): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/** How the board differs from the demo's defaults: `registration` sets `users.registration`. */
export interface ReaderFixtureOptions {
  readonly registration?: Config['users']['registration'];
}

export async function startReaderFixture({ registration }: ReaderFixtureOptions = {}): Promise<ReaderFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-reader-'));
  const configPath = path.join(dir, 'config.hjson');
  const env = { BAUD_PORT: '0' };
  let running: RunningBoard | null = null;
  let browser: Browser | null = null;
  try {
    const created = await initBoard({ configPath, env, demo: true });
    const config = loadConfig({ configPath, env: { ...env, BAUD_LOG_LEVEL: 'silent' } });
    const users = registration === undefined ? config.users : { ...config.users, registration };
    // The browser needs no terminal server: SSH and telnet stay off, so fixtures never race for the demo's ports.
    const contentServers = {
      ...config.contentServers,
      ssh: { ...config.contentServers.ssh, enabled: false },
      telnet: { ...config.contentServers.telnet, enabled: false },
    };
    running = await serveBoard({ ...config, users, contentServers, logging: { ...config.logging, level: 'silent' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const [sysop, demo] = created.credentials;
    if (!sysop || !demo) throw new Error('the demo board has no sysop or demo user');
    const baseUrl = new URL(running.url).origin;
    const openBrowser = browser;
    const openBoard = running;
    return {
      baseUrl,
      sysop,
      demo,
      browser,
      dir,
      async newPage({ width = 1280, height = 900 } = {}) {
        const context = await openBrowser.newContext({ baseURL: baseUrl, viewport: { width, height } });
        return { context, page: await context.newPage() };
      },
      async close() {
        await openBrowser.close();
        await openBoard.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await browser?.close();
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Logs in through the reader's own form, as a person would. */
export async function logInThroughForm(page: Page, credential: LoginCredential): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('User name').fill(credential.username);
  await page.getByLabel('Password').fill(credential.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('banner').getByRole('link', { name: credential.username, exact: true }).waitFor();
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The serious and critical axe-core findings on the page as it stands, as `rule (nodes)`. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> };
      }
    ).axe;
    return (await axe.run()).violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.nodes.length})`);
  });
}

/** A logged-in API client of the fixture's board, beside the browser. */
export async function apiClientOf(fixture: ReaderFixture, credential: LoginCredential): Promise<BaudClient> {
  const client = createBaudClient({ baseUrl: fixture.baseUrl });
  await client.login(credential.username, credential.password);
  return client;
}

/**
 * The pages of one test, each watched for script errors and Content-Security-Policy refusals:
 * `closeAll` (in afterEach) closes their contexts and answers what went wrong, which must be nothing.
 */
/**
 * A reader fixture for one describe block: started before its tests and closed after them; after
 * each test every page it opened is closed, and the test fails on any page error or CSP
 * violation those pages met. `fixture()` is the running fixture (from the block's tests and
 * hooks registered after this call).
 */
export function readerForBlock(options: ReaderFixtureOptions = {}) {
  let running: ReaderFixture | undefined;
  const fixture = (): ReaderFixture => {
    if (!running) throw new Error('the reader fixture starts in beforeAll');
    return running;
  };
  const pages = watchPages(fixture);
  beforeAll(async () => {
    running = await startReaderFixture(options);
  });
  afterAll(() => running?.close());
  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });
  return { fixture, pages };
}

export function watchPages(fixture: () => ReaderFixture) {
  let pages: Page[] = [];
  let errors: string[] = [];
  return {
    async open(options?: { width?: number; height?: number }): Promise<Page> {
      const { page } = await fixture().newPage(options);
      page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) errors.push(`CSP: ${message.text()}`);
      });
      pages.push(page);
      return page;
    },
    async closeAll(): Promise<string[]> {
      for (const page of pages) await page.context().close();
      const seen = errors;
      pages = [];
      errors = [];
      return seen;
    },
  };
}
