import { base32Decode, type TotpAlgorithm } from '../auth/totp.js';
import { TAG_PATTERN } from '../config/config-schema.js';
import type { UserRow } from '../db/schema.js';
import { sanitizeFileName } from '../files/file-name.js';
import type { MessageNetwork } from '../messages/message-network.js';
import { MAX_MESSAGE_ID } from '../messages/message-rules.js';
import type { EnigmaConfig, EnigmaFile, EnigmaMessageMeta, EnigmaUser } from './enigma-source.js';

/**
 * How ENiGMA½'s data becomes baud's: pure functions, one per kind, each returning what it could
 * not carry over (`skipped`) beside what it made, so the import can report it instead of
 * dropping it silently.
 */

/** Something of the source that has no place in baud, said once per kind and reason. */
export interface Skipped {
  readonly kind: string;
  readonly reason: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at `keys` inside nested objects, or undefined where the path ends. */
function valueAt(source: unknown, ...keys: string[]): unknown {
  let node = source;
  for (const key of keys) node = isRecord(node) ? node[key] : undefined;
  return node;
}

const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);

/** PostgreSQL refuses U+0000 in text, and SQLite cuts some functions short at it: it is removed everywhere. */
export const withoutNul = (value: string): string => value.replaceAll('\u0000', '');

/** Whether any of these texts holds U+0000 (the import reports what it removed). */
export const hasNul = (...values: ReadonlyArray<string | null | undefined>): boolean =>
  values.some((value) => value?.includes('\u0000') ?? false);

/** ENiGMA½ orders by `sort`, then by tag; baud keeps the file's order. */
function sortedEntries(record: Record<string, unknown>): Array<[string, Record<string, unknown>]> {
  return Object.entries(record)
    .filter((entry): entry is [string, Record<string, unknown>] => isRecord(entry[1]))
    .sort(([tagA, a], [tagB, b]) => {
      const sortA = typeof a.sort === 'number' ? a.sort : Number.POSITIVE_INFINITY;
      const sortB = typeof b.sort === 'number' ? b.sort : Number.POSITIVE_INFINITY;
      return sortA === sortB ? tagA.localeCompare(tagB) : sortA - sortB;
    });
}

function acsOf(value: unknown, keys: readonly string[]): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(keys.flatMap((key) => (typeof value[key] === 'string' ? [[key, value[key]]] : [])));
}

function globs(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item !== '') : [];
}

function allowRule(value: unknown): { include: string[]; exclude: string[] } | null {
  if (!isRecord(value)) return null;
  return { include: globs(value.include), exclude: globs(value.exclude) };
}

/** The configuration sections of baud that hold what ENiGMA½'s `config.hjson` says of the board. */
export interface BaudBoardSections {
  readonly general: { boardName?: string };
  readonly messageConferences: Record<string, unknown>;
  readonly fileBase: { storageTags: Record<string, string>; areas: Record<string, unknown> };
  readonly publicAccess: { messages: Record<string, unknown>; files: Record<string, unknown> };
}

/** baud's storage directory for an imported storage tag, relative to the data directory. */
export const storageDirectoryFor = (storageTag: string) => `files/${storageTag}`;

/**
 * Conferences, areas (with their ACS), file areas and storage tags, and the anonymous allowlist.
 * The allowlist is read from `contentServers.web.restApi.{messages,files}.publicAccess`, where
 * ENiGMA½'s REST API code reads it — not `contentServers.web.handlers.restApi`, where its
 * example configuration puts the handler switch.
 */
