import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API, createFileTestBoard, FILE_BASE_CONFIG, storedPath } from '../support/file-board.js';
import { runBaud } from '../support/run-baud.js';
import type { TestBoard } from '../support/test-board.js';
import { describeEachDialect } from '../support/test-board.js';
import { buildZip } from '../support/zip-builder.js';

describeEachDialect('baud file import / remove', (dialect) => {
  let board: TestBoard;
  let configPath: string;
  const baud = (...args: string[]) => runBaud([...args, '--config', configPath], { cwd: board.dir });
  const fileCount = async (areaTag: string) => {
    const row = await board.board.db
      .selectFrom('fileAreas')
      .select('fileCount')
      .where('areaTag', '=', areaTag)
      .executeTakeFirst();
    return Number(row?.fileCount ?? 0);
  };

  beforeAll(async () => {
    board = await createFileTestBoard(dialect);
    configPath = path.join(board.dir, 'config.hjson');
    writeFileSync(
      configPath,
      JSON.stringify({
        ...FILE_BASE_CONFIG,
        paths: { dataDir: board.dir },
        database: { url: board.databaseUrl },
        logging: { level: 'silent' },
      }),
    );
    writeFileSync(path.join(board.dir, 'demo.zip'), buildZip([{ name: 'FILE_ID.DIZ', data: 'Demo from 1993 #amiga' }]));
    writeFileSync(path.join(board.dir, 'notes.txt'), 'plain notes');
    writeFileSync(path.join(board.dir, 'notes-copy.txt'), 'plain notes');
  });
  afterAll(() => board.close());

  it('imports files with DIZ extraction, skips a duplicate and an unreadable path, exits 1', async () => {
    const result = await baud(
      'file',
      'import',
      'public_files',
      path.join(board.dir, 'demo.zip'),
      path.join(board.dir, 'notes.txt'),
      path.join(board.dir, 'notes-copy.txt'),
      path.join(board.dir, 'missing.bin'),
      '--json',
    );
    expect(result.code).toBe(1);
    const output = JSON.parse(result.stdout);
    expect(output.imported).toHaveLength(2);
    expect(output.imported[0]).toMatchObject({
      areaTag: 'public_files',
      fileName: 'demo.zip',
      desc: 'Demo from 1993 #amiga',
      archiveType: 'application/zip',
      estReleaseYear: 1993,
      hashTags: ['amiga'],
      uploadByUsername: null,
    });
    expect(output.imported[1]).toMatchObject({ fileName: 'notes.txt', desc: 'notes' });
    expect(output.failed).toEqual([
      { path: path.join(board.dir, 'notes-copy.txt'), error: expect.stringContaining('already in file area') },
      { path: path.join(board.dir, 'missing.bin'), error: expect.stringContaining('ENOENT') },
    ]);
    expect(result.stderr).toContain('[1/4]');
    expect(result.stderr).toContain('[4/4] skipped');
    expect(await fileCount('public_files')).toBe(2);

    const download = await board.app.inject({
      method: 'GET',
      url: `${API}/files/${output.imported[1].fileId}/download`,
    });
    expect(download.statusCode).toBe(200);
    expect(download.body).toBe('plain notes');
  });

  it('imports with --desc overriding the DIZ and exits 0', async () => {
    writeFileSync(
      path.join(board.dir, 'other.zip'),
      buildZip([
        { name: 'FILE_ID.DIZ', data: 'ignored' },
        { name: 'x', data: 'y' },
      ]),
    );
    const result = await baud(
      'file',
      'import',
      'members',
      path.join(board.dir, 'other.zip'),
      '--desc',
      'Operator text',
      '--json',
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).imported[0]).toMatchObject({ desc: 'Operator text', descLong: 'ignored' });
  });

  it('refuses an unknown area with exit 1', async () => {
    const result = await baud('file', 'import', 'nope', path.join(board.dir, 'notes.txt'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no file area "nope"');
  });

  it('removes a file: row, counters and bytes on disk', async () => {
    const imported = JSON.parse(
      (await baud('file', 'import', 'nodl', path.join(board.dir, 'notes.txt'), '--json')).stdout,
    ).imported[0];
    const onDisk = storedPath(board, 'other', imported.fileId);
    expect(existsSync(onDisk)).toBe(true);
    expect(await fileCount('nodl')).toBe(1);

    const result = await baud('file', 'remove', String(imported.fileId), '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ fileId: imported.fileId, fileName: 'notes.txt' });
    expect(existsSync(onDisk)).toBe(false);
    expect(await fileCount('nodl')).toBe(0);
    const record = await board.app.inject({
      method: 'GET',
      url: `${API}/files/${imported.fileId}`,
      headers: (await board.userWithToken('reader')).auth,
    });
    expect(record.statusCode).toBe(404);

    const again = await baud('file', 'remove', String(imported.fileId));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No file ${imported.fileId}`);
  });
});
