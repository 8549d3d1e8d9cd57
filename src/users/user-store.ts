import { sql, type Transaction } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { pageById, rowsToFetch } from '../db/keyset.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { Tables, UserRow } from '../db/schema.js';
import type { IdentityChanges } from '../identity-changes.js';
import type { Page, PageRequest } from '../page.js';
import { usernameKey } from './username.js';

/** What a new account is created with; every other column starts empty or at zero. */
export interface NewAccount {
  readonly username: string;
  readonly passwordHash: string;
  readonly emailAddress: string | null;
  readonly realName: string | null;
  readonly location: string | null;
  readonly createdAt: string;
  /** An application awaiting a sysop's approval. */
  readonly isPending: boolean;
  readonly registrationNote: string | null;
}

/** Where an account stands: awaiting approval, let in, or locked out (which wins over pending). */
export type AccountStatus = 'pending' | 'active' | 'locked';

/** The desk's list filter: a status, and a case-insensitive prefix of the name. */
export interface AccountFilter {
  readonly status?: AccountStatus;
  readonly namePrefix?: string;
}

/** What a login checks before it counts: the account's hash and whether it is disabled. */
export interface LoginCredentials {
  readonly id: number;
  readonly passwordHash: string;
  readonly disabledAt: string | null;
  /** 1 while the account awaits approval. */
  readonly isPending: number;
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
  /** The account unless it is gone, disabled or still awaiting approval. */
  findEnabledById(userId: number): Promise<UserRow | undefined>;
  /** Every account, oldest first. */
  listAll(): Promise<UserRow[]>;
  /** The board's members: every account but the applications waiting for a decision. */
  count(): Promise<number>;
  /** What lists of people show of each user (the node list, last callers); unknown ids are left out. */
  cardsOf(userIds: readonly number[]): Promise<Map<number, UserCard>>;
  /** Group names of each user, sorted; users without groups map to []. */
  groupsOf(userIds: readonly number[]): Promise<Map<number, string[]>>;
  /**
   * Creates the account and its group memberships, and runs `alsoInTransaction` (what else the
   * creation writes: a registration's slot, its audit entry and event) in the same transaction;
   * null when its name is taken, also by an account created at the same moment on another
   * connection (then nothing is written).
   */
  insertUser(
    account: NewAccount,
    groups: readonly string[],
    alsoInTransaction?: (trx: Transaction<Tables>, userId: number) => Promise<void>,
  ): Promise<number | null>;
  /**
   * The account named `username` with its row held until `trx` ends (an update that changes
   * nothing: PostgreSQL locks the row, SQLite has one writer at a time), so that changes to one
   * account made at the same time run one after the other, each deciding on what the last left.
   */
  holdByName(trx: Executor, username: string): Promise<UserRow | undefined>;
  /** Lets a pending account in. */
  markApproved(trx: Executor, userId: number): Promise<void>;
  /** Deletes the account and what hangs on it (groups, sessions, keys: their rows cascade). */
  deleteUser(trx: Executor, userId: number): Promise<void>;
  /** Joins each of `groups`; already a member is no change. */
  joinGroups(trx: Executor, userId: number, groups: readonly string[]): Promise<number>;
  /** Makes `groups` the user's groups, exactly. */
  replaceGroups(trx: Executor, userId: number, groups: readonly string[]): Promise<void>;
  /** One keyset page of the accounts `filter` lets through, by id. */
  listAccounts(filter: AccountFilter, request: PageRequest): Promise<Page<UserRow>>;
  /** Sets the password hash and `credentialsChangedAt` (which ends every older session). */
  setPasswordHash(trx: Executor, userId: number, passwordHash: string, changedAt: string): Promise<void>;
  /**
   * Replaces the password hash only while the stored one is still `expectedOldHash`, so a
   * password changed in between wins: an imported hash upgraded at login (the same password), or
   * a user's own change (which ends the other sessions itself). `credentialsChangedAt` stays.
   * True when it replaced.
   */
  replacePasswordHash(trx: Executor, userId: number, expectedOldHash: string, newHash: string): Promise<boolean>;
  /** Leaves a group; true when the user was a member. */
  leaveGroup(trx: Executor, userId: number, group: string): Promise<boolean>;
  setDisabledState(
    trx: Executor,
    userId: number,
    state: { disabledAt: string | null; credentialsChangedAt?: string },
  ): Promise<void>;
  updateProfile(userId: number, columns: ProfileColumns): Promise<void>;
  findLoginCredentials(usernameKey: string): Promise<LoginCredentials | undefined>;
  /**
   * Counts a login: `loginCount` and `lastLoginAt`. Takes the login's transaction; locks the
   * user's row. False (nothing counted) when the account was locked or is pending by then, or
   * its password is no longer `verifiedHash`, the one the login checked.
   */
  recordLogin(trx: Executor, userId: number, at: string, verifiedHash: string): Promise<boolean>;
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
    db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', p.userId)
      .where('disabledAt', 'is', null)
      .where('isPending', '=', 0),
  );
  const groupsOfUser = prepareQuery(db, (p: { userId: number }) =>
    db.selectFrom('userGroups').select('groupName').where('userId', '=', p.userId).orderBy('groupName'),
  );

  /** Returns how many of `groups` the user joined (not a member before). */
  async function joinGroups(trx: Executor, userId: number, groups: readonly string[]): Promise<number> {
    if (groups.length === 0) return 0;
    const joined = await trx
      .insertInto('userGroups')
      .values(groups.map((groupName) => ({ userId, groupName })))
      .onConflict((conflict) => conflict.columns(['userId', 'groupName']).doNothing())
      .executeTakeFirst();
    identityChanges.changed();
    return Number(joined.numInsertedOrUpdatedRows ?? 0);
  }

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
        .where('isPending', '=', 0)
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

    async insertUser(account, groups, alsoInTransaction) {
      const key = usernameKey(account.username);
      const inserting = db.transaction().execute(async (trx) => {
        const clash = await trx.selectFrom('users').select('id').where('usernameKey', '=', key).executeTakeFirst();
        if (clash) return null;
        const { id } = await trx
          .insertInto('users')
          .values({
            username: account.username,
            usernameKey: key,
            passwordHash: account.passwordHash,
            emailAddress: account.emailAddress,
            realName: account.realName,
            location: account.location,
            isPending: account.isPending ? 1 : 0,
            registrationNote: account.registrationNote,
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
        await alsoInTransaction?.(trx, id);
        return id;
      });
      try {
        return await inserting;
      } catch (error) {
        // Two transactions that both found the name free: the unique index lets one commit.
        if (isUniqueViolation(error)) return null;
        throw error;
      }
    },

    holdByName: (trx, username) =>
      trx
        .updateTable('users')
        .set((eb) => ({ usernameKey: eb.ref('usernameKey') }))
        .where('usernameKey', '=', usernameKey(username))
        .returningAll()
        .executeTakeFirst(),

    async markApproved(trx, userId) {
      await trx.updateTable('users').set({ isPending: 0 }).where('id', '=', userId).execute();
    },

    async deleteUser(trx, userId) {
      await trx.deleteFrom('users').where('id', '=', userId).execute();
    },

    async replaceGroups(trx, userId, groups) {
      await trx.deleteFrom('userGroups').where('userId', '=', userId).execute();
      await joinGroups(trx, userId, groups);
    },

    async listAccounts(filter, request) {
      const { status, namePrefix } = filter;
      const prefixKey = namePrefix === undefined ? '' : usernameKey(namePrefix);
      const rows = await db
        .selectFrom('users')
        .selectAll()
        .$if(status === 'locked', (query) => query.where('disabledAt', 'is not', null))
        .$if(status === 'pending' || status === 'active', (query) =>
          query.where('disabledAt', 'is', null).where('isPending', '=', status === 'pending' ? 1 : 0),
        )
        // substr and length count characters on both databases, whatever the collation.
        .$if(prefixKey !== '', (query) =>
          query.where(sql<string>`substr(username_key, 1, ${[...prefixKey].length})`, '=', prefixKey),
        )
        .$if(request.afterKey !== null, (query) => query.where('id', '>', request.afterKey as number))
        .orderBy('id')
        .limit(rowsToFetch(request))
        .execute();
      return pageById(rows, request);
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

    joinGroups,

    async leaveGroup(trx, userId, group) {
      const left = await trx
        .deleteFrom('userGroups')
        .where('userId', '=', userId)
        .where('groupName', '=', group)
        .executeTakeFirst();
      identityChanges.changed();
      return Number(left.numDeletedRows) === 1;
    },

    async setDisabledState(trx, userId, state) {
      await trx.updateTable('users').set(state).where('id', '=', userId).execute();
      identityChanges.changed();
    },

    async updateProfile(userId, columns) {
      await db.updateTable('users').set(columns).where('id', '=', userId).execute();
    },

    findLoginCredentials: (key) =>
      db
        .selectFrom('users')
        .select(['id', 'passwordHash', 'disabledAt', 'isPending'])
        .where('usernameKey', '=', key)
        .executeTakeFirst(),

    async recordLogin(trx, userId, at, verifiedHash) {
      const counted = await trx
        .updateTable('users')
        .set((eb) => ({ loginCount: eb('loginCount', '+', 1), lastLoginAt: at }))
        .where('id', '=', userId)
        .where('disabledAt', 'is', null)
        .where('isPending', '=', 0)
        .where('passwordHash', '=', verifiedHash)
        .executeTakeFirst();
      return Number(counted.numUpdatedRows) === 1;
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

/** PostgreSQL's unique_violation, or SQLite's UNIQUE constraint failure. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
