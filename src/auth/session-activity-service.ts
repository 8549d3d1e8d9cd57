import type { LiveSession } from '../caller.js';
import type { Clock } from '../clock.js';
import type { UserStore } from '../users/user-store.js';
import { ACTIVE_SESSION_WINDOW_MS, type SessionStore } from './session-store.js';

/** A session's activity is written at most this often, so reads do not all turn into writes. */
export const ACTIVITY_WRITE_INTERVAL_MS = 60_000;

export interface SessionActivity {
  /** The live session the auth hook found for this request (so it is not read again here). */
  readonly session: LiveSession;
  readonly userId: number;
  /** Short text for the node list: "Reading messages", "Browsing files" … */
  readonly action: string;
  readonly isSecure: boolean;
}

export interface SessionActivityService {
  /**
   * Records a request of a login session (at most once a minute per session). Returns a
   * promise only when it writes: the other requests of the minute cost no promise at all.
   */
  touch(activity: SessionActivity): Promise<void> | undefined;
  /**
   * Records what a session does now, however soon after its last record: for the moment a
   * caller arrives (a terminal caller at the main menu), which `touch` would show as
   * "Logging in" for up to a minute.
   */
  arrive(activity: SessionActivity): Promise<void>;
}

/**
 * Records what a login session is doing (the node list) and adds its time to the user's
 * `minutesOnline`. Only gaps shorter than the active window count as time online: a session
 * idle for longer was not "on".
 */
export function createSessionActivityService(deps: {
  sessions: SessionStore;
  users: UserStore;
  clock: Clock;
}): SessionActivityService {
  const { sessions, users, clock } = deps;

  async function record(activity: SessionActivity, now: Date, gapMs: number): Promise<void> {
    const minutes = gapMs < ACTIVE_SESSION_WINDOW_MS ? Math.round(gapMs / 60_000) : 0;
    // Conditional on the value read: of two requests racing here, only one adds the gap.
    const update = { at: now.toISOString(), action: activity.action, isSecure: activity.isSecure };
    if (!(await sessions.recordActivity(activity.session, update)) || minutes === 0) return;
    // Not in one transaction with the update above on purpose: holding the session's row
    // while waiting for the user's would deadlock with a login, which locks the user's row
    // and then ends that user's oldest sessions. A crash in between loses a few minutes of
    // a statistic, nothing more.
    await users.addMinutesOnline(activity.userId, minutes);
  }

  const gapTo = (activity: SessionActivity, now: Date) => now.getTime() - Date.parse(activity.session.lastActivityAt);
  return {
    touch(activity) {
      const now = clock.now();
      const gapMs = gapTo(activity, now);
      return gapMs < ACTIVITY_WRITE_INTERVAL_MS ? undefined : record(activity, now, gapMs);
    },
    arrive(activity) {
      const now = clock.now();
      return record(activity, now, gapTo(activity, now));
    },
  };
}
