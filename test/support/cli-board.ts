import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A new board directory for the CLI: a SQLite database in it, logging silenced, and `settings`
 * beside that (areas, webhooks, …), written to its config.hjson. The caller removes `dir`.
 */
export function createCliBoard(prefix: string, settings: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const config = path.join(dir, 'config.hjson');
  const written = {
    paths: { dataDir: dir },
    database: { url: `sqlite:${path.join(dir, 'baud.db')}` },
    logging: { level: 'silent' },
    ...settings,
  };
  writeFileSync(config, JSON.stringify(written));
  return { dir, config, settings: written };
}
