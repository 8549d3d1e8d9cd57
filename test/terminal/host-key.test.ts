import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadOrCreateHostKey, newEd25519HostKey } from '../../src/terminal/ssh-host-key.js';

describe('SSH host key', () => {
  let dir: string;
  let keyPath: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-host-key-'));
    keyPath = path.join(dir, 'keys', 'ssh_host_ed25519_key');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes an ed25519 key at first start, readable by its owner only, and reuses it after', async () => {
    const made = await loadOrCreateHostKey(keyPath);
    expect(made.wasCreated).toBe(true);
    expect(made.privateKey.type).toBe('ssh-ed25519');
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyPath, 'utf8')).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n/);
    const again = await loadOrCreateHostKey(keyPath);
    expect(again.wasCreated).toBe(false);
    expect(again.fingerprint).toBe(made.fingerprint);
  });

  it('reports the fingerprint ssh-keygen -lf prints for the key', async () => {
    const { fingerprint } = await loadOrCreateHostKey(keyPath);
    const printed = execFileSync('ssh-keygen', ['-l', '-f', keyPath], { encoding: 'utf8' });
    expect(fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(printed.split(' ')[1]).toBe(fingerprint);
  });

  it('serves one key to starts racing for a missing one, and leaves no temporary file', async () => {
    const keys = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateHostKey(keyPath)));
    expect(new Set(keys.map((key) => key.fingerprint)).size).toBe(1);
    expect(keys.filter((key) => key.wasCreated)).toHaveLength(1);
    expect(readdirSync(path.dirname(keyPath))).toEqual(['ssh_host_ed25519_key']);
  });

  it('makes the key again when the SSH library drops the leading zero byte of its public key', () => {
    const keyLength = (pair: { public: string }) =>
      Buffer.from(pair.public.split(' ')[1] ?? '', 'base64').readUInt32BE(15);
    // One pair in 256 comes out so; found by trying, a few milliseconds.
    let broken = ssh2.utils.generateKeyPairSync('ed25519');
    while (keyLength(broken) === 32) broken = ssh2.utils.generateKeyPairSync('ed25519');
    // Written as it is, the file would not even be read back: the first start would fail for good.
    expect(ssh2.utils.parseKey(broken.private)).toBeInstanceOf(Error);
    let sound = ssh2.utils.generateKeyPairSync('ed25519');
    while (keyLength(sound) !== 32) sound = ssh2.utils.generateKeyPairSync('ed25519');
    const pairs = [broken, broken, sound];
    expect(newEd25519HostKey(() => pairs.shift() ?? sound)).toBe(sound.private);
    expect(pairs).toEqual([]);
  });

  it('uses a key the sysop put there (RSA too) without touching it', async () => {
    const rsa = ssh2.utils.generateKeyPairSync('rsa', { bits: 2048 });
    mkdirSync(path.dirname(keyPath), { recursive: true });
    writeFileSync(keyPath, rsa.private, { mode: 0o600 });
    const key = await loadOrCreateHostKey(keyPath);
    expect(key).toMatchObject({ wasCreated: false });
    expect(key.privateKey.type).toBe('ssh-rsa');
    expect(readFileSync(keyPath, 'utf8')).toBe(rsa.private);
  });

  it('stops start-up with one line naming the path when the file is not a key', async () => {
    mkdirSync(path.dirname(keyPath), { recursive: true });
    writeFileSync(keyPath, '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n');
    const error = await loadOrCreateHostKey(keyPath).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(
      new RegExp(`^contentServers\\.ssh\\.hostKeyPath: ${keyPath}: not a usable private key \\([^\\n]+\\)$`),
    );
  });

  it('refuses a public key where the private key belongs', async () => {
    mkdirSync(path.dirname(keyPath), { recursive: true });
    writeFileSync(keyPath, ssh2.utils.generateKeyPairSync('ed25519').public);
    await expect(loadOrCreateHostKey(keyPath)).rejects.toThrow(
      `contentServers.ssh.hostKeyPath: ${keyPath}: not a private key`,
    );
  });

  it('stops start-up naming the path when the file cannot be read, and makes no key over it', async () => {
    // A directory where the file belongs: unreadable as a file even for root, who reads any mode.
    mkdirSync(keyPath, { recursive: true });
    await expect(loadOrCreateHostKey(keyPath)).rejects.toThrow(
      `contentServers.ssh.hostKeyPath: ${keyPath}: cannot be read (EISDIR)`,
    );
    expect(statSync(keyPath).isDirectory()).toBe(true);
  });
});
