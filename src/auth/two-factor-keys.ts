import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** The `settings` entry holding the board secret both keys below are derived from. */
export const TWO_FACTOR_SECRET_SETTING = 'twoFactorSecret';

/** AES-256-GCM: a 96-bit nonce (NIST SP 800-38D §8.2) and the full 128-bit tag. */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_VERSION = 'v1';

/**
 * What two-factor login keeps secret at rest, derived from one board secret (`settings`, made on
 * first use like the jwtSecret, so every node derives the same keys): the key the TOTP shared
 * secrets are sealed with, and the key recovery codes are hashed with. A copy of the database
 * alone (a backup, a dump) then yields neither a shared secret nor a guessable code list; it
 * does when the settings table goes with it, as everything else keyed there does.
 */
export interface TwoFactorKeys {
  /** The shared secret sealed (AES-256-GCM, bound to the user) for the `totp_credentials` row. */
  seal(userId: number, secret: Uint8Array): string;
  /** The shared secret of a sealed one; throws when it was tampered with or sealed for another user. */
  open(userId: number, sealed: string): Buffer;
  /**
   * The stored form of a recovery code: HMAC-SHA-256 under a board key, of the user and the
   * normalised code. Not argon2: ten of those per enrolment, and one per recovery login, would
   * cost seconds, and a slow hash protects low-entropy passwords, not random codes of 50 bits
   * or more; the key keeps a stolen table from being searched offline, the user id keeps one
   * code's hash from matching another account's.
   */
  hashRecoveryCode(userId: number, code: string): string;
}

export function createTwoFactorKeys(boardSecret: Uint8Array): TwoFactorKeys {
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', boardSecret, Buffer.alloc(0), purpose, 32));
  const sealKey = derive('baud two-factor: TOTP secrets at rest');
  const recoveryKey = derive('baud two-factor: recovery codes');
  // The user id as additional data: a sealed secret copied to another user's row does not open.
  const boundTo = (userId: number) => Buffer.from(`user:${userId}`);

  return {
    seal(userId, secret) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', sealKey, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(boundTo(userId));
      const sealed = Buffer.concat([nonce, cipher.update(secret), cipher.final(), cipher.getAuthTag()]);
      return `${SEALED_VERSION}.${sealed.toString('base64url')}`;
    },

    open(userId, sealed) {
      const [version, body] = sealed.split('.');
      if (version !== SEALED_VERSION || body === undefined) throw new Error('unknown sealed TOTP secret format');
      const bytes = Buffer.from(body, 'base64url');
      const nonce = bytes.subarray(0, NONCE_BYTES);
      const tag = bytes.subarray(bytes.length - TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', sealKey, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(boundTo(userId));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    },

    hashRecoveryCode(userId, code) {
      return createHmac('sha256', recoveryKey)
        .update(`${userId}:${normaliseRecoveryCode(code)}`)
        .digest('hex');
    },
  };
}

/** Recovery codes as people type them: any case, with or without the dashes and spaces shown. */
export const normaliseRecoveryCode = (code: string): string => code.toLowerCase().replace(/[\s-]/g, '');

// Lower-case letters and digits without l, o, 0 and 1, which are misread off paper: 32 of them.
const RECOVERY_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const RECOVERY_CHARACTERS = 12;

/**
 * A new recovery code: 12 characters of a 32-letter alphabet (60 bits), shown as
 * `xxxx-xxxx-xxxx`. The alphabet has exactly 32 letters, so each random byte's low 5 bits pick
 * one without bias.
 */
export function newRecoveryCode(): string {
  const bytes = randomBytes(RECOVERY_CHARACTERS);
  const letters = [...bytes].map((byte) => RECOVERY_ALPHABET[byte & 31]).join('');
  return `${letters.slice(0, 4)}-${letters.slice(4, 8)}-${letters.slice(8)}`;
}
