import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database as BaudDatabase } from '../../src/db/database.js';
import { createEnigmaCopies } from '../support/enigma-copies.js';
import { describeEachDialect } from '../support/test-board.js';

/** Every regular file under `dir`, with its text. */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((entry) => {
    const file = path.join(entry.parentPath, entry.name);
    return entry.isFile() || entry.isSymbolicLink() ? [{ file, text: readFileSync(file, 'utf8') }] : [];
  });
}

const storedIds = async (database: BaudDatabase, table: 'files' | 'messages' | 'users', ids: number[]) =>
  (await database.db.selectFrom(table).select('id').where('id', 'in', ids).orderBy('id').execute()).map(
    (row) => row.id,
  );

/** Issue 29: `baud import enigma` of an ENiGMA½ board written by an attacker. */
describeEachDialect('baud import enigma, hostile boards', (dialect) => {
  let copies: ReturnType<typeof createEnigmaCopies>;
  beforeAll(() => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-hostile29-');
  });
  afterAll(() => copies.cleanUp());

  it.each([
    ['copied', false],
    ['hard-linked (--link)', true],
  ])('never imports a host file through a symbolic link when %s', async (_mode, link) => {
    const secretDir = path.join(copies.dir, `secrets-${link}`);
    mkdirSync(secretDir);
    writeFileSync(path.join(secretDir, 'host-secret.txt'), 'the host’s secret');
    const source = copies.sourceCopy(`links-${link}`, (db, board) => {
      const pubFiles = path.join(board, 'file_base', 'pub_files');
      symlinkSync(path.join(secretDir, 'host-secret.txt'), path.join(pubFiles, 'innocent.txt'));
      symlinkSync(secretDir, path.join(pubFiles, 'more'));
      // A link to a file of the base itself is refused too: a link is never what ENiGMA½ stored.
      symlinkSync(path.join(pubFiles, 'bbs-etiquette.txt'), path.join(pubFiles, 'etiquette-again.txt'));
      const copy = (id: number, relPath: string | null, fileName: string) =>
        db.file
          .prepare(
            `INSERT INTO file (file_id, area_tag, file_sha256, file_name, storage_tag, storage_tag_rel_path, desc, desc_long, upload_timestamp)
             SELECT ?, area_tag, ?, ?, storage_tag, ?, desc, desc_long, upload_timestamp FROM file WHERE file_id = 26`,
          )
          .run(id, `${'0'.repeat(60)}${id}`, fileName, relPath);
      copy(911, null, 'innocent.txt');
      copy(912, 'more', 'host-secret.txt');
      copy(913, null, 'more/host-secret.txt');
      copy(914, null, 'etiquette-again.txt');
    });
    const database = await copies.freshDatabase();
    const storage = copies.storageOf(`links-${link}`);
    const summary = await copies.run(source, database, `links-${link}`, { link });
    expect(summary.counts.files).toMatchObject({ found: 35, imported: 30, skipped: 5 });
    expect(summary.skipped).toContainEqual({ kind: 'files', reason: 'its file is a symbolic link', count: 2 });
    expect(summary.skipped).toContainEqual({
      kind: 'files',
      reason: 'its path goes through a symbolic link',
      count: 2,
    });
    expect(await storedIds(database, 'files', [911, 912, 913, 914])).toEqual([]);
    const stored = [...filesUnder(storage.pub_files), ...filesUnder(storage.member_uploads)];
    expect(stored).toHaveLength(30);
    expect(stored.filter(({ text }) => text.includes('the host’s secret'))).toEqual([]);
  });
});
