import { createHash, randomBytes } from 'node:crypto';
import type { Scope } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';

export const API_KEY_PREFIX = 'baud_';
const API_KEY_PATTERN = /^baud_[A-Za-z0-9_-]{43}$/;
// lastUsedAt is for the operator's eyes; writing it on every request would turn reads into writes.
const LAST_USED_RESOLUTION_MS = 60_000;

export type ApiKeyScope = 'read' | 'write' | 'read,write';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'write', 'read,write'];

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value);
}

export function scopesOf(scope: string): ReadonlySet<Scope> {
  return new Set(scope.split(',').filter((part): part is Scope => part === 'read' || part === 'write'));
}

/** SHA-256, hex: keys have 256 bits of entropy, so a fast hash is enough (no salt needed). */
export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A new raw key: `baud_` + 43 base64url characters (256 random bits). */
export function generateApiKeyValue(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}

/** Finds the live key behind a raw value; the lookup is by hash, so no raw key is ever compared. */
export async function verifyApiKey(
  db: Db,
  clock: Clock,
  rawKey: string,
): Promise<{ userId: number; scopes: ReadonlySet<Scope> } | null> {
  if (!API_KEY_PATTERN.test(rawKey)) return null;
  const row = await db
    .selectFrom('apiKeys')
    .select(['id', 'userId', 'scope', 'lastUsedAt'])
    .where('keyHash', '=', hashSecretToken(rawKey))
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const now = clock.now();
  if (row.lastUsedAt === null || now.getTime() - Date.parse(row.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
    await db.updateTable('apiKeys').set({ lastUsedAt: now.toISOString() }).where('id', '=', row.id).execute();
  }
  return { userId: row.userId, scopes: scopesOf(row.scope) };
}

/**
 * Revokes every live key of a user, keeping the first revocation time of keys revoked before.
 * A password change does this in its own transaction (pass the transaction as `db`).
 */
export async function revokeUserApiKeys(db: Db, userId: number, revokedAt: string): Promise<void> {
  await db
    .updateTable('apiKeys')
    .set({ revokedAt })
    .where('userId', '=', userId)
    .where('revokedAt', 'is', null)
    .execute();
}
