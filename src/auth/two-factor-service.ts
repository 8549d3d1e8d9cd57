import type { AuditStore } from '../audit/audit-store.js';
import type { Caller, CallerUser } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import { BadRequestError, ConflictError, UnauthorizedError } from '../errors.js';
import type { UserStore } from '../users/user-store.js';
import type { LoginReservation, LoginThrottle } from './login-throttle.js';
import type { PasswordConfirmation } from './password-confirmation.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { base32Encode, looksLikeTotpCode, matchingStep, newTotpKey, otpauthUrl, type TotpAlgorithm } from './totp.js';
import { newRecoveryCode, type TwoFactorKeys } from './two-factor-keys.js';
import type { TotpCredentialRow, TwoFactorStore } from './two-factor-store.js';

/** How many recovery codes a confirmation hands out. */
export const RECOVERY_CODE_COUNT = 10;

/** An enrolment as `POST /users/me/totp` answers it: the only time the secret leaves the board. */
export interface TotpEnrolment {
  /** The shared secret, base32. */
  readonly secret: string;
  readonly otpauthUrl: string;
}

/** What a one-time code (or recovery code) proved, to be spent in the transaction it lets in. */
export type OtpProof =
  | { readonly kind: 'code'; readonly step: number }
  | { readonly kind: 'recovery'; readonly codeHash: string };

/** A user whose login asks for a code, and how to check one. */
export interface SecondFactor {
  /** What `otp` proves at `at`, or null when it is neither a current code nor shaped like a recovery code. */
  proofOf(otp: string, at: Date): OtpProof | null;
}

/**
 * Two-factor login with TOTP (RFC 6238): enrolment, confirmation, turning it off (the user with
 * password and code, a sysop without), and what a login checks. The shared secret is sealed at
 * rest and shown once, at enrolment; recovery codes are shown once, at confirmation, and kept
 * as keyed hashes. A code is accepted once: its time step is remembered by a conditional update,
 * so a replay on any node, or two requests racing with one code, get it accepted once.
 */
export interface TwoFactorService {
  /**
   * Starts an enrolment (after the password: 403 when wrong, throttled like logins): a new
   * secret, not yet asked at login. Replaces an unconfirmed one; two-factor login on → 409.
   */
  enrol(caller: Caller, input: { password: string; clientAddress: string }): Promise<TotpEnrolment>;
  /**
   * Turns two-factor login on with a first code of the enrolment (wrong → 400; no enrolment or
   * on already → 409) and returns the recovery codes, shown this once.
   */
  confirm(caller: Caller, code: string): Promise<{ recoveryCodes: string[] }>;
  /**
   * Turns it off: password (403 when wrong) and a current code or an unused recovery code (400
   * when wrong), both counted by the login throttle when wrong. Not on → 409.
   */
  disable(caller: Caller, input: { password: string; code: string; clientAddress: string }): Promise<void>;
  /** Whether the user's login asks for a code. */
  isEnabled(userId: number): Promise<boolean>;
  /** Which of `userIds` have two-factor login on. */
  enabledAmong(userIds: readonly number[]): Promise<Set<number>>;
  /** The second factor the user's login asks for, or null when two-factor login is off. */
  secondFactorOf(userId: number): Promise<SecondFactor | null>;
  /**
   * Spends `proof` inside the login's transaction: false when the code was accepted before (or a
   * later one was), or the recovery code is used up, or two-factor login went off meanwhile.
   */
  spend(trx: Executor, user: { id: number; username: string }, proof: OtpProof, at: string): Promise<boolean>;
  /**
   * Turns two-factor login off for the user inside `trx` (a sysop's desk, for a lost phone);
   * false when it was neither on nor enrolled. The desk writes the audit entry.
   */
  clear(trx: Executor, userId: number): Promise<boolean>;
}

