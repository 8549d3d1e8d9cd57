import { createHmac, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../errors.js';

/**
 * Opaque, tamper-evident keyset cursors. A cursor is `<key>.<mac>` in base64url, the MAC being
 * an HMAC over the list's identity and the key, so a cursor edited by hand or taken from
 * another list (another area, another endpoint) is refused rather than silently misread.
 */
export interface CursorCodec {
  encode(list: string, key: number): string;
  /** Returns the key, or throws `BadRequestError`. */
  decode(list: string, cursor: string): number;
}

const MAC_BYTES = 16;

export function createCursorCodec(secret: Buffer): CursorCodec {
  const mac = (list: string, payload: string) =>
    createHmac('sha256', secret).update(`${list}\n${payload}`).digest().subarray(0, MAC_BYTES);
  return {
    encode(list, key) {
      const payload = Buffer.from(String(key)).toString('base64url');
      return `${payload}.${mac(list, payload).toString('base64url')}`;
    },
    decode(list, cursor) {
      const invalid = new BadRequestError('The cursor is invalid or belongs to another list.', [
        { pointer: '/query/cursor', message: 'is invalid or belongs to another list' },
      ]);
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw invalid;
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(list, payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
      const key = Number(Buffer.from(payload, 'base64url').toString());
      if (!Number.isSafeInteger(key)) throw invalid;
      return key;
    },
  };
}
