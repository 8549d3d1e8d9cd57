import fc from 'fast-check';
import { expect } from 'vitest';
import type { FtnAddress, NetNode } from '../../src/ftn/ftn-address.js';
import type { FtnDateTime } from '../../src/ftn/ftn-date.js';
import { FtnFormatError } from '../../src/ftn/ftn-format-error.js';

/** Fixtures and generators the FTN tests share. */

export const address = (
  zone: number,
  net: number,
  node: number,
  point = 0,
  domain: string | null = null,
): FtnAddress => ({
  zone,
  net,
  node,
  point,
  domain,
});

/**
 * Runs `action` and returns the FtnFormatError it throws, failing the test when it throws nothing
 * or anything else: every bad input must end as this one typed error.
 */
export function ftnErrorOf(action: () => unknown): FtnFormatError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(FtnFormatError);
    return error as FtnFormatError;
  }
  throw new Error('expected an FtnFormatError, but nothing was thrown');
}

/** Expects `action` to throw an FtnFormatError with exactly `message`. */
export function expectFtnError(action: () => unknown, message: string): void {
  expect(ftnErrorOf(action).message).toBe(message);
}

export const ftnAddressArbitrary: fc.Arbitrary<FtnAddress> = fc.record({
  zone: fc.integer({ min: 1, max: 32767 }),
  net: fc.integer({ min: 0, max: 32767 }),
  node: fc.integer({ min: 0, max: 32767 }),
  point: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 32767 })),
  domain: fc.option(fc.stringMatching(/^[a-z0-9_-]{1,8}$/), { nil: null }),
});

export const netNodeArbitrary: fc.Arbitrary<NetNode> = fc.record({
  net: fc.integer({ min: 0, max: 32767 }),
  node: fc.integer({ min: 0, max: 32767 }),
});

/** Dates the packed message's two-digit year can carry. */
export const ftnDateTimeArbitrary: fc.Arbitrary<FtnDateTime> = fc
  .date({ min: new Date('1980-01-01T00:00:00Z'), max: new Date('2079-12-31T23:59:59Z'), noInvalidDate: true })
  .map((date) => ({
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  }));
