import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const pbkdf2Async = promisify(pbkdf2);

/**
 * The PBKDF2 parameters of one ENiGMA½ password (its `pw_hash_params` property), with the salt
 * and derived key as ENiGMA½ stores them (`pw_pbkdf2_salt`, `pw_pbkdf2_dk`).
 */
export interface EnigmaPasswordHash {
  /** The `pw_pbkdf2_salt` property exactly as stored: ENiGMA½ feeds this hex *string* to PBKDF2, so its case matters. */
  readonly saltHex: string;
  /** The `pw_pbkdf2_dk` property: the derived key, `keyLen` bytes in hex. */
  readonly dkHex: string;
  readonly iterations: number;
  /** An HMAC digest name; `string` because it comes from a JSON property, checked against `ENIGMA_DIGESTS`. */
  readonly digest: string;
  /** Derived key length in bytes. */
  readonly keyLen: number;
}

/** How an ENiGMA½ password was derived: its `pw_hash_params` property (less `saltLen`). */
export type EnigmaHashParams = Pick<EnigmaPasswordHash, 'iterations' | 'digest' | 'keyLen'>;

/** The digests baud verifies; ENiGMA½ uses sha512 (sha1 before `pw_hash_params` existed). */
export const ENIGMA_DIGESTS: readonly string[] = Object.freeze(['sha1', 'sha256', 'sha512']);

/** What a user has without a `pw_hash_params` property: ENiGMA½'s parameters before it stored them. */
export const ENIGMA_LEGACY_HASH_PARAMS: EnigmaHashParams = Object.freeze({
  iterations: 1000,
  digest: 'sha1',
  keyLen: 128,
});

// Bounds against a corrupt or hostile stored value that would make one login derive for hours.
const MAX_ITERATIONS = 10_000_000;
const MAX_KEY_LEN = 1024;

// `$` and a scheme name that argon2's PHC strings (`$argon2id$…`) can never start with.
const PREFIX = '$enigma-pbkdf2$';
const STORED_FORM =
  /^\$enigma-pbkdf2\$i=([1-9][0-9]{0,7}),d=([a-z0-9]+),l=([1-9][0-9]{0,3})\$([0-9a-fA-F]+)\$([0-9a-fA-F]+)$/;
const HEX = /^[0-9a-fA-F]+$/;

/** Why `hash` cannot be stored or verified, or undefined when it can. Never quotes the salt or key. */
function invalidityOf(hash: EnigmaPasswordHash): string | undefined {
  if (!Number.isInteger(hash.iterations) || hash.iterations < 1 || hash.iterations > MAX_ITERATIONS) {
    return `iterations must be an integer from 1 to ${MAX_ITERATIONS}`;
  }
  if (!ENIGMA_DIGESTS.includes(hash.digest)) return `digest must be one of ${ENIGMA_DIGESTS.join(', ')}`;
  if (!Number.isInteger(hash.keyLen) || hash.keyLen < 1 || hash.keyLen > MAX_KEY_LEN) {
    return `keyLen must be an integer from 1 to ${MAX_KEY_LEN}`;
  }
  if (typeof hash.saltHex !== 'string' || !HEX.test(hash.saltHex)) return 'saltHex must be a non-empty hex string';
  if (typeof hash.dkHex !== 'string' || !HEX.test(hash.dkHex) || hash.dkHex.length !== hash.keyLen * 2) {
    return 'dkHex must be a hex string of keyLen bytes';
  }
  return undefined;
}

/**
 * The `users.password_hash` value of an imported ENiGMA½ password:
 * `$enigma-pbkdf2$i=<iterations>,d=<digest>,l=<keyLen>$<saltHex>$<dkHex>`.
 * Throws when a parameter is out of range or a hex string is not hex.
 *
 * @example
 * encodeEnigmaPasswordHash({ saltHex, dkHex, ...ENIGMA_LEGACY_HASH_PARAMS })
 */
export function encodeEnigmaPasswordHash(hash: EnigmaPasswordHash): string {
  const invalidity = invalidityOf(hash);
  if (invalidity !== undefined) throw new Error(`Cannot store the ENiGMA½ password hash: ${invalidity}.`);
  return `${PREFIX}i=${hash.iterations},d=${hash.digest},l=${hash.keyLen}$${hash.saltHex}$${hash.dkHex}`;
}

/** Whether `stored` is in the ENiGMA½ form (by its prefix; a malformed one still is, and never verifies). */
export function isEnigmaPasswordHash(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

function decodeEnigmaPasswordHash(stored: string): EnigmaPasswordHash | undefined {
  const match = STORED_FORM.exec(stored);
  if (!match) return undefined;
  // The regex makes every group present; the defaults only satisfy the index types.
  const [, iterations = '', digest = '', keyLen = '', saltHex = '', dkHex = ''] = match;
  const hash = { saltHex, dkHex, iterations: Number(iterations), digest, keyLen: Number(keyLen) };
  return invalidityOf(hash) === undefined ? hash : undefined;
}

/**
 * Whether `password` is the one behind an ENiGMA½-form `stored` hash. Never throws: a malformed
 * hash is a failed verification. Derives on the libuv thread pool, not the event loop.
 */
export async function verifyEnigmaPassword(stored: string, password: string): Promise<boolean> {
  try {
    const hash = decodeEnigmaPasswordHash(stored);
    if (!hash) return false;
    // ENiGMA½'s quirk, kept bit for bit: PBKDF2's "password" is the hex text of the UTF-8
    // password and its salt is the ASCII of the salt's hex text, not the bytes either encodes.
    const derived = await pbkdf2Async(
      Buffer.from(Buffer.from(password, 'utf8').toString('hex'), 'ascii'),
      Buffer.from(hash.saltHex, 'ascii'),
      hash.iterations,
      hash.keyLen,
      hash.digest,
    );
    const expected = Buffer.from(hash.dkHex, 'hex');
    return derived.length === expected.length && timingSafeEqual(derived, expected);
  } catch {
    return false;
  }
}
