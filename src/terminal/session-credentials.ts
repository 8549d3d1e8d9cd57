import type { SessionTokens } from '../auth/auth-service.js';
import type { Board } from '../board.js';
import type { UserCaller } from '../caller.js';
import { UnauthorizedError } from '../errors.js';

/** The caller's login session is over (ended from another client, account locked, password changed). */
export class SessionEndedError extends Error {
  override readonly name = 'SessionEndedError';
  constructor() {
    super('Your session has ended (signed out elsewhere, account locked, or password changed). Goodbye.');
  }
}

/** An access token is refreshed this long before it expires, so no screen meets an expired one. */
const REFRESH_MARGIN_MS = 60_000;

/** A terminal caller's login session: the tokens behind it, kept fresh, and the caller they stand for. */
export interface SessionCredentials {
  /**
   * The caller now, resolved from the access token as the API resolves a request's (a session
   * ended, an account locked or a password changed shows here): the token is refreshed first
   * when it is about to expire, and once more when it is refused. Throws SessionEndedError
   * when the session cannot go on.
   */
  caller(): Promise<UserCaller>;
  /** The caller as last resolved: for the checks that cannot wait (whether a notice may be shown). */
  lastCaller(): UserCaller;
  /**
   * Records what the caller is doing in the node list: written at most once a minute, as for
   * the API, but at once when `isArrival` (the first screen after the login).
   */
  touch(action: string, isArrival?: boolean): Promise<void>;
  /** Ends the login session; later calls do nothing. */
  logout(): Promise<void>;
}

/** Opens the credentials of a session that just logged in with `tokens` (resolving its caller once). */
export async function openSessionCredentials(
  board: Board,
  tokens: SessionTokens,
  options: { readonly isSecure: boolean },
): Promise<SessionCredentials> {
  const { clock } = board;
  let { token, refreshToken } = tokens;
  // The token was issued just now (the login was this connection's), so its lifetime starts now.
  let expiresAtMs = clock.now().getTime() + token.expiresIn * 1000;
  let refreshing: Promise<void> | null = null;
  let isLoggedOut = false;

  async function refresh(): Promise<void> {
    try {
      ({ token, refreshToken } = await board.auth.refresh(refreshToken));
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new SessionEndedError();
      throw error;
    }
    expiresAtMs = clock.now().getTime() + token.expiresIn * 1000;
  }

  /**
   * One refresh at a time: the screens, the notices and the node-list timer may all find the
   * token expiring at once, and a refresh token rotates once (a second use would end the session).
   */
  function refreshOnce(): Promise<void> {
    refreshing ??= refresh().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  const resolveToken = (accessToken: string) => board.callers.resolve({ accessToken }, options);

  async function resolveCaller(): Promise<UserCaller> {
    if (isLoggedOut) throw new SessionEndedError();
    if (refreshing !== null) await refreshing;
    if (clock.now().getTime() >= expiresAtMs - REFRESH_MARGIN_MS) await refreshOnce();
    const presented = token.accessToken;
    try {
      return await resolveToken(presented);
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
    }
    // Refused before its time: a refresh (unless another one replaced the token meanwhile)
    // tells whether the session itself is still alive.
    if (token.accessToken === presented) await refreshOnce();
    try {
      return await resolveToken(token.accessToken);
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new SessionEndedError();
      throw error;
    }
  }

  let last = await resolveCaller();

  const credentials: SessionCredentials = {
    async caller() {
      last = await resolveCaller();
      return last;
    },

    lastCaller: () => last,

    async touch(action, isArrival = false) {
      const caller = await credentials.caller();
      if (caller.session === null) return;
      const activity = { session: caller.session, userId: caller.user.id, action, isSecure: caller.isSecure };
      await (isArrival ? board.sessionActivity.arrive(activity) : board.sessionActivity.touch(activity));
    },

    async logout() {
      if (isLoggedOut) return;
      isLoggedOut = true;
      await refreshing?.catch(() => {});
      await board.auth.logout(refreshToken);
    },
  };
  return credentials;
}