export function boardSections(config: EnigmaConfig): { sections: BaudBoardSections; skipped: Skipped[] } {
  const skipped: Skipped[] = [];
  const validTag = (kind: string, tag: string) => {
    if (TAG_PATTERN.test(tag)) return true;
    skipped.push({ kind, reason: `"${tag}": baud tags are 1–64 of A–Z a–z 0–9 _ . -` });
    return false;
  };
  const messageConferences: Record<string, unknown> = {};
  for (const [confTag, conference] of sortedEntries(config.messageConferences)) {
    if (!validTag('message conference', confTag)) continue;
    const areas: Record<string, unknown> = {};
    for (const [areaTag, area] of sortedEntries(isRecord(conference.areas) ? conference.areas : {})) {
      if (!validTag('message area', areaTag)) continue;
      areas[areaTag] = {
        name: text(area.name, areaTag),
        desc: text(area.desc),
        acs: acsOf(area.acs, ['read', 'write']),
      };
    }
    messageConferences[confTag] = {
      name: text(conference.name, confTag),
      desc: text(conference.desc),
      acs: acsOf(conference.acs, ['read', 'write']),
      areas,
    };
  }

  const sourceStorageTags = isRecord(config.fileBase.storageTags) ? config.fileBase.storageTags : {};
  const storageTags: Record<string, string> = {};
  for (const storageTag of Object.keys(sourceStorageTags)) {
    if (validTag('storage tag', storageTag)) storageTags[storageTag] = storageDirectoryFor(storageTag);
  }
  const fileAreas: Record<string, unknown> = {};
  for (const [areaTag, area] of sortedEntries(isRecord(config.fileBase.areas) ? config.fileBase.areas : {})) {
    if (!validTag('file area', areaTag)) continue;
    const tags = globs(area.storageTags).filter((tag) => tag in storageTags);
    if (tags.length === 0) {
      skipped.push({ kind: 'file area', reason: `"${areaTag}": none of its storage tags is defined` });
      continue;
    }
    fileAreas[areaTag] = {
      name: text(area.name, areaTag),
      desc: text(area.desc),
      storageTags: tags,
      acs: acsOf(area.acs, ['read', 'write', 'download']),
    };
  }

  const messagesAccess: Record<string, unknown> = {};
  const messageRules = isRecord(config.restApi.messages) ? config.restApi.messages.publicAccess : undefined;
  for (const [confTag, rule] of Object.entries(isRecord(messageRules) ? messageRules : {})) {
    const parsed = allowRule(rule);
    if (parsed && confTag in messageConferences) messagesAccess[confTag] = parsed;
    else skipped.push({ kind: 'public allowlist', reason: `messages.publicAccess.${confTag}: no such conference` });
  }
  const fileRules = isRecord(config.restApi.files) ? config.restApi.files.publicAccess : undefined;
  let filesAccess: Record<string, unknown> = {};
  if (isRecord(fileRules) && ('include' in fileRules || 'exclude' in fileRules)) {
    filesAccess = allowRule(fileRules) ?? {};
  } else if (isRecord(fileRules)) {
    for (const [areaTag, rule] of Object.entries(fileRules)) {
      const parsed = allowRule(rule);
      if (parsed && areaTag in fileAreas) filesAccess[areaTag] = parsed;
      else skipped.push({ kind: 'public allowlist', reason: `files.publicAccess.${areaTag}: no such file area` });
    }
  }

  // Rules where ENiGMA½'s example configuration shows them, but its REST code never looked:
  // they never applied there, so they do not apply here either — said, not silently dropped.
  for (const kind of ['messages', 'files']) {
    if (valueAt(config.raw, 'contentServers', 'web', 'handlers', 'restApi', kind, 'publicAccess') !== undefined) {
      skipped.push({
        kind: 'public allowlist',
        reason: `contentServers.web.handlers.restApi.${kind}.publicAccess: ENiGMA½ never read it there (it reads contentServers.web.restApi.${kind}.publicAccess), so it was not in force and is not carried over`,
      });
    }
  }

  return {
    sections: {
      general: config.boardName ? { boardName: config.boardName.slice(0, 128) } : {},
      messageConferences,
      fileBase: { storageTags, areas: fileAreas },
      publicAccess: { messages: messagesAccess, files: filesAccess },
    },
    skipped,
  };
}

/** ENiGMA½'s `User.AccountStatus`: only 2 (active) may log in; 0 disabled, 1 inactive, 3 locked. */
const ACTIVE = '2';

