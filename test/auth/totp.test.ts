import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, matchingStep, otpauthUrl, timeStepAt, totpCode } from '../../src/auth/totp.js';
import { createTwoFactorKeys, newRecoveryCode } from '../../src/auth/two-factor-keys.js';

// RFC 6238 Appendix B: the 8-digit values' last 6 digits are the 6-digit codes.
const SHA1_KEY = Buffer.from('12345678901234567890');
const SHA256_KEY = Buffer.from('12345678901234567890123456789012');
const at = (seconds: number) => new Date(seconds * 1000);

describe('TOTP (RFC 6238)', () => {
  it('computes the RFC 6238 test vectors, SHA-1 and SHA-256', () => {
    const vectors: [number, string, string][] = [
      [59, '287082', '119246'],
      [1111111109, '081804', '084774'],
      [1111111111, '050471', '062674'],
      [1234567890, '005924', '819424'],
      [2000000000, '279037', '698825'],
      [20000000000, '353130', '737706'],
    ];
    for (const [seconds, sha1, sha256] of vectors) {
      expect(totpCode(SHA1_KEY, timeStepAt(at(seconds)), 'sha1')).toBe(sha1);
      expect(totpCode(SHA256_KEY, timeStepAt(at(seconds)), 'sha256')).toBe(sha256);
    }
  });

  it('accepts one step of skew either way and names the step it matched', () => {
    const now = at(1111111109);
    const step = timeStepAt(now);
    for (const offset of [-1, 0, 1]) {
      expect(matchingStep(SHA1_KEY, totpCode(SHA1_KEY, step + offset), now, 'sha1')).toBe(step + offset);
    }
    for (const offset of [-2, 2]) {
      expect(matchingStep(SHA1_KEY, totpCode(SHA1_KEY, step + offset), now, 'sha1')).toBeNull();
    }
    expect(matchingStep(SHA1_KEY, '12345', now, 'sha1')).toBeNull();
    expect(matchingStep(SHA1_KEY, '1234567', now, 'sha1')).toBeNull();
  });

  it('reads and writes base32 as authenticator apps do (RFC 4648 test vectors, any case, spaces)', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('MZXW6YTBOI')?.toString()).toBe('foobar');
    expect(base32Decode('mzxw 6ytb oi======')?.toString()).toBe('foobar');
    expect(base32Decode('MZXW6YTBO1')).toBeNull();
    expect(base32Encode(SHA1_KEY)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  });

  it('builds the otpauth URL with the board as issuer', () => {
    expect(otpauthUrl('Sector 7 BBS', 'alice', 'MZXW6YTBOI')).toBe(
      'otpauth://totp/Sector%207%20BBS:alice?secret=MZXW6YTBOI&issuer=Sector%207%20BBS',
    );
  });
});

describe('two-factor keys', () => {
  const keys = createTwoFactorKeys(Buffer.alloc(32, 7));

  it('seals a secret so that only the same board key and the same user open it', () => {
    const sealed = keys.seal(7, SHA1_KEY);
    expect(sealed).not.toContain(SHA1_KEY.toString('base64url'));
    expect(keys.open(7, sealed)).toEqual(SHA1_KEY);
    expect(() => keys.open(8, sealed)).toThrow();
    expect(() => createTwoFactorKeys(Buffer.alloc(32, 8)).open(7, sealed)).toThrow();
    // Each sealing has its own nonce.
    expect(keys.seal(7, SHA1_KEY)).not.toBe(sealed);
  });

  it('hashes recovery codes per user, whatever case and dashes they are typed with', () => {
    const code = newRecoveryCode();
    expect(code).toMatch(/^[a-km-np-z2-9]{4}-[a-km-np-z2-9]{4}-[a-km-np-z2-9]{4}$/);
    expect(keys.hashRecoveryCode(1, code)).toBe(keys.hashRecoveryCode(1, code.toUpperCase().replaceAll('-', ' ')));
    expect(keys.hashRecoveryCode(2, code)).not.toBe(keys.hashRecoveryCode(1, code));
  });
});
