import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a signature's timestamp may be from the receiver's clock, either way, by default. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

const DIGEST_HEX = /^[0-9a-f]{64}$/i;
const UNIX_SECONDS = /^\d{1,15}$/;

/**
 * The `X-Baud-Signature` header value for a delivery: `t=<unixSeconds>,v1=<hex>`, where v1 is
 * HMAC-SHA256 keyed with the webhook's secret over `<unixSeconds>.<body>`. Signing the timestamp
 * with the body lets a receiver refuse a captured delivery replayed later.
 *
 * @example signWebhookBody('whsec_test', '{"id":1}', 1700000000)
 * // 't=1700000000,v1=…64 hex digits…'
 */
export function signWebhookBody(secret: string, body: string, unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) {
    throw new RangeError('unixSeconds must be a non-negative integer.');
  }
  return `t=${unixSeconds},v1=${signatureDigest(secret, body, String(unixSeconds)).toString('hex')}`;
}

/**
 * Whether `header` is a valid `X-Baud-Signature` for `body`: its timestamp is within
 * `toleranceSeconds` of `nowSeconds` and one of its `v1=` digests matches. Several `v1=` parts
 * are allowed so that a sender can sign with an old and a new secret while the secret is rotated;
 * parts with other names are ignored so that a future scheme can be added beside v1. A malformed
 * header is false, never an exception.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string,
  nowSeconds: number,
  toleranceSeconds = DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  const parsed = parseSignatureHeader(header);
  if (!parsed || Math.abs(nowSeconds - Number(parsed.timestamp)) > toleranceSeconds) return false;

  const expected = signatureDigest(secret, body, parsed.timestamp);
  // Every candidate is compared, so the time taken does not tell which one matched.
  let isMatch = false;
  for (const candidate of parsed.digests) {
    if (timingSafeEqual(Buffer.from(candidate, 'hex'), expected)) isMatch = true;
  }
  return isMatch;
}

interface SignatureHeader {
  /** The `t=` value as written, so the digest is computed over exactly the signed text. */
  readonly timestamp: string;
  /** The `v1=` values, each 64 hex digits (32 bytes, like the expected digest). */
  readonly digests: readonly string[];
}

function parseSignatureHeader(header: string): SignatureHeader | null {
  let timestamp: string | null = null;
  const digests: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) return null;
    const name = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (name === 't') {
      if (timestamp !== null || !UNIX_SECONDS.test(value)) return null;
      timestamp = value;
    } else if (name === 'v1') {
      if (!DIGEST_HEX.test(value)) return null;
      digests.push(value);
    }
  }
  return timestamp !== null && digests.length > 0 ? { timestamp, digests } : null;
}

function signatureDigest(secret: string, body: string, timestamp: string): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();
}
