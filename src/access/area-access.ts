import picomatch from 'picomatch';
import type { AcsSubject, CompiledAcs } from '../acs/acs.js';
import type { Caller, UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { BoardAreas, FileAreaDef, MessageAreaDef, MessageConferenceDef } from './board-areas.js';

type Matcher = (tag: string) => boolean;
type PublicAccessRule = { readonly include: readonly string[]; readonly exclude: readonly string[] };

/** include/exclude globs on tags; exclude beats include; no path-separator semantics. */
function compileAllowRule(rule: PublicAccessRule): Matcher {
  const options = { dot: true, nocase: false };
  const included = rule.include.length > 0 ? picomatch([...rule.include], options) : () => false;
  const excluded = rule.exclude.length > 0 ? picomatch([...rule.exclude], options) : () => false;
  // Tags never contain '/', so picomatch's separator handling cannot change a match.
  return (tag) => included(tag) && !excluded(tag);
}

function acsSubjectOf(caller: UserCaller): AcsSubject {
  const { user } = caller;
  return {
    userId: user.id,
    groups: user.groups,
    // Disabled accounts never become callers, so every caller is active (ENiGMA's status 2).
    accountStatus: 2,
    ageYears: null,
    loginCount: user.loginCount,
    postCount: user.postCount,
    accountCreatedAt: user.accountCreatedAt,
    uploadCount: user.uploadCount,
    downloadCount: user.downloadCount,
    uploadBytes: user.uploadBytes,
    downloadBytes: user.downloadBytes,
    achievementCount: user.achievementCount,
    achievementPoints: user.achievementPoints,
    properties: user.properties,
    isSecure: caller.isSecure,
  };
}

/**
 * The one answer to "may this caller see / read / write area X". The `can…` questions answer
 * yes or no; the `…Area(caller, areaTag)` lookups give the area or throw: unknown and blocked
 * areas are 404, an area the caller may not use is 401 for anonymous callers (so a client knows
 * to log in) and 403 for authenticated ones.
 */
export interface AreaAccess {
  /** Whether the caller may read the message area (and its conference). */
  canReadMessageArea(caller: Caller, area: MessageAreaDef): boolean;
  /** Whether the caller may post in the message area; never an anonymous caller. */
  canWriteMessageArea(caller: Caller, area: MessageAreaDef): boolean;
  /** Whether the caller may browse the file area. */
  canReadFileArea(caller: Caller, area: FileAreaDef): boolean;
  /** Whether the caller may download from the file area. */
  canDownloadFromArea(caller: Caller, area: FileAreaDef): boolean;
  /** Whether the caller may upload to the file area; never an anonymous caller. */
  canWriteFileArea(caller: Caller, area: FileAreaDef): boolean;
  /** Message areas of a conference the caller may read, in configuration order. */
  visibleAreasOf(caller: Caller, conference: MessageConferenceDef): MessageAreaDef[];
  /** The message area if the caller may read it. */
  readableMessageArea(caller: Caller, areaTag: string): MessageAreaDef;
  /** The message area if the caller may post in it. */
  writableMessageArea(caller: Caller, areaTag: string): MessageAreaDef;
  /** The file area if the caller may browse it. */
  readableFileArea(caller: Caller, areaTag: string): FileAreaDef;
  /** The file area if the caller may download from it. */
  downloadableFileArea(caller: Caller, areaTag: string): FileAreaDef;
  /** The file area if the caller may upload to it. */
  writableFileArea(caller: Caller, areaTag: string): FileAreaDef;
}

/**
 * Authenticated callers are judged by ACS only (a message area needs its conference's ACS and
 * its own); anonymous callers may only read areas on the public allowlist and never write.
 */
export function createAreaAccess(deps: { config: Config; areas: BoardAreas; clock: Clock }): AreaAccess {
  const { areas, clock } = deps;
  const restApi = deps.config.contentServers.web.restApi;
  const messageAllowlist = new Map(
    Object.entries(restApi.messages.publicAccess).map(([confTag, rule]) => [confTag, compileAllowRule(rule)]),
  );
  const filesRule = restApi.files.publicAccess;
  const fileAllowlist: Matcher =
    'include' in filesRule && Array.isArray(filesRule.include)
      ? compileAllowRule(filesRule as PublicAccessRule)
      : (() => {
          const perTag = new Map(
            Object.entries(filesRule as Readonly<Record<string, PublicAccessRule>>).map(([tag, rule]) => [
              tag,
              compileAllowRule(rule),
            ]),
          );
          return (tag: string) => perTag.get(tag)?.(tag) ?? false;
        })();

  const allows = (caller: UserCaller, ...acs: CompiledAcs[]) => {
    const subject = acsSubjectOf(caller);
    const now = clock.now();
    return acs.every((entry) => entry.allows(subject, now));
  };

  function canReadMessageArea(caller: Caller, area: MessageAreaDef): boolean {
    if (caller.kind === 'anonymous') return messageAllowlist.get(area.confTag)?.(area.areaTag) ?? false;
    const conference = areas.conferences.get(area.confTag);
    return conference !== undefined && allows(caller, conference.read, area.read);
  }

  function canWriteMessageArea(caller: Caller, area: MessageAreaDef): boolean {
    if (caller.kind === 'anonymous') return false;
    const conference = areas.conferences.get(area.confTag);
    return conference !== undefined && allows(caller, conference.write, area.write);
  }

  function canReadFileArea(caller: Caller, area: FileAreaDef): boolean {
    if (caller.kind === 'anonymous') return fileAllowlist(area.areaTag);
    return allows(caller, area.read);
  }

  function canDownloadFromArea(caller: Caller, area: FileAreaDef): boolean {
    if (caller.kind === 'anonymous') return fileAllowlist(area.areaTag);
    return allows(caller, area.read, area.download);
  }

  function canWriteFileArea(caller: Caller, area: FileAreaDef): boolean {
    return caller.kind === 'user' && allows(caller, area.read, area.write);
  }

  function denied(caller: Caller, what: string): Error {
    return caller.kind === 'anonymous'
      ? new UnauthorizedError('auth.required', `Log in to ${what}.`)
      : new ForbiddenError('access.denied', `You may not ${what}.`);
  }

  function messageArea(areaTag: string): MessageAreaDef {
    const area = areas.messageAreas.get(areaTag);
    if (!area) throw new NotFoundError('message.area-not-found', `No message area "${areaTag}".`);
    return area;
  }

  function fileArea(areaTag: string): FileAreaDef {
    const area = areas.fileAreas.get(areaTag);
    if (!area) throw new NotFoundError('file.area-not-found', `No file area "${areaTag}".`);
    return area;
  }

  return {
    canReadMessageArea,
    canWriteMessageArea,
    canReadFileArea,
    canDownloadFromArea,
    canWriteFileArea,

    visibleAreasOf(caller, conference) {
      return conference.areas.filter((area) => canReadMessageArea(caller, area));
    },

    readableMessageArea(caller, areaTag) {
      const area = messageArea(areaTag);
      if (!canReadMessageArea(caller, area)) throw denied(caller, `read message area "${areaTag}"`);
      return area;
    },

    writableMessageArea(caller, areaTag) {
      const area = messageArea(areaTag);
      if (!canWriteMessageArea(caller, area)) throw denied(caller, `post in message area "${areaTag}"`);
      return area;
    },

    readableFileArea(caller, areaTag) {
      const area = fileArea(areaTag);
      if (!canReadFileArea(caller, area)) throw denied(caller, `browse file area "${areaTag}"`);
      return area;
    },

    downloadableFileArea(caller, areaTag) {
      const area = fileArea(areaTag);
      if (!canDownloadFromArea(caller, area)) throw denied(caller, `download from file area "${areaTag}"`);
      return area;
    },

    writableFileArea(caller, areaTag) {
      const area = fileArea(areaTag);
      if (!canWriteFileArea(caller, area)) throw denied(caller, `upload to file area "${areaTag}"`);
      return area;
    },
  };
}
