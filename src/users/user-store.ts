import type { Transaction } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { Tables, UserRow } from '../db/schema.js';
import type { IdentityChanges } from '../identity-changes.js';
import { usernameKey } from './username.js';

/** What a new account is created with; every other column starts empty or at zero. */
export interface NewAccount {
  readonly username: string;
  readonly passwordHash: string;
  readonly emailAddress: string | null;
  readonly createdAt: string;
}

/** What a login checks before it counts: the account's hash and whether it is disabled. */
export interface LoginCredentials {
  readonly id: number;
  readonly passwordHash: string;
  readonly disabledAt: string | null;
}

/** The profile columns a user edits (PUT /users/me); null clears one. */
export type ProfileColumns = Partial<
  Record<'realName' | 'location' | 'affiliations' | 'webAddress' | 'autoSignature', string | null>
>;

/** What other people see of a user in the board's lists of people. */
export interface UserCard {
  readonly username: string;
  readonly location: string | null;
  readonly affiliations: string | null;
}

export interface UserStore {
  /** Runs `work` in one transaction; methods that take an executor join it. */
  transaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /** The account named `username`, case-insensitively. */
  findByName(username: string): Promise<UserRow | undefined>;
  findById(userId: number): Promise<UserRow | undefined>;
  /** The account unless it is gone or disabled. */
  findEnabledById(userId: number): Promise<UserRow | undefined>;
  /** Every account, oldest first. */
  listAll(): Promise<UserRow[]>;
  count(): Promise<number>;
  /** What lists of people show of each user (the node list, last callers); unknown ids are left out. */
  cardsOf(userIds: readonly number[]): Promise<Map<number, UserCard>>;
  /** Group names of each user, sorted; users without groups map to []. */
  groupsOf(userIds: readonly number[]): Promise<Map<number, string[]>>;
  /** Creates the account and its group memberships; null when its name is taken. */
  insertUser(account: NewAccount, groups: readonly string[]): Promise<number | null>;
  /** Sets the password hash and `credentialsChangedAt` (which ends every older session). */
  setPasswordHash(trx: Executor, userId: number, passwordHash: string, changedAt: string): Promise<void>;
  /**
   * Replaces the password hash with the same password's new hash (an imported hash upgraded at
   * login), only while the stored one is still `expectedOldHash`, so a password changed in
   * between wins. Not a credential change: sessions, API keys and `credentialsChangedAt` stay.
   * True when it replaced.
   */
  replacePasswordHash(trx: Executor, userId: number, expectedOldHash: string, newHash: string): Promise<boolean>;
  /** Joins a group; already a member is no change. */
  addGroup(userId: number, group: string): Promise<void>;
  removeGroup(userId: number, group: string): Promise<void>;
  setDisabledState(userId: number, state: { disabledAt: string | null; credentialsChangedAt?: string }): Promise<void>;
  updateProfile(userId: number, columns: ProfileColumns): Promise<void>;
  findLoginCredentials(usernameKey: string): Promise<LoginCredentials | undefined>;
  /** Counts a login: `loginCount` and `lastLoginAt`. Takes the login's transaction; locks the user's row. */
  recordLogin(trx: Executor, userId: number, at: string): Promise<void>;
  addMinutesOnline(userId: number, minutes: number): Promise<void>;
  autoSignatureOf(trx: Executor, userId: number): Promise<string | null>;
  incrementPostCount(trx: Executor, userId: number): Promise<void>;
  /** Adds one transfer of `byteSize` bytes to the user's upload or download counters. */
  countTransfer(trx: Executor, userId: number, direction: 'upload' | 'download', byteSize: number): Promise<void>;
}

/**
 * Every query of the users domain (`users`, `user_groups`). Other domains change a user's
 * counters through here, inside their own transactions (posting, uploads, logins).
 */
