import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { createConcurrencyLimit } from '../concurrency-limit.js';

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

/** The digests baud verifies, with their output in bytes; ENiGMA½ uses sha512 (sha1 before `pw_hash_params` existed). */
const DIGEST_BYTES: Readonly<Record<string, number>> = Object.freeze({ sha1: 20, sha256: 32, sha512: 64 });
export const ENIGMA_DIGESTS: readonly string[] = Object.freeze(Object.keys(DIGEST_BYTES));

/** What a user has without a `pw_hash_params` property: ENiGMA½'s parameters before it stored them. */
export const ENIGMA_LEGACY_HASH_PARAMS: EnigmaHashParams = Object.freeze({
  iterations: 1000,
  digest: 'sha1',
  keyLen: 128,
});

/**
 * The most PBKDF2 work one verification may cost, in HMAC rounds: iterations times the blocks
 * of the key (PBKDF2 runs every iteration once per digest-sized block). ENiGMA½'s parameters
 * cost 210,000 (sha512, 64-byte key) and its legacy ones 7,000 (sha1, 128 bytes); 500,000 took
 * 1.3 s on our 2-core test machine. A hash beyond it (a hostile or corrupt board: 10,000,000
 * iterations and a 1,024-byte key held a libuv thread for minutes) is never stored by the
 * import, and one stored before the bound existed is never derived at login.
 */
export const MAX_PBKDF2_ROUNDS = 500_000;
const MAX_KEY_LEN = 256;

/**
 * Derivations running at once. libuv's pool has four threads by default, and they also do every
 * file read and write (downloads, uploads): PBKDF2 may hold two, however many logins wait.
 */
const pbkdf2Limit = createConcurrencyLimit(2);

// `$` and a scheme name that argon2's PHC strings (`$argon2id$…`) can never start with.
const PREFIX = '$enigma-pbkdf2$';
const STORED_FORM =
  /^\$enigma-pbkdf2\$i=([1-9][0-9]{0,7}),d=([a-z0-9]+),l=([1-9][0-9]{0,3})\$([0-9a-fA-F]+)\$([0-9a-fA-F]+)$/;
const HEX = /^[0-9a-fA-F]+$/;

/** Why `hash` cannot be stored or verified, or undefined when it can. Never quotes the salt or key. */
function invalidityOf(hash: EnigmaPasswordHash): string | undefined {
  if (!Number.isInteger(hash.iterations) || hash.iterations < 1) return 'iterations must be a positive integer';
  const digestBytes = Object.hasOwn(DIGEST_BYTES, hash.digest) ? DIGEST_BYTES[hash.digest] : undefined;
  if (digestBytes === undefined) return `digest must be one of ${ENIGMA_DIGESTS.join(', ')}`;
  if (!Number.isInteger(hash.keyLen) || hash.keyLen < 1 || hash.keyLen > MAX_KEY_LEN) {
    return `keyLen must be an integer from 1 to ${MAX_KEY_LEN}`;
  }
  const rounds = hash.iterations * Math.ceil(hash.keyLen / digestBytes);
  if (rounds > MAX_PBKDF2_ROUNDS) {
    return `iterations × key blocks must be at most ${MAX_PBKDF2_ROUNDS.toLocaleString('en-US')} (it is ${rounds.toLocaleString('en-US')})`;
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
 * hash, or one past `MAX_PBKDF2_ROUNDS` (stored before the bound), is a failed verification,
 * decided without deriving. Derives on the libuv thread pool, not the event loop, at most two at
 * a time.
 */
export async function verifyEnigmaPassword(stored: string, password: string): Promise<boolean> {
  try {
    const hash = decodeEnigmaPasswordHash(stored);
    if (!hash) return false;
    // ENiGMA½'s quirk, kept bit for bit: PBKDF2's "password" is the hex text of the UTF-8
    // password and its salt is the ASCII of the salt's hex text, not the bytes either encodes.
    const derived = await pbkdf2Limit.run(() =>
      pbkdf2Async(
        Buffer.from(Buffer.from(password, 'utf8').toString('hex'), 'ascii'),
        Buffer.from(hash.saltHex, 'ascii'),
        hash.iterations,
        hash.keyLen,
        hash.digest,
      ),
    );
    const expected = Buffer.from(hash.dkHex, 'hex');
    return derived.length === expected.length && timingSafeEqual(derived, expected);
  } catch {
    return false;
  }
}
