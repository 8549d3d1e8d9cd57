import { anonymousCaller, type UserCaller } from '../caller.js';
import type { Config } from '../config/load-config.js';
import { createAreaAccess } from './area-access.js';
import type { BoardAreas, FileAreaDef, MessageAreaDef } from './board-areas.js';

/** Areas anonymous callers may read while a plain member may not (see {@link findPublicAreasClosedToMembers}). */
export interface PublicAreasClosedToMembers {
  readonly messageAreas: readonly MessageAreaDef[];
  readonly fileAreas: readonly FileAreaDef[];
}

/** The group every account joins by default (`users.defaultGroups`). */
const PLAIN_MEMBER_GROUP = 'users';

const MS_PER_DAY = 86_400_000;
/** Sunday 2026-01-04, 00:00 UTC: the first day of the week the check looks at. */
const WEEK_START_MS = Date.UTC(2026, 0, 4);
const LAST_MINUTE_MS = MS_PER_DAY - 60_000;

/**
 * The first and the last minute of each day of one fixed week (UTC): `WD` and `MM` depend on
 * the time, and a member refused on some day or at some hour is refused.
 */
const WEEK_INSTANTS: readonly Date[] = Array.from({ length: 7 }, (_, day) => WEEK_START_MS + day * MS_PER_DAY).flatMap(
  (dayStartMs) => [new Date(dayStartMs), new Date(dayStartMs + LAST_MINUTE_MS)],
);

/**
 * A plain member at `instant`: in group `users` only, an id no account has (ids start at 1, so
 * no `ID` condition names it), an active account made at that instant that has logged in once,
 * with nothing posted, uploaded, downloaded or achieved, no age and no properties, calling
 * over TLS (`SC` is about the connection, not about membership).
 */
function plainMemberAt(instant: Date): UserCaller {
  return {
    kind: 'user',
    user: {
      id: 0,
      username: '',
      groups: [PLAIN_MEMBER_GROUP],
      accountCreatedAt: instant,
      loginCount: 1,
      postCount: 0,
      uploadCount: 0,
      uploadBytes: 0,
      downloadCount: 0,
      downloadBytes: 0,
      achievementCount: 0,
      achievementPoints: 0,
      properties: {},
    },
    via: 'token',
    scopes: new Set(['read', 'write']),
    isSecure: true,
    session: null,
  };
}

/**
 * The areas the public allowlist opens to anonymous callers although their read ACS restricts
 * members. That is what the allowlist means (it never looks at ACS), but it is almost never what
 * the sysop meant: anyone may read the area without logging in while members are refused.
 *
 * An area restricts members when a plain member (see `plainMemberAt`: group `users`, a fresh
 * account, over TLS) fails its read ACS at one of the first and last minutes of the days of a
 * week. The read ACS is the one area access applies to a member: for a message area its
 * conference's `acs.read` and its own; for a file area `acs.read` and `acs.download` (the
 * allowlist lets anonymous callers download too). Decided by area access itself, so this check
 * and the requests it warns about cannot disagree.
 */
export function findPublicAreasClosedToMembers(config: Config, areas: BoardAreas): PublicAreasClosedToMembers {
  // Area access takes the time from its clock: the check moves that clock through the week.
  let instant = new Date(WEEK_START_MS);
  const access = createAreaAccess({ config, areas, clock: { now: () => instant } });
  const anonymous = anonymousCaller(true);
  const isRefusedSometimes = (isAllowed: (member: UserCaller) => boolean) =>
    WEEK_INSTANTS.some((at) => {
      instant = at;
      return !isAllowed(plainMemberAt(at));
    });
  return {
    messageAreas: [...areas.messageAreas.values()].filter(
      (area) =>
        access.canReadMessageArea(anonymous, area) &&
        isRefusedSometimes((member) => access.canReadMessageArea(member, area)),
    ),
    fileAreas: [...areas.fileAreas.values()].filter(
      (area) =>
        access.canDownloadFromArea(anonymous, area) &&
        isRefusedSometimes((member) => access.canDownloadFromArea(member, area)),
    ),
  };
}
