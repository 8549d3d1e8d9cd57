import type { Transaction } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { Tables } from '../db/schema.js';
import type { IdentityChanges } from '../identity-changes.js';

/** A key row as the operator sees it: never the key's hash. `username` is its owner's. */
export interface ApiKeyRow {
  readonly id: number;
  readonly username: string;
  readonly label: string;
  readonly scope: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

/** What a request's key lookup needs: whose key it is, what it may do, when it was last used. */
export interface LiveApiKey {
  readonly id: number;
  readonly userId: number;
  readonly scope: string;
  readonly lastUsedAt: string | null;
}

export interface NewApiKey {
  readonly userId: number;
  readonly label: string;
  readonly scope: string;
  readonly keyHash: string;
  readonly createdAt: string;
}

export interface ApiKeyStore {
  /** Runs `work` in one transaction; methods that take an executor join it. */
  transaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /** The unrevoked key with this SHA-256 hash. */
  findLiveKey(keyHash: string): Promise<LiveApiKey | undefined>;
  setLastUsed(keyId: number, lastUsedAt: string): Promise<void>;
  insertKey(trx: Executor, key: NewApiKey): Promise<number>;
  findRow(keyId: number): Promise<ApiKeyRow | undefined>;
  /** Every key, or those of the user with this username key, oldest first. */
  listRows(ownerUsernameKey?: string): Promise<ApiKeyRow[]>;
  /** Revokes a key unless it already is (its first revocation time stays); true when this call revoked it. */
  revokeKey(trx: Executor, keyId: number, revokedAt: string): Promise<boolean>;
  /**
   * Revokes every live key of a user, keeping the first revocation time of keys revoked
   * before. A password change does this in its own transaction.
   */
  revokeUserKeys(trx: Executor, userId: number, revokedAt: string): Promise<void>;
}

/** Every query of `api_keys`. Listings join the owner's username, which is what an operator reads. */
export function createApiKeyStore(db: Db, identityChanges: IdentityChanges): ApiKeyStore {
  function rowsQuery() {
    return db
      .selectFrom('apiKeys as k')
      .innerJoin('users as u', 'u.id', 'k.userId')
      .select(['k.id', 'u.username', 'k.label', 'k.scope', 'k.createdAt', 'k.lastUsedAt', 'k.revokedAt'])
      .orderBy('k.id');
  }

  // Every request with an API key asks this: built once (see `prepareQuery`).
  const liveKey = prepareQuery(db, (p: { keyHash: string }) =>
    db
      .selectFrom('apiKeys')
      .select(['id', 'userId', 'scope', 'lastUsedAt'])
      .where('keyHash', '=', p.keyHash)
      .where('revokedAt', 'is', null),
  );

  return {
    transaction: (work) => db.transaction().execute(work),

    findLiveKey: (keyHash) => liveKey.first({ keyHash }),

    async setLastUsed(keyId, lastUsedAt) {
      await db.updateTable('apiKeys').set({ lastUsedAt }).where('id', '=', keyId).execute();
    },

    async insertKey(trx, key) {
      const { id } = await trx
        .insertInto('apiKeys')
        .values({ ...key, lastUsedAt: null, revokedAt: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return id;
    },

    findRow: (keyId) => rowsQuery().where('k.id', '=', keyId).executeTakeFirst(),

    listRows(ownerUsernameKey) {
      const query = rowsQuery();
      return (ownerUsernameKey === undefined ? query : query.where('u.usernameKey', '=', ownerUsernameKey)).execute();
    },

    async revokeKey(trx, keyId, revokedAt) {
      const revoked = await trx
        .updateTable('apiKeys')
        .set({ revokedAt })
        .where('id', '=', keyId)
        .where('revokedAt', 'is', null)
        .executeTakeFirst();
      identityChanges.changed();
      return Number(revoked.numUpdatedRows) === 1;
    },

    // A password change runs this in the user store's transaction, which reports the change once committed.
    async revokeUserKeys(trx, userId, revokedAt) {
      await trx
        .updateTable('apiKeys')
        .set({ revokedAt })
        .where('userId', '=', userId)
        .where('revokedAt', 'is', null)
        .execute();
    },
  };
}
