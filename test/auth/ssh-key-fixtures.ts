import { createHash, randomBytes } from 'node:crypto';
import { utils } from 'ssh2';

/** A key pair as `ssh-keygen` would leave it: the `.pub` line, its blob, and the private key file's text. */
export interface TestSshKey {
  /** `type base64 comment`, the contents of `~/.ssh/id_*.pub`. */
  readonly line: string;
  readonly type: string;
  /** The public key blob the SSH handshake sends. */
  readonly blob: Buffer;
  readonly fingerprint: string;
  /** The OpenSSH private key (`-----BEGIN OPENSSH PRIVATE KEY-----`). */
  readonly privateKey: string;
}

/**
 * A key made with `ssh-keygen -t ed25519 -C alice@laptop`; `ssh-keygen -lf` says its fingerprint
 * is FINGERPRINT_BY_SSH_KEYGEN. Written down, so the board's fingerprint is checked against
 * OpenSSH's, not against itself.
 */
export const KEY_MADE_BY_SSH_KEYGEN =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMgpVmIgPR8JIQ0x4dj1WdGlgO0ZIUnR81f3lX5XC1be alice@laptop';
export const FINGERPRINT_BY_SSH_KEYGEN = 'SHA256:+JGxGmSvZ2an6LD4Q5YAmi/cP6/YB1xlGwEb5h6W+vs';

type KeyKind = 'ed25519' | 'ecdsa-256' | 'ecdsa-384' | 'ecdsa-521' | 'rsa-2048' | 'rsa-1024';

/** The length of the key in an `ssh-ed25519` blob: 32 in every key OpenSSH makes. */
const ed25519KeyLength = (blob: Buffer) => blob.readUInt32BE(4 + 'ssh-ed25519'.length);

/** A new key pair of `kind`, made by the SSH library (not by the board's code). */
export function newSshKey(kind: KeyKind, comment = ''): TestSshKey {
  const [family, size] = kind.split('-') as ['ed25519' | 'ecdsa' | 'rsa', string | undefined];
  for (;;) {
    const pair =
      family === 'ed25519'
        ? utils.generateKeyPairSync('ed25519', { comment })
        : utils.generateKeyPairSync(family, { bits: Number(size), comment });
    const [type = '', base64 = ''] = pair.public.split(' ');
    const blob = Buffer.from(base64, 'base64');
    // The library writes an Ed25519 key whose first byte is 0 as 31 bytes (one key in 256), a
    // blob OpenSSH never makes and the board rightly refuses: such a pair is made again.
    if (family === 'ed25519' && ed25519KeyLength(blob) !== 32) continue;
    return {
      line: pair.public.trim(),
      type,
      blob,
      fingerprint: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
      privateKey: pair.private,
    };
  }
}

/** An SSH wire string (RFC 4251 §5): uint32 length, then the bytes. */
export function sshString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** A `.pub` line of `type` around `blob`. */
export function keyLine(type: string, blob: Buffer, comment = ''): string {
  return `${type} ${blob.toString('base64')}${comment === '' ? '' : ` ${comment}`}`;
}

/** A DSA public key line (`ssh-dss`: p, q, g, y), as old `ssh-keygen -t dsa` made them. */
export function dsaKeyLine(): string {
  const mpint = (bytes: number) => sshString(Buffer.concat([Buffer.from([0]), randomBytes(bytes)]));
  return keyLine(
    'ssh-dss',
    Buffer.concat([sshString('ssh-dss'), mpint(128), mpint(20), mpint(128), mpint(128)]),
    'old@box',
  );
}