export function createUserStore(db: Db, identityChanges: IdentityChanges): UserStore {
  // Every authenticated request loads its caller with these two: built once (see `prepareQuery`).
  const enabledById = prepareQuery(db, (p: { userId: number }) =>
    db.selectFrom('users').selectAll().where('id', '=', p.userId).where('disabledAt', 'is', null),
  );
  const groupsOfUser = prepareQuery(db, (p: { userId: number }) =>
    db.selectFrom('userGroups').select('groupName').where('userId', '=', p.userId).orderBy('groupName'),
  );

  return {
    // Logins and password changes run here: whatever they changed is reported once it is committed.
    async transaction(work) {
      try {
        return await db.transaction().execute(work);
      } finally {
        identityChanges.changed();
      }
    },

    findByName: (username) =>
      db.selectFrom('users').selectAll().where('usernameKey', '=', usernameKey(username)).executeTakeFirst(),

    findById: (userId) => db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst(),

    findEnabledById: (userId) => enabledById.first({ userId }),

    listAll: () => db.selectFrom('users').selectAll().orderBy('id').execute(),

    async cardsOf(userIds) {
      if (userIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('users')
        .select(['id', 'username', 'location', 'affiliations'])
        .where('id', 'in', [...new Set(userIds)])
        .execute();
      return new Map(rows.map(({ id, ...card }) => [id, card]));
    },

    async count() {
      const { count } = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(count);
    },

    async groupsOf(userIds) {
      const groups = new Map<number, string[]>(userIds.map((id) => [id, []]));
      if (userIds.length === 0) return groups;
      const [onlyUser] = userIds;
      if (userIds.length === 1 && onlyUser !== undefined) {
        const rows = await groupsOfUser.all({ userId: onlyUser });
        return groups.set(
          onlyUser,
          rows.map((row) => row.groupName),
        );
      }
      const rows = await db
        .selectFrom('userGroups')
        .select(['userId', 'groupName'])
        .where('userId', 'in', [...userIds])
        .orderBy('groupName')
        .execute();
      for (const row of rows) groups.get(row.userId)?.push(row.groupName);
      return groups;
    },

    insertUser(account, groups) {
      const key = usernameKey(account.username);
      return db.transaction().execute(async (trx) => {
        const clash = await trx.selectFrom('users').select('id').where('usernameKey', '=', key).executeTakeFirst();
        if (clash) return null;
        const { id } = await trx
          .insertInto('users')
          .values({
            username: account.username,
            usernameKey: key,
            passwordHash: account.passwordHash,
            emailAddress: account.emailAddress,
            realName: null,
            location: null,
            affiliations: null,
            webAddress: null,
            autoSignature: null,
            createdAt: account.createdAt,
            disabledAt: null,
            credentialsChangedAt: account.createdAt,
            lastLoginAt: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (groups.length > 0) {
          await trx
            .insertInto('userGroups')
            .values(groups.map((groupName) => ({ userId: id, groupName })))
            .execute();
        }
        return id;
      });
    },

    // Runs in a transaction of `transaction` above, which reports the change once committed.
    async setPasswordHash(trx, userId, passwordHash, changedAt) {
      await trx
        .updateTable('users')
        .set({ passwordHash, credentialsChangedAt: changedAt })
        .where('id', '=', userId)
        .execute();
    },

    async replacePasswordHash(trx, userId, expectedOldHash, newHash) {
      const result = await trx
        .updateTable('users')
        .set({ passwordHash: newHash })
        .where('id', '=', userId)
        .where('passwordHash', '=', expectedOldHash)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async addGroup(userId, group) {
      await db
        .insertInto('userGroups')
        .values({ userId, groupName: group })
        .onConflict((conflict) => conflict.columns(['userId', 'groupName']).doNothing())
        .execute();
      identityChanges.changed();
    },

    async removeGroup(userId, group) {
      await db.deleteFrom('userGroups').where('userId', '=', userId).where('groupName', '=', group).execute();
      identityChanges.changed();
    },

    async setDisabledState(userId, state) {
      await db.updateTable('users').set(state).where('id', '=', userId).execute();
      identityChanges.changed();
    },

    async updateProfile(userId, columns) {
      await db.updateTable('users').set(columns).where('id', '=', userId).execute();
    },

    findLoginCredentials: (key) =>
      db
        .selectFrom('users')
        .select(['id', 'passwordHash', 'disabledAt'])
        .where('usernameKey', '=', key)
        .executeTakeFirst(),

    async recordLogin(trx, userId, at) {
      await trx
        .updateTable('users')
        .set((eb) => ({ loginCount: eb('loginCount', '+', 1), lastLoginAt: at }))
        .where('id', '=', userId)
        .execute();
    },

    async addMinutesOnline(userId, minutes) {
      await db
        .updateTable('users')
        .set((eb) => ({ minutesOnline: eb('minutesOnline', '+', minutes) }))
        .where('id', '=', userId)
        .execute();
    },

    async autoSignatureOf(trx, userId) {
      const row = await trx.selectFrom('users').select('autoSignature').where('id', '=', userId).executeTakeFirst();
      return row?.autoSignature ?? null;
    },

    async incrementPostCount(trx, userId) {
      await trx
        .updateTable('users')
        .set((eb) => ({ postCount: eb('postCount', '+', 1) }))
        .where('id', '=', userId)
        .execute();
    },

    async countTransfer(trx, userId, direction, byteSize) {
      await trx
        .updateTable('users')
        .set((eb) =>
          direction === 'upload'
            ? { uploadCount: eb('uploadCount', '+', 1), uploadBytes: eb('uploadBytes', '+', byteSize) }
            : { downloadCount: eb('downloadCount', '+', 1), downloadBytes: eb('downloadBytes', '+', byteSize) },
        )
        .where('id', '=', userId)
        .execute();
    },
  };
}
