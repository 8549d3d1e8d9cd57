import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * binkp's challenge-response password check (FTS-1027): the answering side offers a challenge in
 * its first M_NUL (`OPT CRAM-MD5-<hex>`), the caller answers `M_PWD CRAM-MD5-<hex digest>`, the
 * HMAC-MD5 of the challenge's bytes keyed with the session password. The password never crosses
 * the wire, and a recorded answer is worth nothing against the next challenge.
 */

/**
 * 16 bytes: the standard allows 8–64, but binkd has only ever sent 16 and some mailers
 * authenticate only against exactly that many.
 */
export const CRAM_CHALLENGE_BYTES = 16;
/** Longest challenge read from a remote (FTS-1027's 64 bytes). */
const MAX_CHALLENGE_BYTES = 64;

export function createCramChallenge(): Buffer {
  return randomBytes(CRAM_CHALLENGE_BYTES);
}

/** The OPT word offering `challenge`: `CRAM-MD5-<lower-case hex>`. */
export function formatCramOption(challenge: Uint8Array): string {
  return `CRAM-MD5-${Buffer.from(challenge).toString('hex')}`;
}

/**
 * The challenge an OPT word offers, if it offers one baud can answer: `CRAM-<algorithms>-<hex>`
 * where the `/`-separated algorithms include MD5 (`CRAM-SHA1/MD5-…` too). Null for any other
 * word, an odd number of hex digits, or fewer than 8 or more than 64 bytes.
 */
export function parseCramOption(word: string): Buffer | null {
  const match = /^CRAM-([A-Za-z0-9/]+)-([0-9a-fA-F]+)$/.exec(word);
  if (!match) return null;
  const [, algorithms = '', hex = ''] = match;
  if (!algorithms.toUpperCase().split('/').includes('MD5')) return null;
  if (hex.length % 2 !== 0 || hex.length < 16 || hex.length > MAX_CHALLENGE_BYTES * 2) return null;
  return Buffer.from(hex, 'hex');
}

/**
 * What the caller sends as M_PWD for `challenge`: `CRAM-MD5-` and the lower-case hex of
 * HMAC-MD5(key: the password's UTF-8, message: the challenge's bytes).
 *
 * @example cramMd5Response('tanstaaftanstaaf', Buffer.from('<1896.697170952@postoffice.reston.mci.net>'))
 * // 'CRAM-MD5-b913a602c7eda7a495b4e6e7334d3890' (RFC 2195's example)
 */
export function cramMd5Response(password: string, challenge: Uint8Array): string {
  return `CRAM-MD5-${createHmac('md5', password).update(challenge).digest('hex')}`;
}

/**
 * Whether `response` (an M_PWD) proves the password for `challenge`. The hex digest is compared
 * case-insensitively (binkd does) and in constant time.
 */
export function isCramMd5ResponseValid(response: string, password: string, challenge: Uint8Array): boolean {
  return isSameSecret(response.toLowerCase(), cramMd5Response(password, challenge).toLowerCase());
}

/** Compares two secrets in time that depends on neither: both are hashed to one length first. */
export function isSameSecret(given: string, expected: string): boolean {
  const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(hash(given), hash(expected));
}
