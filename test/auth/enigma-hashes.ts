import { pbkdf2Sync, randomBytes } from 'node:crypto';
import {
  type EnigmaHashParams,
  type EnigmaPasswordHash,
  encodeEnigmaPasswordHash,
} from '../../src/auth/enigma-password.js';

/** ENiGMA½'s current parameters (its `pw_hash_params`); the legacy ones are `ENIGMA_LEGACY_HASH_PARAMS`. */
export const ENIGMA_CURRENT_HASH_PARAMS: EnigmaHashParams = { iterations: 210_000, digest: 'sha512', keyLen: 64 };

/**
 * The salt and derived key ENiGMA½ would store for `password`, derived here independently of
 * baud's verifier, the way ENiGMA½ does (hex text of the password, salt's hex text as bytes).
 */
export function enigmaPasswordProperties(
  password: string,
  params: EnigmaHashParams,
  saltHex = randomBytes(32).toString('hex'),
): EnigmaPasswordHash {
  const passwordHex = Buffer.from(password, 'utf8').toString('hex');
  const dkHex = pbkdf2Sync(passwordHex, saltHex, params.iterations, params.keyLen, params.digest).toString('hex');
  return { saltHex, dkHex, ...params };
}

/** What `baud import enigma` stores in `users.password_hash` for an ENiGMA½ user with `password`. */
export function enigmaStoredHash(password: string, params: EnigmaHashParams = ENIGMA_CURRENT_HASH_PARAMS): string {
  return encodeEnigmaPasswordHash(enigmaPasswordProperties(password, params));
}
