import { BadRequestError } from '../errors.js';

/**
 * Area globs a caller gives (`GET /messages/search?areaTag=`, `GET /files/search?areaTag=`,
 * `GET /events?areas=`, a webhook's `areas`): `*` (any run of characters, none included) and `?`
 * (one character) over the tag alphabet, nothing else. Extglobs, braces and classes made a
 * 19-character anonymous glob block the event loop for over a second, so they are refused with a
 * 400 rather than taken literally: no tag can hold those characters, and a client who thought it
 * was writing `{a,b}` learns that it is not. The sysop's public allowlist (area-access.ts) keeps
 * its richer globs: it comes from the configuration, not from a request.
 */

/** At most this many globs in one filter (a stream's `?areas=`, a webhook's `areas`). */
export const MAX_AREA_GLOBS = 32;
/** At most this many characters in one glob. */
export const MAX_AREA_GLOB_LENGTH = 256;

/** The tag alphabet (TAG_PATTERN in the configuration schema) plus the two wildcards. */
const AREA_GLOB = /^[A-Za-z0-9_.*?-]+$/;

export type AreaGlobMatcher = (areaTag: string) => boolean;

/**
 * The globs, without repeats, when there are at most MAX_AREA_GLOBS of them and each is 1 to
 * MAX_AREA_GLOB_LENGTH characters of the tag alphabet, `*` and `?`; else a 400 at `pointer`.
 *
 * @example checkAreaGlobs(['pub_*', 'pub_*', 'local_?'], '/query/areas') // ['pub_*', 'local_?']
 */
export function checkAreaGlobs(globs: readonly string[], pointer: string): readonly string[] {
  if (globs.length > MAX_AREA_GLOBS) {
    const message = `has ${globs.length} globs; at most ${MAX_AREA_GLOBS} are allowed`;
    throw new BadRequestError('area.invalid-glob', `${pointer} ${message}.`, [{ pointer, message }]);
  }
  const bad = globs.find((glob) => glob.length > MAX_AREA_GLOB_LENGTH || !AREA_GLOB.test(glob));
  if (bad !== undefined) {
    const message = `must be globs of 1 to ${MAX_AREA_GLOB_LENGTH} characters: letters, digits, "_", ".", "-" and the wildcards "*" and "?" (not "${bad.slice(0, 64)}")`;
    throw new BadRequestError('area.invalid-glob', `${pointer} ${message}.`, [{ pointer, message }]);
  }
  return [...new Set(globs)];
}

/**
 * A test of an area tag against any of the globs. Any character but `*` and `?` is literal, so a
 * glob stored before globs were checked (a webhook's `{a,b}`) matches nothing rather than more.
 */
export function compileAreaGlobs(globs: readonly string[]): AreaGlobMatcher {
  const unique = [...new Set(globs)];
  return (areaTag) => unique.some((glob) => matchesAreaGlob(glob, areaTag));
}

/**
 * Whether `areaTag` matches `glob` (`*` any run, `?` one character, the rest literal). One pass
 * over the tag that, on a mismatch, retries from the last `*` one character further: at most
 * |glob| × |tag| steps with no backtracking beyond that `*`, and tags have at most 64 characters.
 */
export function matchesAreaGlob(glob: string, areaTag: string): boolean {
  let globIndex = 0;
  let tagIndex = 0;
  // Where the last `*` stands in the glob, and where in the tag its run would end next.
  let starIndex = -1;
  let starRunEnd = 0;
  while (tagIndex < areaTag.length) {
    const wanted = glob[globIndex];
    if (wanted === '*') {
      starIndex = globIndex;
      starRunEnd = tagIndex;
      globIndex += 1;
    } else if (wanted !== undefined && (wanted === '?' || wanted === areaTag[tagIndex])) {
      globIndex += 1;
      tagIndex += 1;
    } else if (starIndex >= 0) {
      starRunEnd += 1;
      globIndex = starIndex + 1;
      tagIndex = starRunEnd;
    } else {
      return false;
    }
  }
  while (glob[globIndex] === '*') globIndex += 1;
  return globIndex === glob.length;
}