/** User properties that become baud columns; every other property is kept in `properties`. */
const PROFILE_COLUMNS = {
  real_name: 'realName',
  location: 'location',
  affiliation: 'affiliations',
  email_address: 'emailAddress',
  web_address: 'webAddress',
  auto_signature: 'autoSignature',
} as const;

const COUNTER_COLUMNS = {
  login_count: 'loginCount',
  post_count: 'postCount',
  ul_total_count: 'uploadCount',
  ul_total_bytes: 'uploadBytes',
  dl_total_count: 'downloadCount',
  dl_total_bytes: 'downloadBytes',
  achievement_total_count: 'achievementCount',
  achievement_total_points: 'achievementPoints',
  minutes_online_total_count: 'minutesOnline',
} as const;

/** Properties that are ENiGMA½'s own bookkeeping, meaningless in baud, and not worth keeping. */
const PASSWORD_PROPERTIES = new Set(['pw_pbkdf2_salt', 'pw_pbkdf2_dk', 'pw_hash_params']);
/**
 * ENiGMA½'s two-factor properties (core/user_property.js): never kept in `properties`, where
 * the secret and the backup codes would lie in the clear; what carries over goes to baud's own
 * two-factor tables (see `enigmaTwoFactorOf`).
 */
const TWO_FACTOR_PROPERTIES = {
  type: 'auth_factor2_otp',
  secret: 'auth_factor2_otp_secret',
  backupCodes: 'auth_factor2_otp_backup_codes',
} as const;
const HANDLED_PROPERTIES = new Set([
  ...Object.keys(PROFILE_COLUMNS),
  ...Object.keys(COUNTER_COLUMNS),
  ...PASSWORD_PROPERTIES,
  ...Object.values(TWO_FACTOR_PROPERTIES),
  'account_status',
  'account_created',
  'last_login_timestamp',
]);

/**
 * The highest id an imported user, message, file or API key may have: 2^30. Every id column is
 * a PostgreSQL `integer` (up to 2^31 − 1 = `MAX_MESSAGE_ID`) and a message's `threadPath` holds
 * 8 hex digits per level (up to 2^32 − 1), and the board's counters move past the highest
 * imported id: half the range leaves the board over a billion ids of its own. ENiGMA½ counts
 * from 1, so an id of 0 or below was never given by it either.
 */
export const MAX_IMPORTED_ID = Math.floor(MAX_MESSAGE_ID / 2) + 1;

/** Whether an id read from ENiGMA½ is one baud keeps (a safe integer from 1 to `MAX_IMPORTED_ID`). */
export const isImportableId = (id: number): boolean => Number.isSafeInteger(id) && id >= 1 && id <= MAX_IMPORTED_ID;

/** What the import says of a row whose id `isImportableId` refuses. */
export const ID_RANGE_REASON = `its id is outside 1 to ${MAX_IMPORTED_ID.toLocaleString('en-US')}, the ids baud keeps`;

/** What the import says of a row with something other than text where ENiGMA½ writes text. */
export const notTextReason = (columns: readonly string[]): string =>
  `${[...new Set(columns)].join(', ')}: not text (a BLOB or a number where ENiGMA½ writes text)`;

/** An ISO 8601 time with any offset as baud stores it (UTC, milliseconds); null when unreadable. */
export function utcTimestamp(value: string | undefined | null): string | null {
  if (!value) return null;
  const millis = Date.parse(value);
  return Number.isNaN(millis) ? null : new Date(millis).toISOString();
}

/** The largest value of a PostgreSQL `integer` column. */
const MAX_INTEGER = 2 ** 31 - 1;

/** A count as ENiGMA½ writes it (text, sometimes "5.0"), clamped to what the column holds. */
const wholeNumber = (value: string | undefined, max = MAX_INTEGER): number => {
  const parsed = Number.parseFloat(value ?? '');
  return Number.isFinite(parsed) && parsed > 0 ? Math.min(Math.round(parsed), max) : 0;
};

/** ENiGMA½'s stored password: salt, derived key and parameters (legacy: none, meaning sha1/1000/128). */
export interface EnigmaPassword {
  readonly saltHex: string;
  readonly dkHex: string;
  readonly iterations: number;
  readonly digest: string;
  readonly keyLen: number;
}

