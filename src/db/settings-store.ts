import { randomBytes } from 'node:crypto';
import type { Db } from './database.js';

/**
 * Returns the secret stored under `name`, creating a random one on first use. Insert-if-absent
 * then read, so nodes that start together on one database all end up with the same value.
 */
export async function loadOrCreateSecret(db: Db, name: string, byteLength = 32): Promise<Buffer> {
  const candidate = randomBytes(byteLength).toString('base64url');
  await db
    .insertInto('settings')
    .values({ key: name, value: candidate })
    .onConflict((conflict) => conflict.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}
