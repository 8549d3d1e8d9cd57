import { afterAll, beforeAll, expect, it } from 'vitest';
import { ENIGMA_LEGACY_HASH_PARAMS, type EnigmaHashParams } from '../../src/auth/enigma-password.js';
import { verifyPassword } from '../../src/auth/passwords.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { bearer, getMe, login, refresh } from './auth-helpers.js';
import { ENIGMA_CURRENT_HASH_PARAMS, enigmaStoredHash } from './enigma-hashes.js';

const ENIGMA_PASSWORD = 'Zażółć gęślą jaźń 123!';

describeEachDialect('logging in with an imported ENiGMA½ password', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
  });
  afterAll(() => board.close());

  /** A user whose `password_hash` is what `baud import enigma` stores for `ENIGMA_PASSWORD`. */
  async function importedUser(
    username: string,
    params: EnigmaHashParams = ENIGMA_CURRENT_HASH_PARAMS,
  ): Promise<string> {
    await board.board.credentials.createAccount({ username, password: 'an argon2 password to replace' });
    const passwordHash = enigmaStoredHash(ENIGMA_PASSWORD, params);
    await board.board.db.updateTable('users').set({ passwordHash }).where('username', '=', username).execute();
    return passwordHash;
  }

  async function storedAccount(username: string) {
    return board.board.db
      .selectFrom('users')
      .select(['passwordHash', 'credentialsChangedAt'])
      .where('username', '=', username)
      .executeTakeFirstOrThrow();
  }

  it.each([
    ['current (sha512, 210000 iterations)', 'current', ENIGMA_CURRENT_HASH_PARAMS],
    ['legacy (sha1, 1000 iterations)', 'legacy', ENIGMA_LEGACY_HASH_PARAMS],
  ])('logs in with a %s hash, stores argon2id in its place, then logs in through argon2', async (_params, name, params) => {
    const username = `imported-${name}`;
    await importedUser(username, params);

    const first = await login(board, username, ENIGMA_PASSWORD);
    expect(first.response.statusCode).toBe(200);
    const { passwordHash: rehashed } = await storedAccount(username);
    expect(rehashed).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(rehashed, ENIGMA_PASSWORD)).toBe(true);

    const second = await login(board, username, ENIGMA_PASSWORD);
    expect(second.response.statusCode).toBe(200);
    expect((await storedAccount(username)).passwordHash).toBe(rehashed);
  });

  it('refuses a wrong password with 401 and leaves the ENiGMA½ hash as it was', async () => {
    const imported = await importedUser('imported-wrong');
    const { response } = await login(board, 'imported-wrong', `${ENIGMA_PASSWORD}?`);
    expect(response.statusCode).toBe(401);
    expect((await storedAccount('imported-wrong')).passwordHash).toBe(imported);
  });

  it('refuses a disabled user with the right password with 401 and does not rehash', async () => {
    const imported = await importedUser('imported-disabled');
    await board.board.users.setDisabled('imported-disabled', true);
    const { response } = await login(board, 'imported-disabled', ENIGMA_PASSWORD);
    expect(response.statusCode).toBe(401);
    expect((await storedAccount('imported-disabled')).passwordHash).toBe(imported);
  });

  it("keeps the user's sessions and API keys through the rehash (credentialsChangedAt unchanged)", async () => {
    await board.board.credentials.createAccount({
      username: 'imported-keeper',
      password: 'the password before import',
    });
    const earlier = await login(board, 'imported-keeper', 'the password before import');
    expect(earlier.response.statusCode).toBe(200);
    const { key } = await board.board.apiKeys.generate('imported-keeper', 'bot', 'read');
    const imported = enigmaStoredHash(ENIGMA_PASSWORD);
    await board.board.db
      .updateTable('users')
      .set({ passwordHash: imported })
      .where('username', '=', 'imported-keeper')
      .execute();
    const before = await storedAccount('imported-keeper');
    // Later than the sessions above, so a moved credentialsChangedAt would end them.
    clock.advance(60_000);

    const { response } = await login(board, 'imported-keeper', ENIGMA_PASSWORD);
    expect(response.statusCode).toBe(200);

    const after = await storedAccount('imported-keeper');
    expect(after.passwordHash).toMatch(/^\$argon2id\$/);
    expect(after.credentialsChangedAt).toBe(before.credentialsChangedAt);
    expect((await getMe(board, bearer(earlier.accessToken))).statusCode).toBe(200);
    expect((await getMe(board, { 'x-baud-api-key': key })).statusCode).toBe(200);
    expect((await refresh(board, earlier.refreshToken)).statusCode).toBe(200);
  });
});
