import { type Caller, type CallerUser, isSysop, type UserCaller } from '../caller.js';
import type { UserRow } from '../db/schema.js';
import { BadRequestError, type FieldError, UnauthorizedError } from '../errors.js';
import { findUserNamed } from './user-service.js';
import type { UserStore } from './user-store.js';

/** The fields a user may edit (PUT /users/me) and their maximum lengths in characters (spec 4.5). */
export const PROFILE_FIELD_MAX_LENGTH = {
  realName: 64,
  location: 64,
  affiliations: 64,
  webAddress: 256,
  autoSignature: 512,
} as const;

export type ProfileField = keyof typeof PROFILE_FIELD_MAX_LENGTH;
export const PROFILE_FIELDS = Object.keys(PROFILE_FIELD_MAX_LENGTH) as ProfileField[];

/** PUT /users/me: each field optional; null or "" clears it. */
export type ProfileUpdate = { readonly [Field in ProfileField]?: string | null };

/** Own profile (spec 2.10). Unset text fields are "" (the spec types them as strings). */
export interface OwnProfile {
  userId: number;
  username: string;
  groups: string[];
  realName: string;
  location: string;
  affiliations: string;
  emailAddress: string;
  webAddress: string;
  autoSignature: string;
  accountCreated: string;
  lastLogin: string | null;
  loginCount: number;
  postCount: number;
  uploadCount: number;
  uploadBytes: number;
  downloadCount: number;
  downloadBytes: number;
  achievementPoints: number;
  minutesOnline: number;
  /** Whether login asks this user for a one-time code. */
  totpEnabled: boolean;
}

/**
 * Someone else's profile: always the first five fields; realName, location, affiliations and
 * webAddress only when set; the sysop-only fields only for a sysop.
 */
export interface PublicProfile {
  userId: number;
  username: string;
  accountCreated: string;
  postCount: number;
  achievementPoints: number;
  realName?: string;
  location?: string;
  affiliations?: string;
  webAddress?: string;
  groups?: string[];
  emailAddress?: string;
  lastLogin?: string | null;
  loginCount?: number;
  uploadCount?: number;
  downloadCount?: number;
  minutesOnline?: number;
}

const OPT_IN_FIELDS = ['realName', 'location', 'affiliations', 'webAddress'] as const;

// Single-line fields refuse every control character; the signature may span lines and carry
// ANSI colour (ESC), as BBS signatures do.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const SINGLE_LINE_FORBIDDEN = /[\u0000-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const MULTI_LINE_FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f]/;

/** Why `value` (trimmed, not empty) cannot be a profile's `field`, or null when it can: PUT /users/me's rules. */
export function profileFieldProblem(field: ProfileField, value: string): string | null {
  const maxLength = PROFILE_FIELD_MAX_LENGTH[field];
  if ([...value].length > maxLength) return `must be at most ${maxLength} characters`;
  const forbidden = field === 'autoSignature' ? MULTI_LINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN;
  if (forbidden.test(value)) return 'must not contain control characters';
  if (field === 'webAddress') {
    let url: URL | null = null;
    try {
      url = new URL(value);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
      return 'must be an http:// or https:// URL';
    }
  }
  return null;
}

/** Trims and checks an update; returns the column values to write (null = cleared). */
export function normaliseProfileUpdate(update: ProfileUpdate): Partial<Record<ProfileField, string | null>> {
  const values: Partial<Record<ProfileField, string | null>> = {};
  const errors: FieldError[] = [];
  for (const field of PROFILE_FIELDS) {
    const raw = update[field];
    if (raw === undefined) continue;
    const value = raw === null ? '' : raw.trim();
    const problem = value === '' ? null : profileFieldProblem(field, value);
    if (problem) errors.push({ pointer: `/body/${field}`, message: problem });
    else values[field] = value === '' ? null : value;
  }
  const first = errors[0];
  if (first) throw new BadRequestError('request.invalid-body', `${first.pointer.slice(1)} ${first.message}`, errors);
  return values;
}

/** Profiles: one's own (read and edit) and other users' public view (spec 2.10, 4.5). */
export interface ProfileService {
  getOwnProfile(caller: Caller): Promise<OwnProfile>;
  /** Applies the given fields (all or nothing) and returns the updated profile. */
  updateOwnProfile(caller: Caller, update: ProfileUpdate): Promise<OwnProfile>;
  /** Case-insensitive lookup; unknown → NotFoundError. Sysops get the extended view. */
  getPublicProfile(caller: Caller, username: string): Promise<PublicProfile>;
}

export function createProfileService(deps: {
  store: UserStore;
  /** Two-factor login is auth's: the profile only tells whether it is on. */
  twoFactor: { isEnabled(userId: number): Promise<boolean> };
}): ProfileService {
  const { store, twoFactor } = deps;

  async function ownProfileOf(user: CallerUser): Promise<OwnProfile> {
    const [row, totpEnabled] = await Promise.all([store.findById(user.id), twoFactor.isEnabled(user.id)]);
    // The auth hook saw this user a moment ago; gone now means deleted in between.
    if (!row) throw new UnauthorizedError('auth.account-gone', 'The account no longer exists.');
    return toOwnProfile(row, user.groups, totpEnabled);
  }

  function requireUser(caller: Caller): UserCaller {
    if (caller.kind !== 'user') throw new UnauthorizedError('auth.required');
    return caller;
  }

  return {
    async getOwnProfile(caller) {
      return ownProfileOf(requireUser(caller).user);
    },

    async updateOwnProfile(caller, update) {
      const user = requireUser(caller).user;
      const values = normaliseProfileUpdate(update);
      if (Object.keys(values).length > 0) await store.updateProfile(user.id, values);
      return ownProfileOf(user);
    },

    async getPublicProfile(caller, username) {
      requireUser(caller);
      // An application is no member yet: to anyone but a sysop its name is unknown.
      const row = await findUserNamed(store, username, { applications: isSysop(caller) });
      const profile: PublicProfile = {
        userId: row.id,
        username: row.username,
        accountCreated: row.createdAt,
        postCount: row.postCount,
        achievementPoints: row.achievementPoints,
      };
      for (const field of OPT_IN_FIELDS) {
        const value = row[field];
        if (value !== null && value !== '') profile[field] = value;
      }
      if (isSysop(caller)) {
        Object.assign(profile, {
          groups: (await store.groupsOf([row.id])).get(row.id) ?? [],
          emailAddress: row.emailAddress ?? '',
          lastLogin: row.lastLoginAt,
          loginCount: row.loginCount,
          uploadCount: row.uploadCount,
          downloadCount: row.downloadCount,
          minutesOnline: row.minutesOnline,
        });
      }
      return profile;
    },
  };
}

function toOwnProfile(row: UserRow, groups: readonly string[], totpEnabled: boolean): OwnProfile {
  return {
    userId: row.id,
    username: row.username,
    groups: [...groups],
    realName: row.realName ?? '',
    location: row.location ?? '',
    affiliations: row.affiliations ?? '',
    emailAddress: row.emailAddress ?? '',
    webAddress: row.webAddress ?? '',
    autoSignature: row.autoSignature ?? '',
    accountCreated: row.createdAt,
    lastLogin: row.lastLoginAt,
    loginCount: row.loginCount,
    postCount: row.postCount,
    uploadCount: row.uploadCount,
    uploadBytes: row.uploadBytes,
    downloadCount: row.downloadCount,
    downloadBytes: row.downloadBytes,
    achievementPoints: row.achievementPoints,
    minutesOnline: row.minutesOnline,
    totpEnabled,
  };
}
