import type { AuditStore } from '../audit/audit-store.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import { ForbiddenError, TooManyRequestsError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import { registrationModeOf } from '../users/registration-mode.js';
import type { CredentialService } from './credential-service.js';
import type { LoginAttemptStore } from './login-attempt-store.js';

/** `POST /auth/register`: the applicant's fields, schema-checked already (lengths, email shape). */
export interface RegistrationInput {
  readonly username: string;
  readonly password: string;
  readonly email?: string | undefined;
  readonly realName?: string | undefined;
  readonly location?: string | undefined;
  /** For the sysop who decides. */
  readonly note?: string | undefined;
}

export interface Registration {
  readonly username: string;
  readonly status: 'active' | 'pending';
}

/** Accepted registrations one address may make per window. */
export const REGISTRATIONS_PER_ADDRESS = 5;
export const REGISTRATION_WINDOW_SECONDS = 60 * 60;
/** The prefix of an address's registration window among the throttle's windows. */
const REGISTRATION_SUBJECT = 'register:';

export interface RegistrationService {
  /**
   * Opens an account for an applicant: active (`open`) or pending (`approval`); `closed` → 403.
   * The rules of account creation hold (400, 409 for a name taken in any case). At most
   * REGISTRATIONS_PER_ADDRESS accepted per address per window (429 beyond); a refused
   * registration takes no slot, since the slot is taken in the account's own transaction, with
   * its audit entry and its `user.registered` event: all of it is written, or none.
   */
  register(input: RegistrationInput, clientAddress: string): Promise<Registration>;
}

/** Text the applicant left empty is no text. */
const textOrNull = (value: string | undefined) => (value?.trim() ? value.trim() : null);

export function createRegistrationService(deps: {
  config: Config;
  clock: Clock;
  credentials: CredentialService;
  /** Accepted registrations are counted per address in the login throttle's windows (`register:<address>`). */
  windows: LoginAttemptStore;
  audit: AuditStore;
  events: EventLog;
}): RegistrationService {
  const { config, clock, credentials, windows, audit, events } = deps;
  const windowMs = REGISTRATION_WINDOW_SECONDS * 1000;

  return {
    async register(input, clientAddress) {
      const mode = registrationModeOf(config);
      if (mode === 'closed') {
        throw new ForbiddenError(
          'registration.closed',
          'This board takes no registrations; ask the sysop for an account.',
        );
      }
      const isPending = mode === 'approval';
      const status = isPending ? 'pending' : 'active';
      const now = clock.now();
      const createdAt = now.toISOString();
      const windowOverAt = new Date(now.getTime() - windowMs).toISOString();
      const subject = `${REGISTRATION_SUBJECT}${clientAddress}`;
      const tooMany = (windowStartedAt: string) =>
        new TooManyRequestsError(
          'registration.too-many',
          `At most ${REGISTRATIONS_PER_ADDRESS} registrations an hour come from one address; try again later.`,
          (Date.parse(windowStartedAt) + windowMs - now.getTime()) / 1000,
        );
      // Refused before the password is hashed: an address over its limit costs a read, not a hash.
      const fullSince = await windows.fullWindowStartOf({
        subject,
        windowOverAt,
        maxAttempts: REGISTRATIONS_PER_ADDRESS,
      });
      if (fullSince !== undefined) throw tooMany(fullSince);
      const created = await credentials.createAccount(
        {
          username: input.username,
          password: input.password,
          emailAddress: textOrNull(input.email),
          realName: textOrNull(input.realName),
          location: textOrNull(input.location),
          isPending,
          registrationNote: textOrNull(input.note),
        },
        async (trx, userId) => {
          const slot = await windows.takeSlot(trx, {
            subject,
            now: createdAt,
            windowOverAt,
            maxAttempts: REGISTRATIONS_PER_ADDRESS,
          });
          // Filled by registrations racing this one since the read above.
          if (slot === undefined) throw tooMany(await windows.windowStartOf(trx, subject));
          await audit.record(trx, {
            at: createdAt,
            actor: input.username,
            action: 'user.registered',
            target: input.username,
            detail: `registered from ${clientAddress}; ${status}`,
          });
          await events.append(trx, {
            type: 'user.registered',
            areaTag: null,
            userId,
            data: { username: input.username, status, createdAt },
          });
        },
      );
      // Registrations are rare: each clears the windows that are over, which nothing else would.
      await windows.deleteWindowsOver(windowOverAt, REGISTRATION_SUBJECT);
      return { username: created.username, status };
    },
  };
}