export function enigmaPasswordOf(user: EnigmaUser): EnigmaPassword | null {
  const saltHex = user.properties.get('pw_pbkdf2_salt');
  const dkHex = user.properties.get('pw_pbkdf2_dk');
  if (!saltHex || !dkHex) return null;
  const paramsText = user.properties.get('pw_hash_params');
  if (!paramsText) return { saltHex, dkHex, iterations: 1000, digest: 'sha1', keyLen: 128 };
  try {
    const params = JSON.parse(paramsText) as { iterations?: unknown; digest?: unknown; keyLen?: unknown };
    if (typeof params.iterations !== 'number' || typeof params.digest !== 'string' || typeof params.keyLen !== 'number')
      return null;
    return { saltHex, dkHex, iterations: params.iterations, digest: params.digest, keyLen: params.keyLen };
  } catch {
    return null;
  }
}

/** An ENiGMA½ user's two-factor login as baud can keep it. */
export interface EnigmaTwoFactor {
  /** The HMAC key of the codes, as ENiGMA½'s otplib 11 derived it from the stored secret. */
  readonly key: Buffer;
  readonly algorithm: TotpAlgorithm;
  /** The unused backup codes, in the clear as ENiGMA½ keeps them (hashed by the import). */
  readonly backupCodes: readonly string[];
  /** Why the backup codes did not carry over (unreadable), or null. */
  readonly backupCodesProblem: string | null;
}

/** What `enigmaTwoFactorOf` found: nothing, a two-factor login baud keeps, or one it cannot (and why). */
export type EnigmaTwoFactorOutcome =
  | { readonly kind: 'none' }
  | { readonly kind: 'carried'; readonly twoFactor: EnigmaTwoFactor }
  | { readonly kind: 'dropped'; readonly reason: string };

/** otplib 11 pads a TOTP key shorter than the digest by repeating it (its `totpSecret`). */
function paddedKey(secret: Buffer, length: number): Buffer {
  if (secret.length === 0 || secret.length >= length) return secret;
  return Buffer.from(Array.from({ length }, (_, index) => secret[index % secret.length] ?? 0));
}

/**
 * The user's ENiGMA½ two-factor login (core/user_2fa_otp.js, otplib 11): `googleAuth` is RFC
 * 6238 TOTP with HMAC-SHA-1 over a base32 secret — what baud enrols — and `rfc6238_TOTP` the same
 * with HMAC-SHA-256 over the secret's ASCII bytes; both carry over as they are, so the user's
 * authenticator app keeps working. `rfc4266_HOTP` counts logins, not time: baud has no place for
 * it, and the user comes over without two-factor login.
 */
export function enigmaTwoFactorOf(user: EnigmaUser): EnigmaTwoFactorOutcome {
  const type = user.properties.get(TWO_FACTOR_PROPERTIES.type)?.trim();
  if (!type) return { kind: 'none' };
  const secret = user.properties.get(TWO_FACTOR_PROPERTIES.secret) ?? '';
  let key: Buffer | null;
  let algorithm: TotpAlgorithm;
  if (type === 'googleAuth') {
    key = base32Decode(secret);
    algorithm = 'sha1';
  } else if (type === 'rfc6238_TOTP') {
    key = /^[\x20-\x7e]+$/.test(secret) ? paddedKey(Buffer.from(secret, 'ascii'), 32) : null;
    algorithm = 'sha256';
  } else if (type === 'rfc4266_HOTP') {
    return {
      kind: 'dropped',
      reason: 'two-factor login by HOTP (counter-based), which baud does not keep: imported without two-factor login',
    };
  } else {
    return {
      kind: 'dropped',
      reason: `two-factor login of an unknown kind ("${type.slice(0, 32)}"): imported without two-factor login`,
    };
  }
  if (key === null || key.length === 0) {
    return {
      kind: 'dropped',
      reason: `two-factor login (${type}) without a readable secret: imported without two-factor login`,
    };
  }
  const codes = readBackupCodes(user.properties.get(TWO_FACTOR_PROPERTIES.backupCodes));
  return {
    kind: 'carried',
    twoFactor: {
      key,
      algorithm,
      backupCodes: codes ?? [],
      backupCodesProblem: codes === null ? 'two-factor backup codes unreadable: not carried over' : null,
    },
  };
}

