import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';
import { BadRequestError, type ErrorCodeOf } from '../errors.js';

/** The key types a user may register: what current OpenSSH clients make and the board's SSH server verifies. */
export const SSH_KEY_TYPES = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

/** A `.pub` line is well under 1 KiB (a 16384-bit RSA key, OpenSSH's largest, about 2.8 KiB). */
export const MAX_PUBLIC_KEY_BYTES = 16 * 1024;
/** RSA below this is breakable with enough money; OpenSSH refuses to make such keys. */
export const MIN_RSA_BITS = 2048;

/** One OpenSSH public key line, checked. */
export interface SshPublicKey {
  readonly type: SshKeyType;
  /** The public key blob (RFC 4253 §6.6): what the SSH handshake sends. */
  readonly blob: Buffer;
  /** The line's comment (often `user@host`), trimmed; "" when there is none. */
  readonly comment: string;
  readonly fingerprint: string;
}

/** What a refusal tells the user to paste instead. */
const WHAT_TO_PASTE =
  'Paste one line of your public key file, such as the contents of ~/.ssh/id_ed25519.pub (it starts with "ssh-ed25519").';
const MAKE_A_KEY = 'Make an Ed25519 key with `ssh-keygen -t ed25519` and paste the contents of ~/.ssh/id_ed25519.pub.';

const refused = (code: ErrorCodeOf<400>, why: string) =>
  new BadRequestError(code, why, [{ pointer: '/publicKey', message: why }]);
const malformed = (why: string) => refused('ssh-key.malformed', `${why} ${WHAT_TO_PASTE}`);

/** OpenSSH's fingerprint of a key: `SHA256:` and the unpadded base64 of the blob's SHA-256. */
export function sshFingerprint(blob: Uint8Array): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * The key type a public key algorithm of the SSH handshake stands for: an RSA key signs as
 * `rsa-sha2-256` or `rsa-sha2-512` (RFC 8332) and is still an `ssh-rsa` key.
 */
export function keyTypeOfAlgorithm(algorithm: string): string {
  return algorithm === 'rsa-sha2-256' || algorithm === 'rsa-sha2-512' ? 'ssh-rsa' : algorithm;
}

const isSshKeyType = (type: string): type is SshKeyType => (SSH_KEY_TYPES as readonly string[]).includes(type);

/**
 * Parses what a user pasted as their public key: exactly one OpenSSH line `type base64 [comment]`
 * of an accepted type whose blob is well formed, of that same type, and a key the platform's
 * crypto accepts (an ECDSA point on its curve; RSA of at least MIN_RSA_BITS). Anything else is
 * a BadRequestError pointing at `/publicKey` that says what to paste; a private key pasted by
 * mistake is said to be one.
 */
export function parseSshPublicKey(text: string): SshPublicKey {
  if (Buffer.byteLength(text) > MAX_PUBLIC_KEY_BYTES) {
    throw refused('ssh-key.too-large', `The public key is over 16 KiB, far more than one key. ${WHAT_TO_PASTE}`);
  }
  if (/PRIVATE KEY-----|PuTTY-User-Key-File-/.test(text)) {
    throw refused(
      'ssh-key.private-key',
      'This is a private key, which must stay on your computer: the board did not keep it. Paste the public key ' +
        'instead, the contents of the file of the same name ending in .pub, such as ~/.ssh/id_ed25519.pub.',
    );
  }
  const lines = text.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
  if (lines.length === 0) throw malformed('The public key is empty.');
  if (lines[0]?.trim() === '---- BEGIN SSH2 PUBLIC KEY ----') {
    throw malformed(
      "This is a key in the SSH2 (RFC 4716) format: turn it into OpenSSH's with `ssh-keygen -i -f key.pub`.",
    );
  }
  if (lines.length > 1) throw malformed('Paste one key, on one line (add each of several keys on its own).');
  const fields = /^\s*(\S+)(?:\s+(\S+))?(?:\s+(.*?))?\s*$/.exec(lines[0] ?? '');
  const [, type = '', base64 = '', comment = ''] = fields ?? [];
  assertAcceptedType(type, base64);
  if (!isSshKeyType(type)) throw malformed('This is not an OpenSSH public key.');
  const blob = decodeBase64(base64);
  assertWellFormedKey(type, blob);
  return { type, blob, comment, fingerprint: sshFingerprint(blob) };
}

