import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ssh2, { type ParsedKey } from 'ssh2';
import { ConfigError } from '../config/config-error.js';

/** The node's SSH host key, ready for the server, and what callers check it by. */
export interface SshHostKey {
  readonly privateKey: ParsedKey;
  /** As `ssh-keygen -lf` prints it: `SHA256:` and the unpadded base64 of the public key's SHA-256. */
  readonly fingerprint: string;
  /** This start made the key (the file did not exist). */
  readonly wasCreated: boolean;
}

/** `SHA256:…` of an SSH public key blob (the wire format, as in `authorized_keys` once base64-decoded). */
export function sshFingerprint(publicKeyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicKeyBlob).digest('base64').replace(/=+$/, '')}`;
}

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The length of the key in an `ssh-ed25519` public key blob: 32 in every key OpenSSH makes. */
const ed25519KeyLength = (blob: Buffer) => blob.readUInt32BE(4 + 'ssh-ed25519'.length);

/**
 * A new Ed25519 host key, as the text of an OpenSSH private key file. ssh2 drops the leading zero
 * byte of a public key that starts with one (one key in 256), writing a file that neither it nor
 * OpenSSH reads back: such a pair is made again, or one first start in 256 would fail for good.
 */
export function newEd25519HostKey(
  generate: () => { readonly private: string; readonly public: string } = () =>
    ssh2.utils.generateKeyPairSync('ed25519'),
): string {
  for (;;) {
    const pair = generate();
    const blob = Buffer.from(pair.public.split(' ')[1] ?? '', 'base64');
    if (blob.length > 19 && ed25519KeyLength(blob) === 32) return pair.private;
  }
}

function unusableKey(keyPath: string, why: string): ConfigError {
  return new ConfigError('config.invalid', `contentServers.ssh.hostKeyPath: ${keyPath}: ${why}`);
}

function parseHostKey(keyPath: string, text: string): ParsedKey {
  const parsed: ParsedKey | ParsedKey[] | Error = ssh2.utils.parseKey(text);
  if (parsed instanceof Error) throw unusableKey(keyPath, `not a usable private key (${parsed.message})`);
  // An OpenSSH key file may hold several keys; OpenSSH itself reads the first.
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key === undefined || !key.isPrivateKey()) throw unusableKey(keyPath, 'not a private key');
  return key;
}

/**
 * Writes `text` as `keyPath` unless a key is there already, never leaving a half-written file
 * under that name: it goes to a temporary file first (mode 0600), which is then linked to the
 * name. A link, unlike a rename, never replaces: of two nodes making a key at once, one links
 * and the other finds that key, so both serve the same one. Returns whether ours was linked.
 */
async function writeKeyOnce(keyPath: string, text: string): Promise<boolean> {
  await mkdir(path.dirname(keyPath), { recursive: true });
  const temporary = `${keyPath}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, keyPath);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    // A file system without hard links (some network and FUSE mounts): the rename is still atomic.
    if (errnoOf(error) === 'EPERM' || errnoOf(error) === 'ENOTSUP' || errnoOf(error) === 'ENOSYS') {
      await rename(temporary, keyPath);
      return true;
    }
    throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

async function readKeyFile(keyPath: string): Promise<string | null> {
  try {
    return await readFile(keyPath, 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw unusableKey(keyPath, `cannot be read (${errnoOf(error) ?? (error as Error).message})`);
  }
}

/**
 * The host key at `keyPath`, made there (ed25519, OpenSSH format) when there is none yet. A
 * file that cannot be read or is not an unencrypted private key stops start-up with a
 * `ConfigError` naming the path: a new key would make every caller's client warn of an attack.
 */
export async function loadOrCreateHostKey(keyPath: string): Promise<SshHostKey> {
  let text = await readKeyFile(keyPath);
  let wasCreated = false;
  if (text === null) {
    const made = newEd25519HostKey();
    try {
      wasCreated = await writeKeyOnce(keyPath, made);
    } catch (error) {
      throw unusableKey(keyPath, `cannot be written (${errnoOf(error) ?? (error as Error).message})`);
    }
    text = wasCreated ? made : await readKeyFile(keyPath);
    if (text === null) throw unusableKey(keyPath, 'vanished while it was being made');
  }
  const privateKey = parseHostKey(keyPath, text);
  return { privateKey, fingerprint: sshFingerprint(privateKey.getPublicSSH()), wasCreated };
}
