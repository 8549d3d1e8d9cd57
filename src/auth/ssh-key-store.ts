import type { Selectable, Transaction } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import type { SshKeysTable, Tables } from '../db/schema.js';

export type SshKeyRow = Selectable<SshKeysTable>;

export interface NewSshKey {
  readonly userId: number;
  readonly algorithm: string;
  /** The blob, base64. */
  readonly keyData: string;
  readonly fingerprint: string;
  readonly label: string;
  readonly createdAt: string;
}

/** Every query of `ssh_keys`. */
export interface SshKeyStore {
  /** Runs `work` in one transaction; methods that take an executor join it. */
  transaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /** The user's keys, newest first (a user has at most MAX_SSH_KEYS_PER_USER); inside `executor`'s transaction when given. */
  listOfUser(userId: number, executor?: Executor): Promise<SshKeyRow[]>;
  /** The user's key with this fingerprint (unique per user), if registered; inside `executor`'s transaction when given. */
  findByFingerprint(userId: number, fingerprint: string, executor?: Executor): Promise<SshKeyRow | undefined>;
  insertKey(trx: Executor, key: NewSshKey): Promise<SshKeyRow>;
  /** Deletes the key `keyId` if it is `userId`'s; the deleted row, or undefined (none, or someone else's). */
  deleteOfUser(trx: Executor, userId: number, keyId: number): Promise<SshKeyRow | undefined>;
  /** Deletes every key of the user (a password change does, in its transaction); how many there were. */
  deleteAllOfUser(trx: Executor, userId: number): Promise<number>;
}

export function createSshKeyStore(db: Db): SshKeyStore {
  return {
    transaction: (work) => db.transaction().execute(work),

    listOfUser: (userId, executor = db) =>
      executor.selectFrom('sshKeys').selectAll().where('userId', '=', userId).orderBy('id', 'desc').execute(),

    findByFingerprint: (userId, fingerprint, executor = db) =>
      executor
        .selectFrom('sshKeys')
        .selectAll()
        .where('userId', '=', userId)
        .where('fingerprint', '=', fingerprint)
        .executeTakeFirst(),

    insertKey: (trx, key) => trx.insertInto('sshKeys').values(key).returningAll().executeTakeFirstOrThrow(),

    deleteOfUser: (trx, userId, keyId) =>
      trx.deleteFrom('sshKeys').where('id', '=', keyId).where('userId', '=', userId).returningAll().executeTakeFirst(),

    async deleteAllOfUser(trx, userId) {
      const deleted = await trx.deleteFrom('sshKeys').where('userId', '=', userId).executeTakeFirst();
      return Number(deleted.numDeletedRows);
    },
  };
}
