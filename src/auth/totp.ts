import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): 6 digits, 30-second steps.
 * Pure functions of a key and a time; where keys are kept and which steps were used is the
 * two-factor service's. baud enrols with HMAC-SHA-1 (what every authenticator app reads from an
 * `otpauth://` URL); SHA-256 exists for the ENiGMA½ accounts enrolled with its `rfc6238_TOTP`.
 */

export const TOTP_DIGITS = 6;
export const TOTP_STEP_SECONDS = 30;
/** Steps of clock skew accepted either way (RFC 6238 §5.2 recommends at most one). */
export const TOTP_SKEW_STEPS = 1;
/** 160 bits: the HMAC-SHA-1 block RFC 4226 §4 recommends as the shared secret's length. */
const SECRET_BYTES = 20;

export type TotpAlgorithm = 'sha1' | 'sha256';

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (authenticator apps take it so). */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * The bytes of an RFC 4648 base32 text, read as authenticator apps read it: any case, spaces
 * and padding ignored. Null when a character is not base32.
 */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of clean) {
    const value = BASE32_ALPHABET.indexOf(char);
    if (value < 0) return null;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((buffer >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new random shared secret for an enrolment. */
export const newTotpKey = (): Buffer => randomBytes(SECRET_BYTES);

/** The time step `at` falls in (RFC 6238 §4: T0 = 0). */
export const timeStepAt = (at: Date): number => Math.floor(at.getTime() / 1000 / TOTP_STEP_SECONDS);

/** The HOTP value (RFC 4226 §5.3) of `key` at counter `step`, as 6 digits. */
export function totpCode(key: Uint8Array, step: number, algorithm: TotpAlgorithm = 'sha1'): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const digest = createHmac(algorithm, key).update(counter).digest();
  // The last nibble picks where the 31-bit value starts (dynamic truncation).
  const offset = (digest[digest.length - 1] ?? 0) & 0x0f;
  const value = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(value % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

/** Whether `code` has the shape of a TOTP code (else it may be a recovery code). */
export const looksLikeTotpCode = (code: string): boolean => /^\d{6}$/.test(code.replace(/\s/g, ''));

/**
 * The step whose code `code` is, among the steps within `TOTP_SKEW_STEPS` of `at`, or null.
 * Every candidate step is compared, each in constant time, so the time taken says nothing of
 * which (if any) matched.
 */
export function matchingStep(key: Uint8Array, code: string, at: Date, algorithm: TotpAlgorithm): number | null {
  const given = Buffer.from(code.replace(/\s/g, ''));
  if (given.length !== TOTP_DIGITS) return null;
  const now = timeStepAt(at);
  let matched: number | null = null;
  for (let step = now - TOTP_SKEW_STEPS; step <= now + TOTP_SKEW_STEPS; step += 1) {
    // The latest matching step wins: it is the one a replay check must remember.
    if (timingSafeEqual(Buffer.from(totpCode(key, step, algorithm)), given)) matched = step;
  }
  return matched;
}

/** The `otpauth://` URL an authenticator app enrols from (Key Uri Format, as Google Authenticator reads it). */
export function otpauthUrl(issuer: string, account: string, secretBase32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret: secretBase32, issuer });
  return `otpauth://totp/${label}?${query.toString().replace(/\+/g, '%20')}`;
}
