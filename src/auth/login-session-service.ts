import type { Caller, UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import { NotFoundError, UnauthorizedError } from '../errors.js';
import type { SessionStore, SessionVia } from './session-store.js';

/**
 * One of the caller's live login sessions, as `GET /users/me/sessions` lists it. Its `id` is the
 * session's (refresh family's) id: not a credential — nothing accepts it in place of a token,
 * and it is already in the `sid` claim of every access token of that session, which its holder
 * can read — so it is shown as it is.
 */
export interface OwnSession {
  readonly id: string;
  readonly createdAt: string;
  /** When a request of the session was last seen (written at most once a minute: ACTIVITY_WRITE_INTERVAL_MS). */
  readonly lastSeenAt: string;
  /** The session the request was made in. */
  readonly current: boolean;
  readonly via: SessionVia;
}

/** A user's view of their own login sessions: which are alive, and ending one. */
export interface LoginSessionService {
  /** The caller's live login sessions, oldest first (an API key caller sees them too, none current). */
  listOwnSessions(caller: Caller): Promise<OwnSession[]>;
  /**
   * Ends one of the caller's live sessions at once: its refresh token is refused from now on,
   * and so are its access tokens (this node at once, other nodes within the caller cache's
   * bound). An id that is not one of the caller's live sessions → 404, the same for a session
   * of someone else, so the answer tells nothing about other people's sessions.
   */
  endOwnSession(caller: Caller, sessionId: string): Promise<void>;
}

export function createLoginSessionService(deps: {
  sessions: Pick<SessionStore, 'listUserSessions' | 'revokeLiveUserSession'>;
  clock: Clock;
}): LoginSessionService {
  const { sessions, clock } = deps;

  function userOf(caller: Caller): UserCaller {
    if (caller.kind === 'anonymous') throw new UnauthorizedError('auth.required');
    return caller;
  }

  return {
    async listOwnSessions(caller) {
      const user = userOf(caller);
      const rows = await sessions.listUserSessions(user.user.id, clock.now());
      return rows.map((row) => ({
        id: row.id,
        createdAt: row.createdAt,
        lastSeenAt: row.lastActivityAt,
        current: row.id === user.session?.id,
        via: row.via,
      }));
    },

    async endOwnSession(caller, sessionId) {
      const user = userOf(caller);
      if (!(await sessions.revokeLiveUserSession(user.user.id, sessionId, clock.now()))) {
        throw new NotFoundError('account.session-not-found', 'You have no live login session with this id.');
      }
    },
  };
}
