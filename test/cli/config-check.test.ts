import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/board.js';
import { reportConfigCheck } from '../../src/cli/config-commands.js';
import { ConfigError } from '../../src/config/config-error.js';
import { configFromObject, loadConfig } from '../../src/config/load-config.js';
import { PUBLIC_STAFF_AREAS_CONFIG, PUBLIC_STAFF_AREAS_WARNING } from '../setup/public-staff-areas.js';
import { runBaud } from '../support/run-baud.js';

const WARNING = { code: 'public-areas-closed-to-members', message: PUBLIC_STAFF_AREAS_WARNING };

describe('baud config check', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-config-check-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes `raw` as the configuration file `name` (JSON is HJSON) and loads it as the CLI does. */
  function writeConfig(name: string, raw: unknown): string {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify({ database: { url: 'sqlite:baud.db' }, ...(raw as object) }));
    return file;
  }

  it('passes a configuration without warnings', () => {
    const file = writeConfig('plain.hjson', { general: { boardName: 'Plain' } });
    for (const strict of [false, true]) {
      expect(reportConfigCheck(loadConfig({ configPath: file }), { strict })).toEqual({
        configPath: file,
        warnings: [],
        passed: true,
        lines: [`${file}: valid`],
      });
    }
  });

  it('passes a configuration with warnings, printing them, and fails it with --strict', () => {
    const file = writeConfig('public-staff.hjson', PUBLIC_STAFF_AREAS_CONFIG);
    const config = loadConfig({ configPath: file });
    expect(reportConfigCheck(config, { strict: false })).toEqual({
      configPath: file,
      warnings: [WARNING],
      passed: true,
      lines: [`${file}: valid, 1 warning`, `  warning: ${PUBLIC_STAFF_AREAS_WARNING}`],
    });
    expect(reportConfigCheck(config, { strict: true })).toMatchObject({
      passed: false,
      lines: [`${file}: valid, but 1 warning (--strict)`, `  warning: ${PUBLIC_STAFF_AREAS_WARNING}`],
    });
  });

  it('refuses an unparseable ACS with the error baud serve stops with, before any database is opened', async () => {
    const config = configFromObject({
      database: { url: 'sqlite::memory:' },
      messageConferences: { main: { name: 'Main', areas: { news: { name: 'News', acs: { read: 'GM[sysops' } } } } },
    });
    const serving = await openBoard(config).then(
      () => expect.fail('the board opened'),
      (error: unknown) => error,
    );
    expect(serving).toBeInstanceOf(ConfigError);
    expect(() => reportConfigCheck(config, { strict: false })).toThrow(
      new ConfigError('config.invalid', (serving as ConfigError).message),
    );
    expect((serving as ConfigError).message).toMatch(
      /^configuration: invalid ACS for messageConferences\.main\.areas\.news\.acs\.read: /,
    );
  });

  it('runs from the command line: --json on stdout, exit 1 under --strict with warnings', async () => {
    const file = writeConfig('cli.hjson', PUBLIC_STAFF_AREAS_CONFIG);
    const run = await runBaud(['config', 'check', '--config', file, '--json', '--strict'], { cwd: dir });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({ configPath: file, valid: true, passed: false, warnings: [WARNING] });
  });
});
