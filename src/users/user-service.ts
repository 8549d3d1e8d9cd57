import type { CallerUser } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import type { UserRow } from '../db/schema.js';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import type { AccountStatus, UserCard, UserStore } from './user-store.js';
import { assertValidUsername } from './username.js';

/** A user as the operator sees it (`baud user list`). */
export interface UserSummary {
  readonly userId: number;
  readonly username: string;
  readonly groups: readonly string[];
  readonly emailAddress: string | null;
  readonly accountCreated: string;
  readonly lastLogin: string | null;
  readonly disabled: boolean;
  readonly status: AccountStatus;
}

/** A new account: its password comes hashed (auth checks and hashes passwords). */
export interface NewUserInput {
  readonly username: string;
  readonly passwordHash: string;
  /** Added to `users.defaultGroups`. */
  readonly groups?: readonly string[];
  readonly emailAddress?: string | null;
  readonly realName?: string | null;
  readonly location?: string | null;
  /** An application: it joins no group until a sysop approves it (then `users.defaultGroups`). */
  readonly isPending?: boolean;
  readonly registrationNote?: string | null;
}

/** What else the creation of an account writes, in its transaction (see `UserStore.insertUser`). */
export type AlsoInTransaction = (trx: Executor, userId: number) => Promise<void>;

const GROUP_NAME = /^[A-Za-z0-9_.-]{1,32}$/;

export function assertValidGroup(group: string): void {
  if (!GROUP_NAME.test(group)) {
    throw new BadRequestError('user.invalid-group', `group "${group}" is not valid (1-32 of A-Z a-z 0-9 _ . -)`);
  }
}

/** Accounts and groups, shared by the CLI and the API. Passwords and what they stand behind are auth's. */
export interface UserService {
  /**
   * Creates an account in `users.defaultGroups` plus `groups` (a pending one in none), with
   * `alsoInTransaction` in its transaction. Name clashes → ConflictError.
   */
  createUser(input: NewUserInput, alsoInTransaction?: AlsoInTransaction): Promise<UserSummary>;
  listUsers(): Promise<UserSummary[]>;
  /** Unknown → NotFoundError. */
  getUser(username: string): Promise<UserSummary>;
  /** The caller view of an enabled user, or null when the account is gone or disabled. */
  loadCallerUser(userId: number): Promise<CallerUser | null>;
  countUsers(): Promise<number>;
  /** What the board's lists of people show of each user; unknown ids are left out. */
  cardsOf(userIds: readonly number[]): Promise<Map<number, UserCard>>;
}

export function createUserService(deps: { store: UserStore; config: Config; clock: Clock }): UserService {
  const { store, config, clock } = deps;

  async function summaryOf(row: UserRow): Promise<UserSummary> {
    return summarise(row, (await store.groupsOf([row.id])).get(row.id) ?? []);
  }

  return {
    async createUser(input, alsoInTransaction) {
      assertValidUsername(input.username);
      const isPending = input.isPending ?? false;
      const groups = isPending ? [] : [...new Set([...config.users.defaultGroups, ...(input.groups ?? [])])];
      for (const group of groups) assertValidGroup(group);
      const account = {
        username: input.username,
        passwordHash: input.passwordHash,
        emailAddress: input.emailAddress ?? null,
        realName: input.realName ?? null,
        location: input.location ?? null,
        createdAt: clock.now().toISOString(),
        isPending,
        registrationNote: input.registrationNote ?? null,
      };
      const userId = await store.insertUser(account, groups, alsoInTransaction);
      if (userId === null) throw new ConflictError('user.username-taken', `The username "${input.username}" is taken.`);
      const row = await store.findById(userId);
      if (!row) throw new Error(`user ${userId} vanished right after it was created`);
      return summarise(row, groups.sort());
    },

    async listUsers() {
      const rows = await store.listAll();
      const groups = await store.groupsOf(rows.map((row) => row.id));
      return rows.map((row) => summarise(row, groups.get(row.id) ?? []));
    },

    async getUser(username) {
      return summaryOf(await findUserNamed(store, username));
    },

    async loadCallerUser(userId) {
      const row = await store.findEnabledById(userId);
      if (!row) return null;
      return toCallerUser(row, (await store.groupsOf([row.id])).get(row.id) ?? []);
    },

    countUsers: () => store.count(),
    cardsOf: (userIds) => store.cardsOf(userIds),
  };
}

/** The account named `username` (case-insensitively); unknown → NotFoundError. */
/**
 * The account named `username` (any case), or the 404 of an unknown name; with
 * `applications: false` an application (pending) answers that 404 too, exactly alike.
 */
export async function findUserNamed(
  store: UserStore,
  username: string,
  options: { readonly applications: boolean } = { applications: true },
): Promise<UserRow> {
  const row = await store.findByName(username);
  if (!row || (row.isPending === 1 && !options.applications)) {
    throw new NotFoundError('user.not-found', `No user named "${username}".`);
  }
  return row;
}

/** Where the account stands: locked wins over pending (a locked application stays locked out). */
export function statusOf(row: UserRow): AccountStatus {
  if (row.disabledAt !== null) return 'locked';
  return row.isPending === 1 ? 'pending' : 'active';
}

export function summarise(row: UserRow, groups: readonly string[]): UserSummary {
  return {
    userId: row.id,
    username: row.username,
    groups,
    emailAddress: row.emailAddress,
    accountCreated: row.createdAt,
    lastLogin: row.lastLoginAt,
    disabled: row.disabledAt !== null,
    status: statusOf(row),
  };
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

function toCallerUser(row: UserRow, groups: readonly string[]): CallerUser {
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
