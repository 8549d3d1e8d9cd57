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

/** Cursors remembered, at most: the next-page cursors of the pages most in demand. */
const REMEMBERED_CURSORS = 10_000;

/**
 * A cursor is a function of the list, the key and the secret: a page asked for again and
 * again (an area's first page, a popular deep page) needs its HMAC computed once. `known`
 * maps `list\ncursor` to the key for every cursor this codec made or verified, so a cursor
 * seen before is recognised by exact string equality, as a fresh verification would.
 */
export function createCursorCodec(secret: Buffer): CursorCodec {
  const mac = (list: string, payload: string) =>
    createHmac('sha256', secret).update(`${list}\n${payload}`).digest().subarray(0, MAC_BYTES);
  const known = new Map<string, number>();
  const made = new Map<string, string>();
  const remember = <V>(map: Map<string, V>, id: string, value: V) => {
    if (map.size >= REMEMBERED_CURSORS) map.delete(map.keys().next().value as string);
    map.set(id, value);
  };
  return {
    encode(list, key) {
      const id = `${list}\n${key}`;
      const existing = made.get(id);
      if (existing !== undefined) return existing;
      const payload = Buffer.from(String(key)).toString('base64url');
      const cursor = `${payload}.${mac(list, payload).toString('base64url')}`;
      remember(made, id, cursor);
      // Only what decode would accept: a key that is not a safe integer is refused there.
      if (Number.isSafeInteger(key)) remember(known, `${list}\n${cursor}`, key);
      return cursor;
    },
    decode(list, cursor) {
      const knownKey = known.get(`${list}\n${cursor}`);
      if (knownKey !== undefined) return knownKey;
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
      remember(known, `${list}\n${cursor}`, key);
      return key;
    },
  };
}
