import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { UserService } from '../users/user-service.js';
import { usernameKey } from '../users/username.js';
import { API_KEY_SCOPES, type ApiKeyScope, generateApiKeyValue, hashSecretToken, isApiKeyScope } from './api-keys.js';

export const API_KEY_LABEL_MAX_LENGTH = 128;

/** An API key as the operator sees it: never the key itself, nor its hash. */
export interface ApiKeyRecord {
  readonly id: number;
  readonly username: string;
  readonly label: string;
  readonly scope: ApiKeyScope;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

/** A freshly generated key: the only time the raw `key` exists outside the client's hands. */
export interface GeneratedApiKey extends ApiKeyRecord {
  readonly key: string;
}

/** Operator management of API keys (`baud rest api-key …`). Keys are stored as SHA-256 hashes. */
export function createApiKeyService(deps: { db: Db; clock: Clock; users: UserService }) {
  const { db, clock, users } = deps;

  function recordsQuery() {
    return db
      .selectFrom('apiKeys as k')
      .innerJoin('users as u', 'u.id', 'k.userId')
      .select(['k.id', 'u.username', 'k.label', 'k.scope', 'k.createdAt', 'k.lastUsedAt', 'k.revokedAt'])
      .orderBy('k.id');
  }

  type RecordRow = Awaited<ReturnType<ReturnType<typeof recordsQuery>['executeTakeFirstOrThrow']>>;
  const toRecord = (row: RecordRow): ApiKeyRecord => ({ ...row, scope: row.scope as ApiKeyScope });

  async function findRecord(id: number): Promise<ApiKeyRecord> {
    const row = await recordsQuery().where('k.id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError(`No API key with id ${id}.`);
    return toRecord(row);
  }

  return {
    /** Creates a key for `username`. Unknown user → NotFoundError; bad scope or label → BadRequestError. */
    async generate(username: string, label: string, scope: string): Promise<GeneratedApiKey> {
      const trimmedLabel = label.trim();
      if (trimmedLabel === '') throw new BadRequestError('the label must not be empty');
      if ([...trimmedLabel].length > API_KEY_LABEL_MAX_LENGTH) {
        throw new BadRequestError(`the label must be at most ${API_KEY_LABEL_MAX_LENGTH} characters`);
      }
      if (!isApiKeyScope(scope)) {
        throw new BadRequestError(`scope "${scope}" is not valid; use one of ${API_KEY_SCOPES.join(', ')}`);
      }
      const user = await users.getUser(username);
      const key = generateApiKeyValue();
      const { id } = await db
        .insertInto('apiKeys')
        .values({
          userId: user.userId,
          label: trimmedLabel,
          scope,
          keyHash: hashSecretToken(key),
          createdAt: clock.now().toISOString(),
          lastUsedAt: null,
          revokedAt: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { ...(await findRecord(id)), key };
    },

    /** Every key, or those of one user (unknown user → NotFoundError), oldest first. */
    async list(username?: string): Promise<ApiKeyRecord[]> {
      let query = recordsQuery();
      if (username !== undefined) {
        await users.getUser(username);
        query = query.where('u.usernameKey', '=', usernameKey(username));
      }
      return (await query.execute()).map(toRecord);
    },

    /** Revokes a key at once; revoking a revoked key keeps its first revocation time. */
    async revoke(id: number): Promise<ApiKeyRecord> {
      if (!Number.isSafeInteger(id) || id < 1) throw new BadRequestError('the API key id must be a positive integer');
      await findRecord(id);
      await db
        .updateTable('apiKeys')
        .set({ revokedAt: clock.now().toISOString() })
        .where('id', '=', id)
        .where('revokedAt', 'is', null)
        .execute();
      return findRecord(id);
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
