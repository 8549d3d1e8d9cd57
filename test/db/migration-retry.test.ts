import { describe, expect, it } from 'vitest';
import { isOtherSchemaDropped } from '../../src/db/database.js';

/** A migration tried again only when it lost a race with another board's schema being dropped. */
describe('which migration errors are tried again', () => {
  const schemaGone = (schema: string) =>
    Object.assign(new Error(`schema "${schema}" does not exist`), { code: '3F000' });

  it("retries when another schema vanished during Kysely's introspection", () => {
    expect(isOtherSchemaDropped(schemaGone('baud_test_other'), 'baud_test_mine')).toBe(true);
    expect(isOtherSchemaDropped(schemaGone('baud_test_other'), null)).toBe(true);
  });

  it('does not retry when our own schema is gone, or on any other error', () => {
    expect(isOtherSchemaDropped(schemaGone('baud_test_mine'), 'baud_test_mine')).toBe(false);
    expect(isOtherSchemaDropped(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }), null)).toBe(
      false,
    );
    expect(isOtherSchemaDropped(new Error('boom'), null)).toBe(false);
    expect(isOtherSchemaDropped('not an error', null)).toBe(false);
  });
});
