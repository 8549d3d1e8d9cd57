import type { AuditAction, AuditRow, AuditStore } from '../audit/audit-store.js';
import type { CredentialService, NewAccountInput } from '../auth/credential-service.js';
import type { TwoFactorService } from '../auth/two-factor-service.js';
import { type Caller, isSysop } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import type { UserRow } from '../db/schema.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import { mapPage, type Page, type PageRequest } from '../page.js';
import { assertValidGroup, statusOf } from '../users/user-service.js';
import type { AccountFilter, AccountStatus, UserStore } from '../users/user-store.js';

/** Who works the desk: a caller of the API (a sysop), or the operator at the server's console. */
export type DeskActor = Caller | typeof CONSOLE;

/** The operator running the `baud` command on the server: the audit log names no user for it. */
export const CONSOLE = { kind: 'console' } as const;

/** An account as the desk lists it. */
export interface AccountView {
  readonly userId: number;
  readonly username: string;
  readonly status: AccountStatus;
  readonly groups: string[];
  readonly email: string | null;
  readonly createdAt: string;
  readonly lastLoginAt: string | null;
  /** Whether login asks this account for a one-time code. */
  readonly totpEnabled: boolean;
  /** What the applicant told the sysop when registering. */
  readonly note: string | null;
}

/** One entry of the audit log. */
export interface AuditView {
  readonly id: number;
  readonly at: string;
  /** The user who acted; null for the operator at the console. */
  readonly actor: string | null;
  readonly action: string;
  readonly target: string;
  readonly detail: string;
}

/**
 * The sysop's desk (`/admin`, and `baud user approve|reject|lock|unlock`, `baud audit`): the
 * accounts, their applications, locks and groups, and the audit log of every change. Only
 * sysops (anonymous → 401, others → 403, decided before any name is looked up, so the answer
 * tells nothing about which names exist). Each change is one transaction that holds the
 * account's row first, decides on what it finds there and writes its audit entry: changes racing
 * on one account run one after the other, and a refused one writes nothing.
 */
export interface DeskService {
  listAccounts(actor: DeskActor, filter: AccountFilter, request: PageRequest): Promise<Page<AccountView>>;
  /** An application (pending) becomes active and joins `users.defaultGroups`; anything else → 409. */
  approve(actor: DeskActor, username: string): Promise<AccountView>;
  /** An application is deleted, its name free again; anything else → 409. */
  reject(actor: DeskActor, username: string): Promise<void>;
  /** Locks the account out and ends every session at once; locking oneself → 409; already locked: no change. */
  lock(actor: DeskActor, username: string): Promise<AccountView>;
  /** Lets a locked account in again (its ended sessions stay ended); not locked: no change. */
  unlock(actor: DeskActor, username: string): Promise<AccountView>;
  /** Makes `groups` the account's groups, exactly. */
  setGroups(actor: DeskActor, username: string, groups: readonly string[]): Promise<AccountView>;
  /** Opens an active account (`baud user add`): the rules of account creation hold (400, 409). */
  createAccount(actor: DeskActor, input: NewAccountInput): Promise<AccountView>;
  /** Adds the account to one group; already a member: no change. */
  joinGroup(actor: DeskActor, username: string, group: string): Promise<AccountView>;
  /** Takes the account out of one group; not a member: no change. */
  leaveGroup(actor: DeskActor, username: string, group: string): Promise<AccountView>;
  /**
   * Turns two-factor login off (a lost phone): the enrolment and its recovery codes are deleted,
   * the next login asks for the password alone. Neither on nor enrolled: no change.
   */
  resetTotp(actor: DeskActor, username: string): Promise<void>;
  /** The audit log, newest first. */
  listAudit(actor: DeskActor, request: PageRequest): Promise<Page<AuditView>>;
}

