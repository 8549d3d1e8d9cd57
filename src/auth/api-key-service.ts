import type { AuditStore } from '../audit/audit-store.js';
import type { Scope } from '../caller.js';
import type { Clock } from '../clock.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { UserService } from '../users/user-service.js';
import { usernameKey } from '../users/username.js';
import type { ApiKeyRow, ApiKeyStore } from './api-key-store.js';
import {
  API_KEY_SCOPES,
  type ApiKeyScope,
  generateApiKeyValue,
  hashSecretToken,
  isApiKeyScope,
  isWellFormedApiKey,
  scopesOf,
} from './api-keys.js';

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

/** The owner and scopes of a live key, as a request's credential check needs them. */
export interface VerifiedApiKey {
  readonly userId: number;
  readonly scopes: ReadonlySet<Scope>;
}

/** API keys: operator management (`baud rest api-key …`) and the check of a presented key. */
export interface ApiKeyService {
  /**
   * Creates a key for `username`, and its audit entry (the console's) in the same transaction.
   * Unknown user → NotFoundError; bad scope or label → BadRequestError.
   */
  generate(username: string, label: string, scope: string): Promise<GeneratedApiKey>;
  /** Every key, or those of one user (unknown user → NotFoundError), oldest first. */
  list(username?: string): Promise<ApiKeyRecord[]>;
  /** Revokes a key at once, audited; revoking a revoked key keeps its first revocation time and logs nothing. */
  revoke(id: number): Promise<ApiKeyRecord>;
  /** The live key behind a raw value, or null; the lookup is by hash, so no raw key is ever compared. */
  verify(rawKey: string): Promise<VerifiedApiKey | null>;
}

// lastUsedAt is for the operator's eyes; writing it on every request would turn reads into writes.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Keys are stored as SHA-256 hashes; the raw key exists only in the answer to `generate`. */
export function createApiKeyService(deps: {
  store: ApiKeyStore;
  clock: Clock;
  users: UserService;
  /** Keys are the operator's to give and take (`baud rest api-key`): each is audited as the console's. */
  audit: AuditStore;
}): ApiKeyService {
  const { store, clock, users, audit } = deps;
  const describeKey = (id: number, label: string, scope: string) => `key ${id} "${label}" (${scope})`;

  const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({ ...row, scope: row.scope as ApiKeyScope });

  async function findRecord(id: number): Promise<ApiKeyRecord> {
    const row = await store.findRow(id);
    if (!row) throw new NotFoundError('api-key.not-found', `No API key with id ${id}.`);
    return toRecord(row);
  }

  return {
    async generate(username, label, scope) {
      const trimmedLabel = label.trim();
      if (trimmedLabel === '') throw new BadRequestError('api-key.invalid-label', 'the label must not be empty');
      if ([...trimmedLabel].length > API_KEY_LABEL_MAX_LENGTH) {
        throw new BadRequestError(
          'api-key.invalid-label',
          `the label must be at most ${API_KEY_LABEL_MAX_LENGTH} characters`,
        );
      }
      if (!isApiKeyScope(scope)) {
        throw new BadRequestError(
          'api-key.invalid-scope',
          `scope "${scope}" is not valid; use one of ${API_KEY_SCOPES.join(', ')}`,
        );
      }
      const user = await users.getUser(username);
      const key = generateApiKeyValue();
      const createdAt = clock.now().toISOString();
      const id = await store.transaction(async (trx) => {
        const keyId = await store.insertKey(trx, {
          userId: user.userId,
          label: trimmedLabel,
          scope,
          keyHash: hashSecretToken(key),
          createdAt,
        });
        const detail = `${describeKey(keyId, trimmedLabel, scope)} generated`;
        await audit.record(trx, {
          at: createdAt,
          actor: null,
          action: 'user.api-key-created',
          target: user.username,
          detail,
        });
        return keyId;
      });
      return { ...(await findRecord(id)), key };
    },

    async list(username) {
      if (username === undefined) return (await store.listRows()).map(toRecord);
      await users.getUser(username);
      return (await store.listRows(usernameKey(username))).map(toRecord);
    },

    async revoke(id) {
      if (!Number.isSafeInteger(id) || id < 1)
        throw new BadRequestError('api-key.invalid-id', 'the API key id must be a positive integer');
      const { username, label, scope } = await findRecord(id);
      const at = clock.now().toISOString();
      await store.transaction(async (trx) => {
        // Revoking a revoked key changes nothing, and logs nothing.
        if (!(await store.revokeKey(trx, id, at))) return;
        const detail = `${describeKey(id, label, scope)} revoked`;
        await audit.record(trx, { at, actor: null, action: 'user.api-key-revoked', target: username, detail });
      });
      return findRecord(id);
    },

    async verify(rawKey) {
      if (!isWellFormedApiKey(rawKey)) return null;
      const key = await store.findLiveKey(hashSecretToken(rawKey));
      if (!key) return null;
      const now = clock.now();
      if (key.lastUsedAt === null || now.getTime() - Date.parse(key.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
        await store.setLastUsed(key.id, now.toISOString());
      }
      return { userId: key.userId, scopes: scopesOf(key.scope) };
    },
  };
}
