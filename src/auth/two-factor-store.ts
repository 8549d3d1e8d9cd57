import type { Selectable } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import type { TotpCredentialsTable } from '../db/schema.js';

export type TotpCredentialRow = Selectable<TotpCredentialsTable>;

/** A new (unconfirmed) enrolment, or one carried over by an import. */
export interface NewTotpCredential {
  readonly userId: number;
  readonly sealedSecret: string;
  readonly algorithm: string;
  readonly enrolledAt: string;
}

/**
 * Every query of two-factor login (`totp_credentials`, `totp_recovery_codes`). Each change that
 * must happen once (a confirmation, a code's acceptance, a recovery code's use) is one
 * conditional statement whose row count says whether this caller made it: racing requests, on
 * one node or many, cannot both succeed.
 */
export interface TwoFactorStore {
  /** The user's enrolment (confirmed or not), if any. */
  credentialOf(userId: number): Promise<TotpCredentialRow | undefined>;
  /** Which of `userIds` have two-factor login on (a confirmed enrolment). */
  enabledAmong(userIds: readonly number[]): Promise<Set<number>>;
  /**
   * Writes a new unconfirmed enrolment, replacing one not yet confirmed; false (nothing written)
   * when the user's two-factor login is on.
   */
  enrol(trx: Executor, credential: NewTotpCredential): Promise<boolean>;
  /**
   * Turns the enrolment sealed as `sealedSecret` on, remembering `step` as used; false when it
   * is on already or was replaced meanwhile (nothing written then).
   */
  confirm(trx: Executor, userId: number, sealedSecret: string, at: string, step: number): Promise<boolean>;
  /**
   * Accepts a code of time step `step`: true only if two-factor login is on and no code of this
   * step or a later one was accepted before (then `step` is remembered).
   */
  acceptStep(trx: Executor, userId: number, step: number): Promise<boolean>;
  /** Replaces the user's recovery codes with these hashes. */
  replaceRecoveryCodes(trx: Executor, userId: number, codeHashes: readonly string[]): Promise<void>;
  /** Uses up the recovery code of `codeHash`: true when it was there (and is now gone). */
  useRecoveryCode(trx: Executor, userId: number, codeHash: string): Promise<boolean>;
  /** How many unused recovery codes the user has. */
  recoveryCodesLeft(executor: Executor, userId: number): Promise<number>;
  /** Forgets the enrolment and the recovery codes; true when there was an enrolment. */
  remove(trx: Executor, userId: number): Promise<boolean>;
}

export function createTwoFactorStore(db: Db): TwoFactorStore {
  return {
    credentialOf: (userId) =>
      db.selectFrom('totpCredentials').selectAll().where('userId', '=', userId).executeTakeFirst(),

    async enabledAmong(userIds) {
      if (userIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('totpCredentials')
        .select('userId')
        .where('userId', 'in', [...new Set(userIds)])
        .where('confirmedAt', 'is not', null)
        .execute();
      return new Set(rows.map((row) => row.userId));
    },

    async enrol(trx, credential) {
      const written = await trx
        .insertInto('totpCredentials')
        .values({ ...credential, confirmedAt: null, lastUsedStep: null })
        .onConflict((conflict) =>
          conflict
            .column('userId')
            .doUpdateSet({
              sealedSecret: credential.sealedSecret,
              algorithm: credential.algorithm,
              enrolledAt: credential.enrolledAt,
              lastUsedStep: null,
            })
            .where('totpCredentials.confirmedAt', 'is', null),
        )
        .returning('userId')
        .executeTakeFirst();
      return written !== undefined;
    },

    async confirm(trx, userId, sealedSecret, at, step) {
      const result = await trx
        .updateTable('totpCredentials')
        .set({ confirmedAt: at, lastUsedStep: step })
        .where('userId', '=', userId)
        .where('sealedSecret', '=', sealedSecret)
        .where('confirmedAt', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async acceptStep(trx, userId, step) {
      const result = await trx
        .updateTable('totpCredentials')
        .set({ lastUsedStep: step })
        .where('userId', '=', userId)
        .where('confirmedAt', 'is not', null)
        .where((eb) => eb.or([eb('lastUsedStep', 'is', null), eb('lastUsedStep', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async replaceRecoveryCodes(trx, userId, codeHashes) {
      await trx.deleteFrom('totpRecoveryCodes').where('userId', '=', userId).execute();
      if (codeHashes.length === 0) return;
      await trx
        .insertInto('totpRecoveryCodes')
        .values(codeHashes.map((codeHash) => ({ userId, codeHash })))
        // Two imported backup codes may be the same code: it is one code either way.
        .onConflict((conflict) => conflict.columns(['userId', 'codeHash']).doNothing())
        .execute();
    },

    async useRecoveryCode(trx, userId, codeHash) {
      const result = await trx
        .deleteFrom('totpRecoveryCodes')
        .where('userId', '=', userId)
        .where('codeHash', '=', codeHash)
        .executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async recoveryCodesLeft(executor, userId) {
      const { count } = await executor
        .selectFrom('totpRecoveryCodes')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('userId', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(count);
    },

    async remove(trx, userId) {
      await trx.deleteFrom('totpRecoveryCodes').where('userId', '=', userId).execute();
      const result = await trx.deleteFrom('totpCredentials').where('userId', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
  };
}
