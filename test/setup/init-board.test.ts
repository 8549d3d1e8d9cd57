import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/board.js';
import { anonymousCaller } from '../../src/caller.js';
import { loadConfig } from '../../src/config/load-config.js';
import { type InitResult, initBoard } from '../../src/setup/init-board.js';

describe('baud init --demo (what the first npm start does)', () => {
  let dir: string;
  let configPath: string;
  let result: InitResult;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-demo-'));
    configPath = path.join(dir, 'data', 'config.hjson');
    result = await initBoard({ configPath, env: {}, demo: true });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the data directory with config, database and storage', () => {
    expect(result.dataDir).toBe(path.join(dir, 'data'));
    expect(existsSync(configPath)).toBe(true);
    expect(existsSync(path.join(dir, 'data', 'baud.db'))).toBe(true);
    expect(readdirSync(path.join(dir, 'data', 'files', 'public')).sort()).toEqual(['.incoming', '1', '2']);
    expect(readdirSync(path.join(dir, 'data', 'files', 'members')).sort()).toEqual(['.incoming', '3']);
  });

  it('returns a sysop and a demo user with distinct random passwords', () => {
    expect(result.credentials.map(({ username, role }) => ({ username, role }))).toEqual([
      { username: 'sysop', role: 'sysop' },
      { username: 'demo', role: 'user' },
    ]);
    const [sysop, demo] = result.credentials;
    expect(sysop?.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(sysop?.password).not.toBe(demo?.password);
  });

  it('seeds two conferences (one public), ANSI art and reply messages, two file areas with files', async () => {
    const board = await openBoard(loadConfig({ configPath, env: {} }));
    try {
      expect(await board.system.getStats()).toMatchObject({ totalUsers: 2, totalMessages: 6, totalFiles: 3 });
      expect((await board.users.getUser('sysop')).groups).toContain('sysops');
      const anonymous = anonymousCaller(false);
      expect((await board.messages.listConferences(anonymous)).map((conference) => conference.confTag)).toEqual([
        'public',
      ]);
      const general = await board.messages.listAreaMessages(anonymous, 'general', { limit: 25, afterKey: null });
      expect(general.items.map((message) => message.replyToMessageId)).toEqual([null, general.items[0]?.messageId]);
      const files = await board.files.listAreaFiles(anonymous, 'public_uploads', { limit: 25, afterKey: null }, true);
      expect(files.items.map((file) => file.fileName).sort()).toEqual(['BAUDPACK.ZIP', 'WELCOME.TXT']);
    } finally {
      await board.close();
    }
  });

  it('refuses to run again over the same data, leaving it untouched', async () => {
    await expect(initBoard({ configPath, env: {}, demo: true })).rejects.toThrow(
      `${configPath} already exists; this board is initialised already`,
    );
    const board = await openBoard(loadConfig({ configPath, env: {} }));
    try {
      expect((await board.system.getStats()).totalMessages).toBe(6);
    } finally {
      await board.close();
    }
  });
});
