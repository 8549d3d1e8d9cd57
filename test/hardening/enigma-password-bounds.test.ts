import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PBKDF2_ROUNDS, verifyEnigmaPassword } from '../../src/auth/enigma-password.js';
import { enigmaPasswordProperties, enigmaStoredHash } from '../auth/enigma-hashes.js';
import { API } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const PASSWORD = 'the right password';

/** Issue 29: an imported PBKDF2 hash must not let a login hold the node's threads for minutes. */
describe('verifying ENiGMA½ hashes', () => {
  it('fails a hash just past the work bound without deriving it, even with the right password', async () => {
    // Made outside baud's encoder (which refuses it), as a board imported before the bound holds it.
    const past = enigmaPasswordProperties(PASSWORD, {
      iterations: MAX_PBKDF2_ROUNDS + 1,
      digest: 'sha256',
      keyLen: 32,
    });
    const stored = `$enigma-pbkdf2$i=${past.iterations},d=sha256,l=32$${past.saltHex}$${past.dkHex}`;
    expect(await verifyEnigmaPassword(stored, PASSWORD)).toBe(false);
  });

  it('leaves libuv threads for file I/O while four ENiGMA½ logins derive', async () => {
    const stored = enigmaStoredHash(PASSWORD, { iterations: 200_000, digest: 'sha512', keyLen: 64 });
    let finished = 0;
    const logins = Array.from({ length: 4 }, () =>
      verifyEnigmaPassword(stored, PASSWORD).then((verified) => {
        finished += 1;
        return verified;
      }),
    );
    // A read needs a pool thread too: it must not wait for a derivation to end.
    await readFile(import.meta.filename);
    expect(finished).toBe(0);
    expect(await Promise.all(logins)).toEqual([true, true, true, true]);
  });
});

describeEachDialect('logging in to an account whose stored ENiGMA½ hash is past the bound', (dialect) => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect);
  });
  afterAll(() => board.close());

  it('answers 401 at once to four logins for it, instead of deriving 10,000,000 iterations of a 1,024-byte key', async () => {
    await board.board.credentials.createAccount({ username: 'heavy', password: 'an argon2 password to replace' });
    const hostile = `$enigma-pbkdf2$i=10000000,d=sha512,l=1024$${'ab'.repeat(32)}$${randomBytes(1024).toString('hex')}`;
    await board.board.db.updateTable('users').set({ passwordHash: hostile }).where('username', '=', 'heavy').execute();
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: 4 }, () =>
        board.app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { username: 'heavy', password: 'x' } }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual([401, 401, 401, 401]);
    // Before the bound each of these derived for minutes; the test's own limit is 60 s.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