/** Refuses a type the board does not take, saying which it takes; returns when `type` is one of them. */
function assertAcceptedType(type: string, base64: string): void {
  if (isSshKeyType(type)) {
    if (base64 === '') throw malformed(`The line has no key after "${type}".`);
    return;
  }
  if (type === 'ssh-dss') {
    throw refused('ssh-key.unsupported-type', `DSA keys are not accepted: OpenSSH itself gave them up. ${MAKE_A_KEY}`);
  }
  if (type.endsWith('-cert-v01@openssh.com')) {
    throw refused(
      'ssh-key.unsupported-type',
      `Certificates are not accepted, only plain public keys. ${WHAT_TO_PASTE}`,
    );
  }
  // A word shaped like a key type followed by a base64 field: a key, of a type not taken here.
  if (/^[a-z][a-z0-9@.+-]*$/.test(type) && /^[A-Za-z0-9+/]{16,}={0,2}$/.test(base64)) {
    throw refused(
      'ssh-key.unsupported-type',
      `Keys of type "${type}" are not accepted; these are: ${SSH_KEY_TYPES.join(', ')} (RSA of ${MIN_RSA_BITS} bits or more). ${MAKE_A_KEY}`,
    );
  }
}

function decodeBase64(base64: string): Buffer {
  // Buffer.from skips what is not base64: compared with its own encoding, a stray character shows.
  const blob = Buffer.from(base64, 'base64');
  if (blob.length === 0 || blob.toString('base64') !== base64) {
    throw malformed('The key after the type is not valid base64: was the line cut or changed?');
  }
  return blob;
}

/** Reads the length-prefixed strings of an SSH wire encoding (RFC 4251 §5), refusing a short or overlong blob. */
function blobReader(blob: Buffer) {
  let offset = 0;
  const truncated = () => malformed('The key data is cut short: was the line cut?');
  return {
    bytes(): Buffer {
      if (offset + 4 > blob.length) throw truncated();
      const length = blob.readUInt32BE(offset);
      if (offset + 4 + length > blob.length) throw truncated();
      const value = blob.subarray(offset + 4, offset + 4 + length);
      offset += 4 + length;
      return value;
    },
    text(): string {
      return this.bytes().toString('latin1');
    },
    /** An mpint that must be positive, as its magnitude (no sign byte). */
    positiveInteger(): Buffer {
      const value = this.bytes();
      if (value.length === 0 || ((value[0] ?? 0) & 0x80) !== 0) throw malformed('The key data holds a bad number.');
      let start = 0;
      while (start < value.length - 1 && value[start] === 0) start += 1;
      return value.subarray(start);
    },
    end(): void {
      if (offset !== blob.length) throw malformed('The key data goes on past the key.');
    },
  };
}

const CURVES = {
  'ecdsa-sha2-nistp256': { name: 'nistp256', jwk: 'P-256', coordinateBytes: 32 },
  'ecdsa-sha2-nistp384': { name: 'nistp384', jwk: 'P-384', coordinateBytes: 48 },
  'ecdsa-sha2-nistp521': { name: 'nistp521', jwk: 'P-521', coordinateBytes: 66 },
} as const;

/** Checks the blob is one key of `type` and nothing else, and that it is a usable key. */
function assertWellFormedKey(type: SshKeyType, blob: Buffer): void {
  const reader = blobReader(blob);
  const innerType = reader.text();
  if (innerType !== type) {
    throw malformed(`The line says "${type}" but its key data is of type "${innerType.slice(0, 40)}".`);
  }
  let jwk: JsonWebKey;
  if (type === 'ssh-ed25519') {
    const point = reader.bytes();
    if (point.length !== 32) throw malformed('The Ed25519 key is not 32 bytes long.');
    jwk = { kty: 'OKP', crv: 'Ed25519', x: point.toString('base64url') };
  } else if (type === 'ssh-rsa') {
    const exponent = reader.positiveInteger();
    const modulus = reader.positiveInteger();
    const bits = (modulus.length - 1) * 8 + (modulus[0] ?? 0).toString(2).length;
    if (bits < MIN_RSA_BITS) {
      throw refused(
        'ssh-key.rsa-too-short',
        `This RSA key has ${bits} bits; at least ${MIN_RSA_BITS} are needed. ${MAKE_A_KEY}`,
      );
    }
    jwk = { kty: 'RSA', n: modulus.toString('base64url'), e: exponent.toString('base64url') };
  } else {
    const curve = CURVES[type];
    if (reader.text() !== curve.name) throw malformed(`The key data names another curve than ${curve.name}.`);
    const point = reader.bytes();
    // Uncompressed (0x04, x, y): what OpenSSH writes, and all RFC 5656 requires a peer to read.
    if (point.length !== 1 + 2 * curve.coordinateBytes || point[0] !== 0x04) {
      throw malformed(`The ${curve.name} key is not an uncompressed point of the curve.`);
    }
    const x = point.subarray(1, 1 + curve.coordinateBytes);
    const y = point.subarray(1 + curve.coordinateBytes);
    jwk = { kty: 'EC', crv: curve.jwk, x: x.toString('base64url'), y: y.toString('base64url') };
  }
  reader.end();
  try {
    // The platform's own check (an ECDSA point on its curve, an RSA key it can verify with).
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw malformed('The key data is not a valid key.');
  }
}
