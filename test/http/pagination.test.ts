import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pageFromRows } from '../../src/db/keyset.js';
import { BadRequestError } from '../../src/errors.js';
import { createCursorCodec, REMEMBERED_CURSOR_BYTES } from '../../src/http/cursor-codec.js';
import { pageRequestFrom, shouldStripAnsi, wholeListReply } from '../../src/http/pagination.js';

describe('cursor codec', () => {
  const codec = createCursorCodec(randomBytes(32));

  it('round-trips a key for the same list', () => {
    for (const key of [0, 1, 42, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      const cursor = codec.encode('messages:general', key);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(codec.decode('messages:general', cursor)).toEqual({ key: key, bound: null });
    }
  });

  it('round-trips a key with the bound its list was chosen under, and refuses an edited bound', () => {
    const cursor = codec.encode('messages-search:relevance', 2 ** 50 + 7, 1000);
    expect(codec.decode('messages-search:relevance', cursor)).toEqual({ key: 2 ** 50 + 7, bound: 1000 });
    const [, mac] = cursor.split('.');
    const edited = `${Buffer.from(`${2 ** 50 + 7}:2000`).toString('base64url')}.${mac}`;
    expect(() => codec.decode('messages-search:relevance', edited)).toThrow(BadRequestError);
    expect(codec.encode('messages-search:relevance', 2 ** 50 + 7)).not.toBe(cursor);
  });

  it('refuses a cursor from another list', () => {
    const cursor = codec.encode('messages:general', 7);
    expect(() => codec.decode('messages:other', cursor)).toThrow(BadRequestError);
  });

  it('refuses a cursor made with another secret', () => {
    const foreign = createCursorCodec(randomBytes(32)).encode('messages:general', 7);
    expect(() => codec.decode('messages:general', foreign)).toThrow(BadRequestError);
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['empty mac', 'Nw.'],
    ['three parts', 'Nw.abc.def'],
  ])('refuses %s', (_name, cursor) => {
    expect(() => codec.decode('messages:general', cursor)).toThrow(BadRequestError);
  });

  it('refuses a cursor whose key was edited', () => {
    const cursor = codec.encode('messages:general', 7);
    const [, mac] = cursor.split('.');
    const edited = `${Buffer.from('8').toString('base64url')}.${mac}`;
    expect(() => codec.decode('messages:general', edited)).toThrow(BadRequestError);
  });

  it('refuses a correctly signed payload that is not an integer key', () => {
    // Forge one with the same secret through the codec's own encode of a non-integer.
    const cursor = codec.encode('messages:general', 1.5);
    expect(() => codec.decode('messages:general', cursor)).toThrow(BadRequestError);
  });

  it('answers a cursor it has seen before exactly as the first time, for its own list only', () => {
    const cursor = codec.encode('messages:general', 99);
    for (let round = 0; round < 3; round += 1) {
      expect(codec.decode('messages:general', cursor)).toEqual({ key: 99, bound: null });
      expect(() => codec.decode('messages:other', cursor)).toThrow(BadRequestError);
      expect(() => codec.decode('messages:general', `${cursor}A`)).toThrow(BadRequestError);
    }
    expect(codec.encode('messages:general', 99)).toBe(cursor);
    // A fresh codec with the same secret verifies it without having made it.
    const secret = randomBytes(32);
    const made = createCursorCodec(secret).encode('files:uploads', 5);
    expect(createCursorCodec(secret).decode('files:uploads', made)).toEqual({ key: 5, bound: null });
  });

  it('still verifies every cursor after more were made than it remembers', () => {
    const many = createCursorCodec(randomBytes(32));
    const first = many.encode('l', 1);
    // A remembered cursor takes more than 32 bytes of the budget: this many overflow it.
    for (let key = 2; key <= REMEMBERED_CURSOR_BYTES / 32; key += 1) many.encode('l', key);
    expect(many.decode('l', first)).toEqual({ key: 1, bound: null });
    expect(many.encode('l', 1)).toBe(first);
  });

  it('reports the cursor pointer on refusal', () => {
    try {
      codec.decode('x', 'bad');
      expect.unreachable();
    } catch (error) {
      expect((error as BadRequestError).errors).toEqual([
        { pointer: '/query/cursor', message: 'is invalid or belongs to another list' },
      ]);
    }
  });
});

describe('page requests and pages', () => {
  const codec = createCursorCodec(randomBytes(32));

  it('defaults the limit to 25 and starts at the beginning', () => {
    expect(pageRequestFrom({}, 'l', codec)).toEqual({ limit: 25, afterKey: null });
  });

  it('decodes the cursor into the key to continue after', () => {
    expect(pageRequestFrom({ limit: 100, cursor: codec.encode('l', 9) }, 'l', codec)).toEqual({
      limit: 100,
      afterKey: 9,
    });
  });

  it('cuts the over-fetched row and points the next key at the last item', () => {
    const rows = [{ id: 1 }, { id: 2 }, { id: 3 }];
    expect(
      pageFromRows(
        rows,
        { limit: 2, afterKey: null },
        (row) => row.id,
        (row) => row.id,
      ),
    ).toEqual({
      items: [1, 2],
      nextKey: 2,
    });
    expect(
      pageFromRows(
        rows.slice(0, 2),
        { limit: 2, afterKey: null },
        (row) => row.id,
        (row) => row.id,
      ),
    ).toEqual({
      items: [1, 2],
      nextKey: null,
    });
  });

  it('shapes a whole list with both pagination variants', () => {
    expect(wholeListReply(['a', 'b'])).toEqual({
      data: ['a', 'b'],
      meta: { count: 2, limit: 2, nextCursor: null },
      pagination: { next: null },
    });
  });

  it.each([
    [undefined, true],
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('stripAnsi=%s means %s', (value, expected) => {
    expect(shouldStripAnsi(value === undefined ? {} : { stripAnsi: value })).toBe(expected);
  });
});