export function createTwoFactorService(deps: {
  config: Config;
  clock: Clock;
  keys: TwoFactorKeys;
  stores: { readonly twoFactor: TwoFactorStore; readonly users: UserStore; readonly audit: AuditStore };
  passwords: PasswordConfirmation;
  loginThrottle: LoginThrottle;
}): TwoFactorService {
  const { config, clock, keys, passwords, loginThrottle } = deps;
  const { twoFactor: store, users, audit } = deps.stores;

  function requireUser(caller: Caller): CallerUser {
    if (caller.kind !== 'user') throw new UnauthorizedError('auth.required');
    return caller.user;
  }

  const algorithmOf = (row: TotpCredentialRow): TotpAlgorithm => (row.algorithm === 'sha256' ? 'sha256' : 'sha1');

  function secondFactorOf(row: TotpCredentialRow): SecondFactor {
    const key = keys.open(row.userId, row.sealedSecret);
    return {
      proofOf(otp, at) {
        if (looksLikeTotpCode(otp)) {
          const step = matchingStep(key, otp, at, algorithmOf(row));
          return step === null ? null : { kind: 'code', step };
        }
        return { kind: 'recovery', codeHash: keys.hashRecoveryCode(row.userId, otp) };
      },
    };
  }

  async function spend(trx: Executor, user: { id: number; username: string }, proof: OtpProof, at: string) {
    if (proof.kind === 'code') return store.acceptStep(trx, user.id, proof.step);
    if (!(await store.useRecoveryCode(trx, user.id, proof.codeHash))) return false;
    const left = await store.recoveryCodesLeft(trx, user.id);
    await audit.record(trx, {
      at,
      actor: user.username,
      action: 'user.totp-recovery-used',
      target: user.username,
      detail: `a recovery code was used; ${left} left`,
    });
    return true;
  }

  /** The user's change, in one transaction with the user's row held and the password's throttle settled. */
  function changeOwn<T>(
    user: CallerUser,
    reservation: LoginReservation | null,
    change: (trx: Executor, at: string) => Promise<T>,
  ): Promise<T> {
    return users.transaction(async (trx) => {
      await users.holdByName(trx, user.username);
      const result = await change(trx, clock.now().toISOString());
      if (reservation) await loginThrottle.recordSuccess(trx, reservation);
      return result;
    });
  }

  return {
    async enrol(caller, { password, clientAddress }) {
      const user = requireUser(caller);
      // Said before the password is asked, so a right one is never left counted as a guess (the
      // transaction below still decides, should two enrolments race).
      if ((await store.credentialOf(user.id))?.confirmedAt != null) throw new ConflictError('totp.already-enabled');
      const { reservation } = await passwords.confirm(user, password, clientAddress);
      const key = newTotpKey();
      const sealedSecret = keys.seal(user.id, key);
      await changeOwn(user, reservation, async (trx, at) => {
        if (!(await store.enrol(trx, { userId: user.id, sealedSecret, algorithm: 'sha1', enrolledAt: at }))) {
          throw new ConflictError('totp.already-enabled');
        }
        await audit.record(trx, {
          at,
          actor: user.username,
          action: 'user.totp-enrolled',
          target: user.username,
          detail: 'two-factor enrolment started (not on until confirmed)',
        });
      });
      const secret = base32Encode(key);
      const { boardName } = config.general;
      return { secret, otpauthUrl: otpauthUrl(boardName, user.username, secret) };
    },

    async confirm(caller, code) {
      const user = requireUser(caller);
      const row = await store.credentialOf(user.id);
      if (!row) throw new ConflictError('totp.not-enrolled');
      if (row.confirmedAt !== null) throw new ConflictError('totp.already-enabled');
      const step = looksLikeTotpCode(code)
        ? matchingStep(keys.open(user.id, row.sealedSecret), code, clock.now(), algorithmOf(row))
        : null;
      if (step === null) throw new BadRequestError('totp.invalid-code');
      const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      await changeOwn(user, null, async (trx, at) => {
        // The enrolment the code was checked against, still unconfirmed: of two racing
        // confirmations (or one racing a new enrolment) one wins, the other writes nothing.
        if (!(await store.confirm(trx, user.id, row.sealedSecret, at, step))) {
          throw new ConflictError(
            'totp.already-enabled',
            'Two-factor login was turned on, or enrolled anew, meanwhile.',
          );
        }
        await store.replaceRecoveryCodes(
          trx,
          user.id,
          recoveryCodes.map((recoveryCode) => keys.hashRecoveryCode(user.id, recoveryCode)),
        );
        await audit.record(trx, {
          at,
          actor: user.username,
          action: 'user.totp-enabled',
          target: user.username,
          detail: `two-factor login on; ${RECOVERY_CODE_COUNT} recovery codes issued`,
        });
      });
      return { recoveryCodes };
    },

    async disable(caller, { password, code, clientAddress }) {
      const user = requireUser(caller);
      const row = await store.credentialOf(user.id);
      if (row?.confirmedAt == null) throw new ConflictError('totp.not-enabled');
      const { reservation } = await passwords.confirm(user, password, clientAddress);
      const proof = secondFactorOf(row).proofOf(code, clock.now());
      // A wrong code keeps the throttle's slots: guessing codes costs what guessing passwords does.
      const wrongCode = () =>
        new BadRequestError('totp.invalid-code').withHeaders(rateLimitHeaders(reservation.quotaIfFailed));
      if (proof === null) throw wrongCode();
      await changeOwn(user, reservation, async (trx, at) => {
        if (!(await spend(trx, user, proof, at))) throw wrongCode();
        await store.remove(trx, user.id);
        await audit.record(trx, {
          at,
          actor: user.username,
          action: 'user.totp-disabled',
          target: user.username,
          detail: 'two-factor login off; recovery codes deleted',
        });
      });
    },

    isEnabled: async (userId) => (await store.enabledAmong([userId])).has(userId),
    enabledAmong: (userIds) => store.enabledAmong(userIds),

    async secondFactorOf(userId) {
      const row = await store.credentialOf(userId);
      return row?.confirmedAt == null ? null : secondFactorOf(row);
    },

    spend,
    clear: (trx, userId) => store.remove(trx, userId),
  };
}
