import { revokeUserApiKeys } from '../auth/api-keys.js';
import { hashPassword } from '../auth/passwords.js';
import type { CallerUser } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import type { UserRow } from '../db/schema.js';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import { assertValidUsername, usernameKey } from './username.js';

/** A user as the operator sees it (`baud user list`). */
export interface UserSummary {
  readonly userId: number;
  readonly username: string;
  readonly groups: readonly string[];
  readonly emailAddress: string | null;
  readonly accountCreated: string;
  readonly lastLogin: string | null;
  readonly disabled: boolean;
}

export interface NewUserInput {
  readonly username: string;
  readonly password: string;
  /** Added to `users.defaultGroups`. */
  readonly groups?: readonly string[];
  readonly emailAddress?: string | null;
}

const GROUP_NAME = /^[A-Za-z0-9_.-]{1,32}$/;

function assertValidGroup(group: string): void {
  if (!GROUP_NAME.test(group)) {
    throw new BadRequestError(`group "${group}" is not valid (1-32 of A-Z a-z 0-9 _ . -)`);
  }
}

/** Accounts and groups: creation, passwords, membership, enabling. Shared by the CLI and the API. */
export function createUserService(deps: { db: Db; config: Config; clock: Clock }) {
  const { db, config, clock } = deps;

  function assertValidPassword(password: string): void {
    const minLength = config.users.passwordMinLength;
    if ([...password].length < minLength) {
      throw new BadRequestError(`password must be at least ${minLength} characters`, [
        { pointer: '/password', message: `must be at least ${minLength} characters` },
      ]);
    }
  }

  const findUserRow = (username: string) => findUserRowByName(db, username);

  const groupsOf = (userIds: readonly number[]) => groupsOfUsers(db, userIds);

  async function findUserRowById(userId: number): Promise<UserRow> {
    return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  }

  function summarise(row: UserRow, groups: readonly string[]): UserSummary {
    return {
      userId: row.id,
      username: row.username,
      groups,
      emailAddress: row.emailAddress,
      accountCreated: row.createdAt,
      lastLogin: row.lastLoginAt,
      disabled: row.disabledAt !== null,
    };
  }

  return {
    assertValidPassword,

    /** Creates an account in `users.defaultGroups` plus `groups`. Name clashes → ConflictError. */
    async createUser(input: NewUserInput): Promise<UserSummary> {
      assertValidUsername(input.username);
      assertValidPassword(input.password);
      const groups = [...new Set([...config.users.defaultGroups, ...(input.groups ?? [])])];
      for (const group of groups) assertValidGroup(group);
      const passwordHash = await hashPassword(input.password);
      const now = clock.now().toISOString();
      const key = usernameKey(input.username);
      const userId = await db.transaction().execute(async (trx) => {
        const clash = await trx.selectFrom('users').select('id').where('usernameKey', '=', key).executeTakeFirst();
        if (clash) throw new ConflictError(`The username "${input.username}" is taken.`);
        const { id } = await trx
          .insertInto('users')
          .values({
            username: input.username,
            usernameKey: key,
            passwordHash,
            emailAddress: input.emailAddress ?? null,
            realName: null,
            location: null,
            affiliations: null,
            webAddress: null,
            autoSignature: null,
            createdAt: now,
            disabledAt: null,
            credentialsChangedAt: now,
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
      return summarise(await findUserRowById(userId), groups.sort());
    },

    /**
     * Sets a new password. Every credential the old one stood behind ends with it: login
     * sessions (their refresh families die) and API keys (revoked). One transaction, so no
     * key outlives a password change that took effect.
     */
    async setPassword(username: string, password: string): Promise<void> {
      assertValidPassword(password);
      const row = await findUserRow(username);
      const passwordHash = await hashPassword(password);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('users')
          .set({ passwordHash, credentialsChangedAt: now })
          .where('id', '=', row.id)
          .execute();
        await revokeUserApiKeys(trx, row.id, now);
      });
    },

    async addGroup(username: string, group: string): Promise<UserSummary> {
      assertValidGroup(group);
      const row = await findUserRow(username);
      await db
        .insertInto('userGroups')
        .values({ userId: row.id, groupName: group })
        .onConflict((conflict) => conflict.columns(['userId', 'groupName']).doNothing())
        .execute();
      return summarise(row, (await groupsOf([row.id])).get(row.id) ?? []);
    },

    async removeGroup(username: string, group: string): Promise<UserSummary> {
      const row = await findUserRow(username);
      await db.deleteFrom('userGroups').where('userId', '=', row.id).where('groupName', '=', group).execute();
      return summarise(row, (await groupsOf([row.id])).get(row.id) ?? []);
    },

    /** Disabling ends every session at once; the account keeps its data. */
    async setDisabled(username: string, disabled: boolean): Promise<UserSummary> {
      const row = await findUserRow(username);
      const now = clock.now().toISOString();
      await db
        .updateTable('users')
        .set(disabled ? { disabledAt: row.disabledAt ?? now, credentialsChangedAt: now } : { disabledAt: null })
        .where('id', '=', row.id)
        .execute();
      const updated = await findUserRow(username);
      return summarise(updated, (await groupsOf([row.id])).get(row.id) ?? []);
    },

    async listUsers(): Promise<UserSummary[]> {
      const rows = await db.selectFrom('users').selectAll().orderBy('id').execute();
      const groups = await groupsOf(rows.map((row) => row.id));
      return rows.map((row) => summarise(row, groups.get(row.id) ?? []));
    },

    async getUser(username: string): Promise<UserSummary> {
      const row = await findUserRow(username);
      return summarise(row, (await groupsOf([row.id])).get(row.id) ?? []);
    },

    /** The caller view of an enabled user, or null when the account is gone or disabled. */
    async loadCallerUser(userId: number): Promise<CallerUser | null> {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', userId)
        .where('disabledAt', 'is', null)
        .executeTakeFirst();
      if (!row) return null;
      return toCallerUser(row, (await groupsOf([row.id])).get(row.id) ?? []);
    },

    async countUsers(): Promise<number> {
      const { count } = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(count);
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;

/** Group names of each user, sorted; users without groups map to []. */
export async function groupsOfUsers(db: Db, userIds: readonly number[]): Promise<Map<number, string[]>> {
  const groups = new Map<number, string[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return groups;
  const rows = await db
    .selectFrom('userGroups')
    .select(['userId', 'groupName'])
    .where('userId', 'in', [...userIds])
    .orderBy('groupName')
    .execute();
  for (const row of rows) groups.get(row.userId)?.push(row.groupName);
  return groups;
}

/** The account named `username` (case-insensitively); unknown → NotFoundError. */
export async function findUserRowByName(db: Db, username: string): Promise<UserRow> {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('usernameKey', '=', usernameKey(username))
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`No user named "${username}".`);
  return row;
}

function parseProperties(json: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    return Object.fromEntries(
      Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  } catch {
    return {};
  }
}

export function toCallerUser(row: UserRow, groups: readonly string[]): CallerUser {
  return {
    id: row.id,
    username: row.username,
    groups,
    accountCreatedAt: new Date(row.createdAt),
    loginCount: row.loginCount,
    postCount: row.postCount,
    uploadCount: row.uploadCount,
    uploadBytes: row.uploadBytes,
    downloadCount: row.downloadCount,
    downloadBytes: row.downloadBytes,
    achievementCount: row.achievementCount,
    achievementPoints: row.achievementPoints,
    properties: parseProperties(row.properties),
  };
}
