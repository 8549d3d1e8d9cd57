import type { Selectable } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { pageById, rowsToFetch } from '../db/keyset.js';
import type { AuditLogTable } from '../db/schema.js';
import type { Page, PageRequest } from '../page.js';

/** Every kind of account change the audit log records. */
export const AUDIT_ACTIONS = [
  'user.registered',
  'user.created',
  'user.password-changed',
  'user.api-key-created',
  'user.api-key-revoked',
  'user.approved',
  'user.rejected',
  'user.locked',
  'user.unlocked',
  'user.groups-changed',
  'user.totp-enrolled',
  'user.totp-enabled',
  'user.totp-disabled',
  'user.totp-recovery-used',
  'user.totp-reset',
  'user.ssh-key-added',
  'user.ssh-key-removed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One change as the log keeps it. */
export interface AuditEntry {
  readonly at: string;
  /** The user who acted; null for the operator at the server's console (the `baud` command). */
  readonly actor: string | null;
  readonly action: AuditAction;
  /** The username the change was made to. */
  readonly target: string;
  readonly detail: string;
}

export type AuditRow = Selectable<AuditLogTable>;

/** The audit log's queries (`audit_log`): appended inside the transaction of each change, read newest first. */
export interface AuditStore {
  /** Records `entry` inside `trx`, the transaction of the change: a change rolled back leaves no entry. */
  record(trx: Executor, entry: AuditEntry): Promise<void>;
  /** One keyset page, newest first. */
  list(request: PageRequest): Promise<Page<AuditRow>>;
}

export function createAuditStore(db: Db): AuditStore {
  return {
    async record(trx, entry) {
      await trx.insertInto('auditLog').values(entry).execute();
    },

    async list(request) {
      const rows = await db
        .selectFrom('auditLog')
        .selectAll()
        .$if(request.afterKey !== null, (query) => query.where('id', '<', request.afterKey as number))
        .orderBy('id', 'desc')
        .limit(rowsToFetch(request))
        .execute();
      return pageById(rows, request);
    },
  };
}
