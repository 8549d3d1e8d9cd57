/** A caller the fuzzer can be: the credential headers it sends. */
export interface Identity {
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The headers are a valid credential of a fixture user. */
  readonly isAuthenticated: boolean;
}

/**
 * What the fixture board offers the generators: real names of things, callers, credentials
 * that look real but are not valid, and the board's size limits. Generators pick from these by
 * index, so a seed replays the same choices against a freshly built board.
 */
export interface FuzzPools {
  /**
   * Values that name real things, by the parameter or body field name they fit (`areaTag`,
   * `uuid`, `fileId`, `username`, `password`, `cursor` …), optionally scoped to the first path
   * segment of the operation (`messages/areaTag` before `areaTag`). The first value of each list
   * is the one most likely to succeed, and is picked more often. A route with a new parameter
   * name still gets values generated from its schema.
   */
  readonly knownValues: Readonly<Record<string, readonly unknown[]>>;
  /** Anonymous first, then the fixture users' valid credentials. */
  readonly identities: readonly Identity[];
  /** Credentials that must fail: expired, of an ended session, forged, revoked … */
  readonly deadCredentials: readonly Identity[];
  readonly refreshCookieName: string;
  /** Refresh tokens worth sending in the cookie (a live one among them). */
  readonly refreshTokens: readonly string[];
  /** ETags of stored files, for If-None-Match / If-Range. */
  readonly etags: readonly string[];
  readonly bodyLimitBytes: number;
  readonly uploadLimitBytes: number;
  /** File contents worth uploading (an archive with a FILE_ID.DIZ, a text file …). */
  readonly uploadContents: readonly Uint8Array[];
}

/** The known values for `name` in operations under `scope` (`messages`, `files` …). */
export function knownValuesFor(pools: FuzzPools, scope: string, name: string): readonly unknown[] {
  return pools.knownValues[`${scope}/${name}`] ?? pools.knownValues[name] ?? [];
}
