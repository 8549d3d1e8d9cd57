import { createHmac, timingSafeEqual } from 'node:crypto';
import { systemClock } from '../clock.js';
import { BadRequestError } from '../errors.js';
import { estimatedBytes, estimatedStringBytes } from '../estimated-bytes.js';
import { createRecentCache } from '../recent-cache.js';

/**
 * Opaque, tamper-evident keyset cursors. A cursor is `<key>.<mac>` in base64url, the MAC being
 * an HMAC over the list's identity and the key, so a cursor edited by hand or taken from
 * another list (another area, another endpoint) is refused rather than silently misread.
 */
export interface CursorCodec {
  /** `bound` travels with the key when the list's items were chosen on its first page (see PageRequest). */
  encode(list: string, key: number, bound?: number | null): string;
  /** Returns the position, or throws `BadRequestError`. */
  decode(list: string, cursor: string): CursorPosition;
}

/** Where a cursor points: after `key`, in a list chosen under `bound` (null: a list that has none). */
export interface CursorPosition {
  readonly key: number;
  readonly bound: number | null;
}

/** Between the key and the bound in a cursor's payload. */
const BOUND_SEPARATOR = ':';

const MAC_BYTES = 16;

/**
 * The bytes the cursors made and the cursors verified may hold, each, counted with
 * estimated-bytes.ts (~250 bytes a cursor of an area's list, the entry's keeping included):
 * ~8,500 cursors each, the next-page cursors of the pages most in demand. A cursor never goes stale (it is a
 * function of the list, the key and the secret), so only the budget lets one go, oldest first.
 */
export const REMEMBERED_CURSOR_BYTES = 2 * 1024 * 1024;

/** A cursor answers for ever: its entries never expire, whatever the clock says. */
const FOR_EVER = { loadedAtMs: Number.NEGATIVE_INFINITY, expiresAtMs: Number.POSITIVE_INFINITY } as const;
const NO_VERSION = 0;

/**
 * A cursor is a function of the list, the key and the secret: a page asked for again and
 * again (an area's first page, a popular deep page) needs its HMAC computed once. `known`
 * maps `list\ncursor` to the key for every cursor this codec made or verified, so a cursor
 * seen before is recognised by exact string equality, as a fresh verification would.
 */
export function createCursorCodec(secret: Buffer): CursorCodec {
  const mac = (list: string, payload: string) =>
    createHmac('sha256', secret).update(`${list}\n${payload}`).digest().subarray(0, MAC_BYTES);
  const cache = <Value>() =>
    createRecentCache<Value>({
      maxBytes: REMEMBERED_CURSOR_BYTES,
      sizeOf: (id, value) => estimatedStringBytes(id) + estimatedBytes(value),
      clock: systemClock,
    });
  const known = cache<CursorPosition>();
  const made = cache<string>();
  return {
    encode(list, key, bound = null) {
      const text = bound === null ? String(key) : `${key}${BOUND_SEPARATOR}${bound}`;
      const id = `${list}\n${text}`;
      const existing = made.get(id, NO_VERSION);
      if (existing !== undefined) return existing;
      const payload = Buffer.from(text).toString('base64url');
      const cursor = `${payload}.${mac(list, payload).toString('base64url')}`;
      made.set(id, cursor, FOR_EVER, NO_VERSION);
      // Only what decode would accept: a key or bound that is not a safe integer is refused there.
      if (Number.isSafeInteger(key) && (bound === null || Number.isSafeInteger(bound))) {
        known.set(`${list}\n${cursor}`, { key, bound }, FOR_EVER, NO_VERSION);
      }
      return cursor;
    },
    decode(list, cursor) {
      const knownKey = known.get(`${list}\n${cursor}`, NO_VERSION);
      if (knownKey !== undefined) return knownKey;
      const invalid = new BadRequestError(
        'request.invalid-cursor',
        'The cursor is invalid or belongs to another list.',
        [{ pointer: '/query/cursor', message: 'is invalid or belongs to another list' }],
      );
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw invalid;
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(list, payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
      const [keyText, boundText, rest] = Buffer.from(payload, 'base64url').toString().split(BOUND_SEPARATOR);
      const key = Number(keyText);
      const bound = boundText === undefined ? null : Number(boundText);
      if (!Number.isSafeInteger(key) || (bound !== null && !Number.isSafeInteger(bound)) || rest !== undefined) {
        throw invalid;
      }
      const position = { key, bound };
      known.set(`${list}\n${cursor}`, position, FOR_EVER, NO_VERSION);
      return position;
    },
  };
}
