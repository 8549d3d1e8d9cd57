import type { ColumnType, Generated, Selectable } from 'kysely';

/**
 * Typed tables. Columns are snake_case in the database and camelCase here (Kysely's
 * CamelCasePlugin), using the API's own field names where a column carries one.
 * Timestamps are RFC 3339 UTC strings with milliseconds (`Date#toISOString`) on both
 * dialects, so they sort and compare as text and read back unchanged.
 */
export interface Tables {
  settings: SettingsTable;
  users: UsersTable;
  userGroups: UserGroupsTable;
  refreshFamilies: RefreshFamiliesTable;
  refreshTokens: RefreshTokensTable;
  apiKeys: ApiKeysTable;
  loginAttempts: LoginAttemptsTable;
  calls: CallsTable;
  messageAreas: MessageAreasTable;
  messages: MessagesTable;
  messagePointers: MessagePointersTable;
  messageLiveCounts: MessageLiveCountsTable;
  fileAreas: FileAreasTable;
  files: FilesTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  auditLog: AuditLogTable;
  totpCredentials: TotpCredentialsTable;
  totpRecoveryCodes: TotpRecoveryCodesTable;
  mailboxEntries: MailboxEntriesTable;
  mailCounts: MailCountsTable;
  mailBlocks: MailBlocksTable;
  sshKeys: SshKeysTable;
  ftnLinks: FtnLinksTable;
  ftnMessageIds: FtnMessageIdsTable;
  ftnSerials: FtnSerialsTable;
  ftnExportCursors: FtnExportCursorsTable;
  ftnNetmailQueue: FtnNetmailQueueTable;
  ftnTossJournal: FtnTossJournalTable;
}

type Timestamp = string;

