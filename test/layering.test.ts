import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');

/** The `src/`-relative paths that the files under `folder` (`''`: all of src) import (relative specifiers only). */
function importsUnder(folder: string): { file: string; target: string }[] {
  const files = readdirSync(path.join(SRC, folder), { recursive: true, encoding: 'utf8' }).filter((name) =>
    name.endsWith('.ts'),
  );
  return files.flatMap((name) => {
    const file = path.join(folder, name);
    const source = readFileSync(path.join(SRC, file), 'utf8');
    return [...source.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)].map((match) => ({
      file,
      target: path.relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), match[1] as string)),
    }));
  });
}

/** The folders of `src/` other than `src/db`: the domains and the edges. */
const FOLDERS_BUT_DB = readdirSync(SRC, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'db')
  .map((entry) => entry.name);

const reaching = (folder: string, forbidden: readonly string[]) =>
  importsUnder(folder)
    .filter(({ target }) => forbidden.some((prefix) => target === prefix || target.startsWith(`${prefix}/`)))
    .map(({ file, target }) => `${file} → ${target}`);

/** Which domain may lean on which: the import arrows the layout promises, checked so they stay one-way. */
describe('layering', () => {
  it('keeps users out of auth: credentials are auth’s, and auth may use users, never the other way', () => {
    expect(reaching('users', ['auth'])).toEqual([]);
  });

  it('keeps events to the log, the hub and streams: no webhooks, no board', () => {
    expect(reaching('events', ['webhooks', 'board.js'])).toEqual([]);
  });

  it('lets the system count sessions through its own interface, not auth’s store', () => {
    expect(reaching('system', ['auth'])).toEqual([]);
  });

  it('keeps src/db below every domain: its stores and helpers import none (migrations are checked on their own)', () => {
    expect(reaching('db', FOLDERS_BUT_DB)).toEqual([]);
  });

  it('keeps the HTTP edge off the database: it reaches rows only through services', () => {
    expect(reaching('http', ['db'])).toEqual([]);
  });

  it('keeps the terminal an edge: nothing imports src/terminal but itself and serve-board, which starts its servers', () => {
    const outside = reaching('', ['terminal']).filter(
      (arrow) =>
        !arrow.startsWith(`terminal${path.sep}`) && !arrow.startsWith(`${path.join('setup', 'serve-board.ts')} `),
    );
    expect(outside).toEqual([]);
  });

  it('keeps events off the tables of webhooks and settings: it prunes and remembers through their stores', () => {
    const tables = /(['"`])(webhooks|webhookDeliveries|webhook_deliveries|settings)\1/;
    const naming = readdirSync(path.join(SRC, 'events'))
      .filter((name) => name.endsWith('.ts'))
      .filter((name) => tables.test(readFileSync(path.join(SRC, 'events', name), 'utf8')));
    expect(naming).toEqual([]);
  });
});
