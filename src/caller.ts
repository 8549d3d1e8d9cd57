/**
 * Who is making a request: shared vocabulary every layer may import. Resolved once per request
 * by the auth hook (src/http/auth-hook.ts, through the auth domain's caller service) and handed
 * to services, which make every authorisation decision from it.
 */
export type Scope = 'read' | 'write';

/** The live login session an access token belongs to, as session activity needs it next. */
export interface LiveSession {
  readonly id: string;
  readonly lastActivityAt: string;
}

/** What services need to know about an authenticated user (ACS inputs included). */
export interface CallerUser {
  readonly id: number;
  readonly username: string;
  readonly groups: readonly string[];
  readonly accountCreatedAt: Date;
  readonly loginCount: number;
  readonly postCount: number;
  readonly uploadCount: number;
  readonly uploadBytes: number;
  readonly downloadCount: number;
  readonly downloadBytes: number;
  readonly achievementCount: number;
  readonly achievementPoints: number;
  readonly properties: Readonly<Record<string, string>>;
}

export interface AnonymousCaller {
  readonly kind: 'anonymous';
  /** The request came over TLS (directly or via a trusted proxy). */
  readonly isSecure: boolean;
}

export interface UserCaller {
  readonly kind: 'user';
  readonly user: CallerUser;
  /** How the caller proved who they are. */
  readonly via: 'token' | 'apiKey';
  /** What the credential may do: an access token may do both; an API key what its scope says. */
  readonly scopes: ReadonlySet<Scope>;
  readonly isSecure: boolean;
  /** The live login session (refresh family) an access token belongs to; null for API keys. */
  readonly session: LiveSession | null;
}

export type Caller = AnonymousCaller | UserCaller;

export const SYSOP_GROUP = 'sysops';

export function isSysop(caller: Caller): boolean {
  return caller.kind === 'user' && caller.user.groups.includes(SYSOP_GROUP);
}

export function anonymousCaller(isSecure: boolean): AnonymousCaller {
  return { kind: 'anonymous', isSecure };
}
