import { pbkdf2Sync } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENIGMA_LEGACY_HASH_PARAMS,
  type EnigmaPasswordHash,
  encodeEnigmaPasswordHash,
  isEnigmaPasswordHash,
  verifyEnigmaPassword,
} from '../../src/auth/enigma-password.js';
import { hashPassword, needsRehash, verifyPassword } from '../../src/auth/passwords.js';
import { ENIGMA_CURRENT_HASH_PARAMS, enigmaPasswordProperties, enigmaStoredHash } from './enigma-hashes.js';

const FIXTURE_USER_DB = path.resolve(import.meta.dirname, '../fixtures/enigma-board/db/user.sqlite3');

// The fixture README's table of users and their plain passwords.
const FIXTURE_PASSWORDS = [
  ['sysop', 'SysopPass123!'],
  ['alice', 'AlicePass123!'],
  ['bob', 'BobPass123!'],
  ['carol', 'CarolPass123!'],
  ['dave', 'DavePass123!'],
  ['erin', 'ErinPass123!'],
] as const;

describe('ENiGMA½ hashes of the fixture board', () => {
  let userDb: Database.Database;
  beforeAll(() => {
    userDb = new Database(FIXTURE_USER_DB, { readonly: true, fileMustExist: true });
  });
  afterAll(() => userDb.close());

  /** The three password properties of `username`, as `baud import enigma` reads them. */
  function storedHashOf(username: string): string {
    const rows = userDb
      .prepare<[string], { prop_name: string; prop_value: string }>(
        `select prop_name, prop_value from user_property
         where user_id = (select id from user where user_name = ?)
           and prop_name in ('pw_pbkdf2_salt', 'pw_pbkdf2_dk', 'pw_hash_params')`,
      )
      .all(username);
    const props = new Map(rows.map((row) => [row.prop_name, row.prop_value]));
    const params = props.has('pw_hash_params')
      ? (JSON.parse(props.get('pw_hash_params') ?? '') as { iterations: number; digest: string; keyLen: number })
      : ENIGMA_LEGACY_HASH_PARAMS;
    return encodeEnigmaPasswordHash({
      saltHex: props.get('pw_pbkdf2_salt') ?? '',
      dkHex: props.get('pw_pbkdf2_dk') ?? '',
      iterations: params.iterations,
      digest: params.digest,
      keyLen: params.keyLen,
    });
  }

  it.each(
    FIXTURE_PASSWORDS,
  )('verifies %s with the listed password and not with another', async (username, password) => {
    const stored = storedHashOf(username);
    expect(stored).toMatch(/^\$enigma-pbkdf2\$i=210000,d=sha512,l=64\$[0-9a-f]{64}\$[0-9a-f]{128}$/);
    expect(await verifyEnigmaPassword(stored, password)).toBe(true);
    expect(await verifyEnigmaPassword(stored, `${password}x`)).toBe(false);
    expect(await verifyEnigmaPassword(stored, password.toLowerCase())).toBe(false);
  });
});

