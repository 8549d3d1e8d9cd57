import { describe, expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from '../../src/webhooks/webhook-signature.js';

const SECRET = 'whsec_test';
const BODY = '{"id":1}';
const T = 1700000000;
// Computed once with `printf '1700000000.{"id":1}' | openssl dgst -sha256 -hmac whsec_test`.
const KNOWN_DIGEST = '2f441ba4b3b2d50d28a9ab9d9fd8880376ecd1eb5d0435401553f5d8d0a5dcf8';

describe('signWebhookBody', () => {
  it('signs "<t>.<body>" with HMAC-SHA256 of the secret', () => {
    expect(signWebhookBody(SECRET, BODY, T)).toBe(`t=1700000000,v1=${KNOWN_DIGEST}`);
  });

  it('keys with the secret and the body as UTF-8', () => {
    const header = signWebhookBody('clé', '{"sujet":"modem à vendre"}', T);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature('clé', '{"sujet":"modem à vendre"}', header, T)).toBe(true);
    expect(verifyWebhookSignature('cle', '{"sujet":"modem à vendre"}', header, T)).toBe(false);
  });

  it('refuses a timestamp that is not a whole number of seconds', () => {
    expect(() => signWebhookBody(SECRET, BODY, 1700000000.5)).toThrow(RangeError);
    expect(() => signWebhookBody(SECRET, BODY, -1)).toThrow(RangeError);
  });
});

describe('verifyWebhookSignature', () => {
  const header = signWebhookBody(SECRET, BODY, T);

  it('accepts its own signature within the tolerance either way', () => {
    expect(verifyWebhookSignature(SECRET, BODY, header, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, header, T + 300)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, header, T - 300)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v1=${KNOWN_DIGEST}`, T)).toBe(true);
  });

  it('rejects a changed body or a wrong secret', () => {
    expect(verifyWebhookSignature(SECRET, '{"id":2}', header, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, `${BODY} `, header, T)).toBe(false);
    expect(verifyWebhookSignature('whsec_other', BODY, header, T)).toBe(false);
  });

  it('rejects a timestamp outside the tolerance, and one changed to look fresh', () => {
    expect(verifyWebhookSignature(SECRET, BODY, header, T + 301)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, T - 301)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, T + 60, 30)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T + 1000},v1=${KNOWN_DIGEST}`, T + 1000)).toBe(false);
  });

  it.each([
    ['an empty header', ''],
    ['no timestamp', `v1=${KNOWN_DIGEST}`],
    ['no v1', `t=${T}`],
    ['two timestamps', `t=${T},t=${T},v1=${KNOWN_DIGEST}`],
    ['a timestamp that is not a number', `t=soon,v1=${KNOWN_DIGEST}`],
    ['a negative timestamp', `t=-${T},v1=${KNOWN_DIGEST}`],
    ['a short digest', `t=${T},v1=${KNOWN_DIGEST.slice(2)}`],
    ['a digest that is not hex', `t=${T},v1=${'z'.repeat(64)}`],
    ['a part without "="', `t=${T},v1=${KNOWN_DIGEST},junk`],
  ])('rejects a header with %s', (_case, malformed) => {
    expect(verifyWebhookSignature(SECRET, BODY, malformed, T)).toBe(false);
  });

  it('accepts a header with several v1 digests when one matches, and ignores unknown schemes', () => {
    const other = signWebhookBody('whsec_old', BODY, T).split(',v1=')[1];
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v1=${other},v1=${KNOWN_DIGEST}`, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v1=${KNOWN_DIGEST},v1=${other}`, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v1=${other},v1=${other}`, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T}, v0=abc, v1=${KNOWN_DIGEST}`, T)).toBe(true);
  });
});
