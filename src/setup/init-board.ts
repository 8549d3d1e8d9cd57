import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONSOLE } from '../admin/desk-service.js';
import { openBoard } from '../board.js';
import { SYSOP_GROUP } from '../caller.js';
import { ConfigError } from '../config/config-error.js';
import { type BaudEnvironment, type Config, loadConfig } from '../config/load-config.js';
import { DEMO_CONFIG_HJSON, MINIMAL_CONFIG_HJSON } from './demo-config.js';
import { seedDemoContent } from './demo-seed.js';

export interface Credential {
  readonly username: string;
  readonly password: string;
  readonly role: 'sysop' | 'user';
}

export interface InitResult {
  readonly configPath: string;
  readonly dataDir: string;
  readonly credentials: readonly Credential[];
}

/** 18 random bytes → 24 URL-safe characters: easy to paste, far beyond guessing. */
function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * Creates a new board: the data directory, a commented config.hjson, the database (migrated)
 * and the first user, `sysop`, in group `sysops`. With `demo`, also a demo user and demo
 * content. Refuses to touch an existing configuration.
 */
export async function initBoard(options: {
  configPath: string;
  env: BaudEnvironment;
  demo: boolean;
  sysopName?: string;
}): Promise<InitResult> {
  const { configPath } = options;
  if (existsSync(configPath)) {
    throw new ConfigError(
      'board.already-initialised',
      `${configPath} already exists; this board is initialised already`,
    );
  }
  mkdirSync(path.dirname(configPath), { recursive: true });
  writeFileSync(configPath, options.demo ? DEMO_CONFIG_HJSON : MINIMAL_CONFIG_HJSON, { flag: 'wx' });
  try {
    return await createBoardContent(configPath, options);
  } catch (error) {
    // A half-made board would make the next `init` refuse and `serve` start empty: undo it.
    rmSync(configPath, { force: true });
    throw error;
  }
}

async function createBoardContent(
  configPath: string,
  options: { env: BaudEnvironment; demo: boolean; sysopName?: string },
): Promise<InitResult> {
  const config = loadConfig({ configPath, env: options.env });
  if (await hasUsers(config)) {
    throw new ConfigError(
      'board.already-initialised',
      `the database of ${configPath} already holds users; not initialising over it`,
    );
  }
  const board = await openBoard(config);
  try {
    const sysop: Credential = { username: options.sysopName ?? 'sysop', password: randomPassword(), role: 'sysop' };
    // Through the desk, as the console: the audit log begins with the accounts the board began with.
    await board.desk.createAccount(CONSOLE, {
      username: sysop.username,
      password: sysop.password,
      groups: [SYSOP_GROUP],
    });
    const credentials: Credential[] = [sysop];
    if (options.demo) {
      const demoUser: Credential = { username: 'demo', password: randomPassword(), role: 'user' };
      await board.desk.createAccount(CONSOLE, { username: demoUser.username, password: demoUser.password });
      credentials.push(demoUser);
      await seedDemoContent(board, { sysopName: sysop.username, demoUserName: demoUser.username });
    }
    return { configPath, dataDir: config.paths.dataDir, credentials };
  } finally {
    await board.close();
  }
}

async function hasUsers(config: Config): Promise<boolean> {
  const board = await openBoard(config);
  try {
    return (await board.users.countUsers()) > 0;
  } finally {
    await board.close();
  }
}
