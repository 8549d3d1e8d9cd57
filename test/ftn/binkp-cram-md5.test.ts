import { describe, expect, it } from 'vitest';
import {
  cramMd5Response,
  createCramChallenge,
  formatCramOption,
  isCramMd5ResponseValid,
  parseCramOption,
} from '../../src/ftn/cram-md5.js';

describe('CRAM-MD5 (FTS-1027)', () => {
  it("answers RFC 2195's example challenge with its digest", () => {
    const challenge = Buffer.from('<1896.697170952@postoffice.reston.mci.net>');
    expect(cramMd5Response('tanstaaftanstaaf', challenge)).toBe('CRAM-MD5-b913a602c7eda7a495b4e6e7334d3890');
  });

  it('answers a challenge binkd 1.1a sent with the digest binkd accepted', () => {
    // Recorded from a session with Debian's binkd: OPT CRAM-MD5-76edde…, password "secret".
    const challenge = parseCramOption('CRAM-MD5-76edde5b0dc5c5267c0562df195888ee');
    expect(challenge).not.toBeNull();
    expect(cramMd5Response('secret', challenge ?? Buffer.alloc(0))).toBe('CRAM-MD5-15f3592aa6afaf2feddf2760b280d06a');
  });

  it('offers 16 random bytes as lower-case hex and reads its own offer back', () => {
    const challenge = createCramChallenge();
    expect(challenge).toHaveLength(16);
    expect(createCramChallenge().equals(challenge)).toBe(false);
    expect(formatCramOption(challenge)).toMatch(/^CRAM-MD5-[0-9a-f]{32}$/);
    expect(parseCramOption(formatCramOption(challenge))).toEqual(challenge);
  });

  it('takes an offer listing MD5 among other hashes, and nothing else', () => {
    expect(parseCramOption('CRAM-SHA1/MD5-0011223344556677')).toEqual(Buffer.from('0011223344556677', 'hex'));
    expect(parseCramOption('CRAM-SHA1-0011223344556677')).toBeNull();
    expect(parseCramOption('CRAM-MD5-001122')).toBeNull();
    expect(parseCramOption('CRAM-MD5-0011223344556677a')).toBeNull();
    expect(parseCramOption(`CRAM-MD5-${'00'.repeat(65)}`)).toBeNull();
    expect(parseCramOption('NR')).toBeNull();
  });

  it('checks an answer case-insensitively against the password, and refuses any other', () => {
    const challenge = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const answer = cramMd5Response('pw', challenge);
    expect(isCramMd5ResponseValid(answer.toUpperCase(), 'pw', challenge)).toBe(true);
    expect(isCramMd5ResponseValid(answer, 'pW', challenge)).toBe(false);
    expect(isCramMd5ResponseValid(cramMd5Response('pw', createCramChallenge()), 'pw', challenge)).toBe(false);
    expect(isCramMd5ResponseValid('pw', 'pw', challenge)).toBe(false);
  });
});