describe('verifyEnigmaPassword', () => {
  it('verifies a legacy hash (sha1, 1000 iterations, 128-byte key) built with pbkdf2Sync', async () => {
    const saltHex = 'ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789';
    // ENiGMA½'s derivation, spelled out: the password's UTF-8 as hex text, the salt's hex text as bytes.
    const dkHex = pbkdf2Sync(
      Buffer.from('Zażółć gęślą jaźń', 'utf8').toString('hex'),
      saltHex,
      1000,
      128,
      'sha1',
    ).toString('hex');
    const stored = encodeEnigmaPasswordHash({ saltHex, dkHex, ...ENIGMA_LEGACY_HASH_PARAMS });
    expect(stored).toBe(`$enigma-pbkdf2$i=1000,d=sha1,l=128$${saltHex}$${dkHex}`);
    expect(await verifyEnigmaPassword(stored, 'Zażółć gęślą jaźń')).toBe(true);
    expect(await verifyEnigmaPassword(stored, 'Zazolc gesla jazn')).toBe(false);
    // The salt's case is part of the salt: ENiGMA½ hashes its text, not the bytes it encodes.
    expect(await verifyEnigmaPassword(stored.replace(saltHex, saltHex.toLowerCase()), 'Zażółć gęślą jaźń')).toBe(false);
  });

  const legacy = enigmaPasswordProperties('secret', ENIGMA_LEGACY_HASH_PARAMS, 'ab'.repeat(32));
  const valid = encodeEnigmaPasswordHash(legacy);
  const { saltHex, dkHex } = legacy;

  it.each([
    ['an empty string', ''],
    ['the bare prefix', '$enigma-pbkdf2$'],
    ['an argon2id hash', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo'],
    ['a digest outside the allowlist', `$enigma-pbkdf2$i=1000,d=md5,l=128$${saltHex}$${dkHex}`],
    ['zero iterations', `$enigma-pbkdf2$i=0,d=sha1,l=128$${saltHex}$${dkHex}`],
    ['too many iterations', `$enigma-pbkdf2$i=10000001,d=sha1,l=128$${saltHex}$${dkHex}`],
    ['a key length that disagrees with the key', `$enigma-pbkdf2$i=1000,d=sha1,l=64$${saltHex}$${dkHex}`],
    ['a truncated key', valid.slice(0, -2)],
    ['a key of odd length', `${valid}0`],
    ['a salt that is not hex', valid.replace(saltHex, `g${saltHex.slice(1)}`)],
    ['an empty salt', valid.replace(saltHex, '')],
    ['parameters in another order', `$enigma-pbkdf2$d=sha1,i=1000,l=128$${saltHex}$${dkHex}`],
    ['an extra field', `${valid}$00`],
    ['a trailing newline', `${valid}\n`],
  ])('is false for %s', async (_case, stored) => {
    expect(await verifyEnigmaPassword(stored, 'secret')).toBe(false);
  });

  it('is true for the well-formed hash the malformed cases were made from', async () => {
    expect(await verifyEnigmaPassword(valid, 'secret')).toBe(true);
  });

  it('verifies whatever encode stored, with the right password only (property)', async () => {
    const hexSalt = fc.stringMatching(/^[0-9a-fA-F]{1,64}$/);
    const params = fc.record({
      iterations: fc.integer({ min: 1, max: 2000 }),
      digest: fc.constantFrom('sha1', 'sha256', 'sha512'),
      keyLen: fc.integer({ min: 1, max: 256 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme' }),
        fc.string(),
        params,
        hexSalt,
        async (password, other, p, salt) => {
          const stored = encodeEnigmaPasswordHash(enigmaPasswordProperties(password, p, salt));
          expect(isEnigmaPasswordHash(stored)).toBe(true);
          expect(await verifyEnigmaPassword(stored, password)).toBe(true);
          // A key of a few bytes matches another password by chance (1 in 256 for one byte: a
          // CI run found one): only a key of 8 bytes or more must tell every other password apart.
          if (other !== password && p.keyLen >= 8) expect(await verifyEnigmaPassword(stored, other)).toBe(false);
        },
      ),
    );
  });
});

describe('encodeEnigmaPasswordHash', () => {
  const good: EnigmaPasswordHash = {
    saltHex: 'ab'.repeat(32),
    dkHex: 'cd'.repeat(64),
    iterations: 210_000,
    digest: 'sha512',
    keyLen: 64,
  };

  it.each<[string, Partial<EnigmaPasswordHash>, RegExp]>([
    ['a digest outside the allowlist', { digest: 'md5' }, /digest must be one of sha1, sha256, sha512/],
    ['a digest in capitals', { digest: 'SHA512' }, /digest must be one of/],
    ['zero iterations', { iterations: 0 }, /iterations must be a positive integer/],
    [
      'more than 500,000 rounds',
      { iterations: 500_001 },
      /iterations × key blocks must be at most 500,000 \(it is 500,001\)/,
    ],
    [
      'a key of many blocks',
      { iterations: 100_000, digest: 'sha1', keyLen: 128, dkHex: 'cd'.repeat(128) },
      /it is 700,000/,
    ],
    ['fractional iterations', { iterations: 1.5 }, /iterations must be/],
    ['a zero key length', { keyLen: 0 }, /keyLen must be an integer from 1 to 256/],
    ['a key length over 256', { keyLen: 257 }, /keyLen must be/],
    ['a salt that is not hex', { saltHex: 'xyz' }, /saltHex must be a non-empty hex string/],
    ['an empty salt', { saltHex: '' }, /saltHex must be/],
    ['a key that is not hex', { dkHex: 'zz'.repeat(64) }, /dkHex must be a hex string of keyLen bytes/],
    ['a key shorter than keyLen', { dkHex: 'cd'.repeat(63) }, /dkHex must be/],
    ['a key separator smuggled into the salt', { saltHex: `ab$${'cd'.repeat(64)}` }, /saltHex must be/],
  ])('throws for %s, without quoting the salt or key', (_case, change, message) => {
    const error = (() => {
      try {
        encodeEnigmaPasswordHash({ ...good, ...change });
      } catch (thrown) {
        return thrown as Error;
      }
      throw new Error('encodeEnigmaPasswordHash did not throw');
    })();
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('abab');
    expect(error.message).not.toContain('cdcd');
  });

  it('keeps the salt exactly as stored, in its case', () => {
    const saltHex = 'AbCd'.repeat(16);
    expect(encodeEnigmaPasswordHash({ ...good, saltHex })).toBe(
      `$enigma-pbkdf2$i=210000,d=sha512,l=64$${saltHex}$${good.dkHex}`,
    );
  });
});

describe('verifyPassword and needsRehash with both forms', () => {
  it('verifies an ENiGMA½ hash and asks for a rehash; verifies argon2id and does not', async () => {
    const enigma = enigmaStoredHash('tr0ub4dor', { ...ENIGMA_CURRENT_HASH_PARAMS, iterations: 1000 });
    const argon2 = await hashPassword('tr0ub4dor');
    expect(await verifyPassword(enigma, 'tr0ub4dor')).toBe(true);
    expect(await verifyPassword(enigma, 'tr0ub4dor!')).toBe(false);
    expect(await verifyPassword(argon2, 'tr0ub4dor')).toBe(true);
    expect(needsRehash(enigma)).toBe(true);
    expect(needsRehash(argon2)).toBe(false);
    expect(isEnigmaPasswordHash(argon2)).toBe(false);
  });

  it('never sends a malformed ENiGMA½-prefixed hash to argon2, and fails it', async () => {
    expect(await verifyPassword('$enigma-pbkdf2$garbage', 'anything')).toBe(false);
  });
});