/** ENiGMA½'s backup codes: a JSON array of strings; none stored is none left. Null when unreadable. */
function readBackupCodes(text: string | undefined): string[] | null {
  if (text === undefined || text.trim() === '') return [];
  try {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value) || !value.every((code) => typeof code === 'string')) return null;
    return value.filter((code) => code.trim() !== '');
  } catch {
    return null;
  }
}

/** A user's baud row but for the password hash and the username key, which the import adds. */
/** An imported account is never an application awaiting approval: ENiGMA½ had let it in already. */
export type ImportedUser = Omit<
  UserRow,
  'usernameKey' | 'passwordHash' | 'credentialsChangedAt' | 'isPending' | 'registrationNote'
>;

/**
 * The user's profile and counters; an account that is not active in ENiGMA½ (disabled,
 * inactive, locked) stays locked out in baud. Properties without a baud column are kept in
 * `properties` as `enigma.<name>`, so nothing is lost and a sysop can still read them.
 */
export function importedUser(user: EnigmaUser, importedAt: string): ImportedUser {
  const props = new Map([...user.properties].map(([name, value]) => [name, withoutNul(value)]));
  const profile = (name: keyof typeof PROFILE_COLUMNS) => {
    const value = props.get(name)?.trim();
    return value ? value : null;
  };
  // Byte totals are `bigint` columns; every other counter is an `integer`.
  const counter = (name: keyof typeof COUNTER_COLUMNS) =>
    wholeNumber(props.get(name), name.endsWith('_bytes') ? Number.MAX_SAFE_INTEGER : MAX_INTEGER);
  const kept: Record<string, string> = {};
  for (const [name, value] of props) {
    if (!HANDLED_PROPERTIES.has(name)) kept[`enigma.${name}`] = value;
  }
  const status = props.get('account_status') ?? ACTIVE;
  if (status !== ACTIVE) kept['enigma.account_status'] = status;
  return {
    id: user.id,
    username: withoutNul(user.userName),
    emailAddress: profile('email_address'),
    realName: profile('real_name'),
    location: profile('location'),
    affiliations: profile('affiliation'),
    webAddress: profile('web_address'),
    autoSignature: profile('auto_signature'),
    properties: JSON.stringify(kept),
    createdAt: utcTimestamp(props.get('account_created')) ?? importedAt,
    disabledAt: status === ACTIVE ? null : importedAt,
    lastLoginAt: utcTimestamp(props.get('last_login_timestamp')),
    loginCount: counter('login_count'),
    postCount: counter('post_count'),
    uploadCount: counter('ul_total_count'),
    uploadBytes: counter('ul_total_bytes'),
    downloadCount: counter('dl_total_count'),
    downloadBytes: counter('dl_total_bytes'),
    achievementCount: counter('achievement_total_count'),
    achievementPoints: counter('achievement_total_points'),
    minutesOnline: counter('minutes_online_total_count'),
  };
}

/** `message_meta` entries with a place in baud's `network`; the rest are reported by name. */
const FTN_STRINGS: Readonly<Record<string, keyof MessageNetwork>> = {
  'FtnProperty:ftn_area': 'ftnArea',
  'FtnProperty:ftn_tear_line': 'ftnTearLine',
  'FtnProperty:ftn_origin': 'ftnOrigin',
  'FtnKludge:MSGID': 'ftnMsgId',
  'FtnKludge:REPLY': 'ftnReplyId',
};
const FTN_LISTS: Readonly<Record<string, 'ftnSeenBy' | 'ftnPath'>> = {
  'FtnProperty:ftn_seen_by': 'ftnSeenBy',
  'FtnKludge:PATH': 'ftnPath',
};
/** System meta baud reads elsewhere (authorship, addressing) or that only ENiGMA½'s tosser needs. */
const SYSTEM_HANDLED = new Set([
  'System:local_from_user_id',
  'System:local_to_user_id',
  'System:remote_from_user',
  'System:external_flavor',
  'System:state_flags0',
  'FtnProperty:ftn_orig_node',
  'FtnProperty:ftn_orig_network',
]);

