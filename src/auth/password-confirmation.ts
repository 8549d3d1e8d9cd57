import type { CallerUser } from '../caller.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import type { UserStore } from '../users/user-store.js';
import { usernameKey } from '../users/username.js';
import type { LoginReservation, LoginThrottle } from './login-throttle.js';
import { verifyPassword } from './passwords.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

/** A password confirmed: the throttle's reservation to settle, and the hash it was checked against. */
export interface ConfirmedPassword {
  readonly reservation: LoginReservation;
  /** A change that replaces the password replaces only this hash, so of two racing changes one wins. */
  readonly passwordHash: string;
}

/**
 * The password asked again before a change to a signed-in user's credentials (changing the
 * password, turning two-factor login on or off). It is a guess like a login's: it takes its slots in the login throttle first
 * (429 once the account's or the address's window is full), a wrong one keeps them (403, with
 * the RateLimit headers of what is left), and the change settles a right one with
 * `LoginThrottle.recordSuccess` inside its own transaction, or leaves the slots taken when what
 * it checks next (a one-time code) is wrong.
 */
export interface PasswordConfirmation {
  confirm(user: CallerUser, password: string, clientAddress: string): Promise<ConfirmedPassword>;
}

export function createPasswordConfirmation(deps: {
  users: UserStore;
  loginThrottle: LoginThrottle;
}): PasswordConfirmation {
  const { users, loginThrottle } = deps;
  return {
    async confirm(user, password, clientAddress) {
      const reservation = await loginThrottle.reserve({ usernameKey: usernameKey(user.username), clientAddress });
      const credentials = await users.findLoginCredentials(reservation.attempt.usernameKey);
      if (credentials?.id !== user.id)
        throw new UnauthorizedError('auth.account-gone', 'The account no longer exists.');
      if (!(await verifyPassword(credentials.passwordHash, password))) {
        throw new ForbiddenError('auth.password-incorrect').withHeaders(rateLimitHeaders(reservation.quotaIfFailed));
      }
      return { reservation, passwordHash: credentials.passwordHash };
    },
  };
}
