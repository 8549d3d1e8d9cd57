import { randomBytes } from 'node:crypto';
import type { Db, Executor } from './database.js';

// Every query of `settings`, the board's named values (its secrets, how far the event log was pruned).

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

/** The value stored under `key`, or undefined when there is none. */
export async function readSetting(db: Executor, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

/** Stores `value` under `key`, replacing what was there. */
export async function writeSetting(db: Executor, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
    .execute();
}