export function createDeskService(deps: {
  config: Config;
  clock: Clock;
  stores: { readonly users: UserStore; readonly audit: AuditStore };
  credentials: Pick<CredentialService, 'endSessions' | 'createAccount'>;
  twoFactor: Pick<TwoFactorService, 'enabledAmong' | 'clear'>;
}): DeskService {
  const { config, clock, credentials, twoFactor } = deps;
  const { users, audit } = deps.stores;

  /** The actor's name for the audit log; refuses anyone but a sysop or the console. */
  function actorName(actor: DeskActor): string | null {
    if (actor.kind === 'console') return null;
    if (actor.kind === 'anonymous') throw new UnauthorizedError('auth.required');
    if (!isSysop(actor)) throw new ForbiddenError('desk.sysops-only', 'Only sysops work the desk.');
    return actor.user.username;
  }

  async function viewsOf(rows: readonly UserRow[]): Promise<AccountView[]> {
    const ids = rows.map((row) => row.id);
    const [groups, totpEnabled] = await Promise.all([users.groupsOf(ids), twoFactor.enabledAmong(ids)]);
    return rows.map((row) => ({
      userId: row.id,
      username: row.username,
      status: statusOf(row),
      groups: groups.get(row.id) ?? [],
      email: row.emailAddress,
      createdAt: row.createdAt,
      lastLoginAt: row.lastLoginAt,
      totpEnabled: totpEnabled.has(row.id),
      note: row.registrationNote,
    }));
  }

  async function viewOf(userId: number): Promise<AccountView> {
    const row = await users.findById(userId);
    if (!row) throw new NotFoundError('desk.account-gone', 'The account is gone.');
    const [view] = await viewsOf([row]);
    if (!view) throw new Error(`no view of user ${userId}`);
    return view;
  }

  /**
   * Runs `change` on the account named `username` in one transaction with its row held, and
   * records what it did (when it returns a detail; null: nothing changed, nothing recorded).
   */
  async function changeAccount(
    actor: DeskActor,
    username: string,
    action: AuditAction,
    change: (trx: Executor, row: UserRow, at: string) => Promise<string | null>,
  ): Promise<UserRow> {
    const name = actorName(actor);
    return users.transaction(async (trx) => {
      const row = await users.holdByName(trx, username);
      if (!row) throw new NotFoundError('user.not-found', `No user named "${username}".`);
      const at = clock.now().toISOString();
      const detail = await change(trx, row, at);
      if (detail !== null) await audit.record(trx, { at, actor: name, action, target: row.username, detail });
      return row;
    });
  }

  const assertApplication = (row: UserRow, verb: string) => {
    if (row.isPending !== 1)
      throw new ConflictError('desk.not-pending', `"${row.username}" is not an application to ${verb}.`);
  };

  return {
    async listAccounts(actor, filter, request) {
      actorName(actor);
      const page = await users.listAccounts(filter, request);
      return { ...page, items: await viewsOf(page.items) };
    },

    async approve(actor, username) {
      const { defaultGroups } = config.users;
      const row = await changeAccount(actor, username, 'user.approved', async (trx, account) => {
        assertApplication(account, 'approve');
        await users.markApproved(trx, account.id);
        await users.joinGroups(trx, account.id, defaultGroups);
        return `approved; joined ${defaultGroups.join(', ') || 'no group'}`;
      });
      return viewOf(row.id);
    },

    async reject(actor, username) {
      await changeAccount(actor, username, 'user.rejected', async (trx, account) => {
        assertApplication(account, 'reject');
        await users.deleteUser(trx, account.id);
        return 'application rejected and deleted';
      });
    },

    async lock(actor, username) {
      const row = await changeAccount(actor, username, 'user.locked', async (trx, account, at) => {
        if (actor.kind === 'user' && actor.user.id === account.id) {
          throw new ConflictError('desk.self-lock', 'You cannot lock yourself out.');
        }
        if (account.disabledAt !== null) return null;
        await users.setDisabledState(trx, account.id, { disabledAt: at });
        await credentials.endSessions(trx, account.id, at);
        return 'locked; every session ended';
      });
      return viewOf(row.id);
    },

    async unlock(actor, username) {
      const row = await changeAccount(actor, username, 'user.unlocked', async (trx, account) => {
        if (account.disabledAt === null) return null;
        await users.setDisabledState(trx, account.id, { disabledAt: null });
        return 'unlocked';
      });
      return viewOf(row.id);
    },

    async setGroups(actor, username, groups) {
      const wanted = [...new Set(groups)].sort();
      for (const group of wanted) assertValidGroup(group);
      const row = await changeAccount(actor, username, 'user.groups-changed', async (trx, account) => {
        await users.replaceGroups(trx, account.id, wanted);
        return `groups: ${wanted.join(', ') || 'none'}`;
      });
      return viewOf(row.id);
    },

    async createAccount(actor, input) {
      const name = actorName(actor);
      const extraGroups = input.groups?.length ? `; also joins ${[...input.groups].sort().join(', ')}` : '';
      const created = await credentials.createAccount({ ...input, isPending: false }, async (trx) => {
        const detail = `account created${extraGroups}`;
        await audit.record(trx, {
          at: clock.now().toISOString(),
          actor: name,
          action: 'user.created',
          target: input.username,
          detail,
        });
      });
      return viewOf(created.userId);
    },

    async joinGroup(actor, username, group) {
      assertValidGroup(group);
      const row = await changeAccount(actor, username, 'user.groups-changed', async (trx, account) =>
        (await users.joinGroups(trx, account.id, [group])) === 1 ? `joined ${group}` : null,
      );
      return viewOf(row.id);
    },

    async leaveGroup(actor, username, group) {
      const row = await changeAccount(actor, username, 'user.groups-changed', async (trx, account) =>
        (await users.leaveGroup(trx, account.id, group)) ? `left ${group}` : null,
      );
      return viewOf(row.id);
    },

    async resetTotp(actor, username) {
      await changeAccount(actor, username, 'user.totp-reset', async (trx, account) =>
        (await twoFactor.clear(trx, account.id)) ? 'two-factor login off; recovery codes deleted' : null,
      );
    },

    async listAudit(actor, request) {
      actorName(actor);
      return mapPage(await audit.list(request), (row: AuditRow): AuditView => ({ ...row, id: Number(row.id) }));
    },
  };
}