export interface SettingsTable {
  key: string;
  value: string;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  /** Lower-cased username: uniqueness and lookups are case-insensitive. */
  usernameKey: string;
  passwordHash: string;
  emailAddress: string | null;
  realName: string | null;
  location: string | null;
  affiliations: string | null;
  webAddress: string | null;
  autoSignature: string | null;
  /** Free-form user properties for the ACS `PV[name,value]` code, as a JSON object. */
  properties: ColumnType<string, string | undefined, string>;
  createdAt: Timestamp;
  disabledAt: Timestamp | null;
  /**
   * Bumped by a password reset at the console or a disable: refresh families older than this are
   * dead. A user's own password change leaves it and revokes their other families by row, since
   * it keeps the one it was made in.
   */
  credentialsChangedAt: Timestamp;
  lastLoginAt: Timestamp | null;
  loginCount: Generated<number>;
  postCount: Generated<number>;
  uploadCount: Generated<number>;
  uploadBytes: Generated<number>;
  downloadCount: Generated<number>;
  downloadBytes: Generated<number>;
  achievementCount: Generated<number>;
  achievementPoints: Generated<number>;
  minutesOnline: Generated<number>;
  /** 1 while the account awaits a sysop's approval (`users.registration: approval`); it cannot log in. */
  isPending: ColumnType<number, number | undefined, number>;
  /** What the applicant told the sysop when registering. */
  registrationNote: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface UserGroupsTable {
  userId: number;
  groupName: string;
}

/** A login session: every refresh token descends from one login. Also the "node" list. */
export interface RefreshFamiliesTable {
  id: string;
  userId: number;
  createdAt: Timestamp;
  /** Absolute end of the session, however often it is refreshed. */
  expiresAt: Timestamp;
  lastActivityAt: Timestamp;
  lastAction: string;
  isSecure: number;
  clientAddress: string;
  revokedAt: Timestamp | null;
  /** How the user came in: `api` or `terminal` (see SESSION_VIAS). */
  via: ColumnType<'api' | 'terminal', 'api' | 'terminal' | undefined, never>;
}

export interface RefreshTokensTable {
  id: Generated<number>;
  familyId: string;
  /** SHA-256 of the token, hex; the token itself is never stored. */
  tokenHash: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  /** Set when this token was exchanged; presenting it again revokes the family. */
  rotatedAt: Timestamp | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  userId: number;
  label: string;
  /** `read`, `write` or `read,write`. */
  scope: string;
  /** SHA-256 of the key, hex. */
  keyHash: string;
  createdAt: Timestamp;
  lastUsedAt: Timestamp | null;
  revokedAt: Timestamp | null;
}

/** The login throttle's current window per subject (see `src/auth/login-throttle.ts`). */
export interface LoginAttemptsTable {
  /**
   * `user:<usernameKey>` or `ip:<address>` (failed logins), or `register:<address>` (accepted
   * registrations, src/auth/registration-service.ts).
   */
  subject: string;
  windowStartedAt: Timestamp;
  /** Attempts let through in this window: failures, plus those still being checked. */
  attemptCount: number;
}

/** One row per interactive login: the last-callers list and call statistics. */
export interface CallsTable {
  id: Generated<number>;
  userId: number;
  calledAt: Timestamp;
}

/** Per-area counters kept in the same transaction as posts and deletions. */
export interface MessageAreasTable {
  areaTag: string;
  messageCount: number;
  lastMessageAt: Timestamp | null;
}

export interface MessagesTable {
  /** The API's `messageId`: monotonic, never reused. */
  id: Generated<number>;
  uuid: string;
  areaTag: string;
  replyToMessageId: number | null;
  fromUserId: number | null;
  fromUserName: string;
  toUserName: string;
  subject: string;
  body: string;
  timestamp: Timestamp;
  /** FTN metadata (`network` in the API) as a JSON object; `{}` for local messages. */
  network: ColumnType<string, string | undefined, string>;
  deletedAt: Timestamp | null;
  /** The first message of the thread (its own id for a root); see src/messages/message-thread.ts. */
  threadRootId: number;
  /** The message's place in its thread: depth-first order as text order. */
  threadPath: string;
}

/** A user's last-read message per area (new-scan); no row: nothing read yet. */
export interface MessagePointersTable {
  userId: number;
  areaTag: string;
  lastReadMessageId: number;
  updatedAt: Timestamp;
}

/**
 * The live messages of each area counted by id range, kept with every insert and deletion: a
 * Fenwick tree per area whose node 0 is the area's live total (src/messages/message-live-counts.ts).
 */
export interface MessageLiveCountsTable {
  areaTag: string;
  node: number;
  liveCount: number;
}

export interface FileAreasTable {
  areaTag: string;
  fileCount: number;
  totalBytes: number;
}

export interface FilesTable {
  /** The API's `fileId`; also the file's name on disk. */
  id: Generated<number>;
  areaTag: string;
  storageTag: string;
  fileName: string;
  desc: string;
  descLong: string;
  byteSize: number;
  sha256: string;
  uploadTimestamp: Timestamp;
  uploadByUserId: number | null;
  dlCount: Generated<number>;
  archiveType: string | null;
  /** JSON array of strings. */
  hashTags: string;
  estReleaseYear: number | null;
}

export type UserRow = Selectable<UsersTable>;

/** The durable event log (src/events/event-log.ts). */
export interface EventsTable {
  id: Generated<number>;
  type: string;
  areaTag: string | null;
  userId: number | null;
  createdAt: Timestamp;
  /** The event's data, JSON. */
  data: string;
}

export interface WebhooksTable {
  id: Generated<number>;
  userId: number;
  url: string;
  /** JSON arrays: event types, area globs (empty: all). */
  events: string;
  areas: string;
  description: string;
  secretSalt: string;
  createdAt: Timestamp;
  deactivatedAt: Timestamp | null;
  deactivationReason: string | null;
  /** Every event up to this id has been delivered (or was not for this webhook). */
  deliveredThrough: number;
  /** Failed attempts at the next event. */
  attempts: Generated<number>;
  failingSince: Timestamp | null;
  consecutiveFailures: Generated<number>;
  nextAttemptAt: Timestamp;
  /** The node sending now, and until when its claim holds. */
  leaseOwner: string | null;
  leaseUntil: Timestamp | null;
  /** The window of test deliveries: when it opened (null: never) and the tests it holds. */
  testWindowStartedAt: Timestamp | null;
  testCount: Generated<number>;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhookId: number;
  eventId: number;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  attemptedAt: Timestamp;
}

/** Every change made to an account, and by whom (src/admin/audit-store.ts). */
export interface AuditLogTable {
  id: Generated<number>;
  at: Timestamp;
  /** The user who acted; null for the operator at the server's console (the `baud` command). */
  actor: string | null;
  /** What was done: `user.registered`, `user.approved`, `user.locked` … */
  action: string;
  /** The username it was done to. */
  target: string;
  /** A short human-readable account of the change. */
  detail: string;
}

/** A user's TOTP enrolment (src/auth/two-factor-store.ts); no row: two-factor login is off. */
export interface TotpCredentialsTable {
  userId: number;
  /** The shared secret sealed with the board's two-factor key (src/auth/two-factor-keys.ts). */
  sealedSecret: string;
  /** The HMAC of the codes: `sha1`, or `sha256` for an ENiGMA½ `rfc6238_TOTP` account. */
  algorithm: ColumnType<string, string | undefined, string>;
  enrolledAt: Timestamp;
  /** When a first code confirmed the enrolment: from then on login asks for a code. Null: not on yet. */
  confirmedAt: Timestamp | null;
  /** The last time step a code was accepted for: that code, and older ones, are refused from then on. */
  lastUsedStep: ColumnType<number | null, number | null | undefined, number | null>;
}

/** The keyed hash of each unused recovery code; a used one is deleted. */
export interface TotpRecoveryCodesTable {
  userId: number;
  codeHash: string;
}

/** Who holds which private mail, in which box (src/mail/mail-store.ts); the mail is a `messages` row of `private_mail`. */
export interface MailboxEntriesTable {
  userId: number;
  box: 'inbox' | 'sent';
  messageId: number;
  /** 1 once the recipient marked it read; sent entries are always 1. */
  isRead: number;
}

/** The unread inbox entries of each user, kept with every change to them. */
export interface MailCountsTable {
  userId: number;
  unreadCount: number;
}

/** A user (`userId`) refuses new mail from `blockedUserId`. */
export interface MailBlocksTable {
  userId: number;
  blockedUserId: number;
  blockedAt: Timestamp;
}

/** An SSH public key a user registered for terminal logins (src/auth/ssh-key-store.ts). */
export interface SshKeysTable {
  id: Generated<number>;
  userId: number;
  /** The key's type, as its OpenSSH line names it: `ssh-ed25519`, `ecdsa-sha2-nistp256` …, `ssh-rsa`. */
  algorithm: string;
  /** The public key blob, base64 (the middle field of the OpenSSH line). */
  keyData: string;
  /** `SHA256:` and the unpadded base64 of the blob's SHA-256, as OpenSSH shows it. */
  fingerprint: string;
  label: string;
  createdAt: Timestamp;
}

/** An FTN link's session lease and how its sessions went (src/ftn/ftn-link-store.ts). */
export interface FtnLinksTable {
  network: string;
  /** `zone:net/node[.point]`, no domain. */
  address: string;
  /** The node holding the lease, the holding's id, and when it runs out; all null when free. */
  leaseOwner: string | null;
  leaseId: string | null;
  leaseUntil: Timestamp | null;
  lastSessionAt: Timestamp | null;
  /** 1 when the latest session ended well, 0 when it failed; null before any. */
  lastSessionOk: number | null;
  lastOkAt: Timestamp | null;
  /** The latest failure's reason and time: kept after later good sessions. */
  lastError: string | null;
  lastErrorAt: Timestamp | null;
  lastFilesIn: Generated<number>;
  lastFilesOut: Generated<number>;
  lastBytesIn: Generated<number>;
  lastBytesOut: Generated<number>;
  sessions: Generated<number>;
  failedSessions: Generated<number>;
}

/** Every MSGID seen in a network, tossed or exported (src/ftn/ftn-store.ts): dupes, REPLY links, forwarding. */
export interface FtnMessageIdsTable {
  network: string;
  /** The MSGID kludge's value as it came (or as we wrote it); a key of the text for a message without one. */
  msgId: string;
  messageId: number;
  /** The link a tossed message came from (`zone:net/node[.point]`); null for a message posted here. */
  sourceLink: string | null;
  /** The ^A lines a tossed message carried beyond MSGID and REPLY, as a JSON array of {name, value}. */
  kludges: ColumnType<string, string | undefined, string>;
  createdAt: Timestamp;
}

/** A network's MSGID serial counter; its row is also the network's lock for tossing and exporting. */
export interface FtnSerialsTable {
  network: string;
  /** bigint: serials run to 2^32. */
  nextSerial: ColumnType<number | string, number, number>;
}

/** How far each echomail area has been exported into a network's outbounds. */
export interface FtnExportCursorsTable {
  network: string;
  areaTag: string;
  lastMessageId: number;
  updatedAt: Timestamp;
}

/** Netmail sent with `POST /mail`, waiting for the scanner to pack it. */
export interface FtnNetmailQueueTable {
  /** The mail's `messages` row. */
  messageId: number;
  network: string;
  /** `zone:net/node[.point]` */
  toAddress: string;
  toName: string;
}

/** One row per inbound file tossed or moved to bad. */
export interface FtnTossJournalTable {
  id: Generated<number>;
  network: string;
  fileName: string;
  tossedAt: Timestamp;
  outcome: 'tossed' | 'bad';
  imported: number;
  duplicates: number;
  skipped: number;
  /** Why it went to bad, or what was skipped; '' when all went in. */
  detail: string;
}