export interface MessageExtras {
  readonly network: MessageNetwork;
  readonly fromUserId: number | null;
  /** Meta entries that have no place in baud, as `Category name`. */
  readonly unmapped: readonly string[];
}

/**
 * A message's FTN metadata as baud's `network`, and its local author. The origin address is the
 * MSGID's (zone:net/node), else the remote author's address, else net/node of the FTN fields.
 */
export function messageExtras(meta: readonly EnigmaMessageMeta[], knownUserIds: ReadonlySet<number>): MessageExtras {
  const network: Record<string, unknown> = {};
  const unmapped: string[] = [];
  const byKey = new Map<string, string[]>();
  for (const entry of meta) {
    const key = `${entry.category}:${entry.name}`;
    byKey.set(key, [...(byKey.get(key) ?? []), entry.value]);
  }
  for (const [key, values] of byKey) {
    const single = FTN_STRINGS[key];
    const list = FTN_LISTS[key];
    if (single) network[single] = withoutNul(values[0] ?? '');
    else if (list) network[list] = values.map(withoutNul);
    else if (!SYSTEM_HANDLED.has(key)) unmapped.push(key.replace(':', ' '));
  }
  if (byKey.has('FtnProperty:ftn_area') || byKey.has('System:external_flavor')) {
    const msgIdAddress = byKey.get('FtnKludge:MSGID')?.[0]?.split(' ')[0];
    const remote = byKey.get('System:remote_from_user')?.[0];
    const net = byKey.get('FtnProperty:ftn_orig_network')?.[0];
    const node = byKey.get('FtnProperty:ftn_orig_node')?.[0];
    const origin = msgIdAddress || remote || (net && node ? `${net}/${node}` : undefined);
    if (origin) network.ftnOrigNode = origin;
  }
  const localFrom = Number(byKey.get('System:local_from_user_id')?.[0]);
  return {
    network: network as MessageNetwork,
    fromUserId: Number.isSafeInteger(localFrom) && knownUserIds.has(localFrom) ? localFrom : null,
    unmapped,
  };
}

/** A file's baud record but for where its bytes go. */
export interface ImportedFile {
  readonly id: number;
  readonly areaTag: string;
  readonly storageTag: string;
  readonly fileName: string;
  readonly desc: string;
  readonly descLong: string;
  readonly sha256: string;
  readonly uploadTimestamp: string;
  readonly uploadByUserId: number | null;
  readonly dlCount: number;
  readonly archiveType: string | null;
  readonly hashTags: readonly string[];
  readonly estReleaseYear: number | null;
}

export function importedFile(file: EnigmaFile, knownUserIds: ReadonlySet<number>, importedAt: string): ImportedFile {
  const uploader = Number(file.meta.get('upload_by_user_id'));
  const year = Number(file.meta.get('est_release_year'));
  return {
    id: file.id,
    areaTag: file.areaTag,
    storageTag: file.storageTag,
    // A name only shown and sent on download: the upload's rules (base name, no controls, ≤ 255 bytes).
    fileName: sanitizeFileName(file.fileName),
    desc: withoutNul(file.desc),
    descLong: withoutNul(file.descLong),
    sha256: file.sha256.toLowerCase(),
    uploadTimestamp: utcTimestamp(file.uploadTimestamp) ?? importedAt,
    uploadByUserId: Number.isSafeInteger(uploader) && knownUserIds.has(uploader) ? uploader : null,
    // ENiGMA½ writes the count as text, sometimes as a float ("5.0").
    dlCount: wholeNumber(file.meta.get('dl_count')),
    archiveType: file.meta.has('archive_type') ? withoutNul(file.meta.get('archive_type') ?? '') : null,
    hashTags: file.hashTags.map(withoutNul),
    estReleaseYear: Number.isInteger(year) && year > 0 ? year : null,
  };
}
