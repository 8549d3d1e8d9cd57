import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  createReadStream,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { encodeEnigmaPasswordHash } from '../auth/enigma-password.js';
import { createTwoFactorKeys, TWO_FACTOR_SECRET_SETTING, type TwoFactorKeys } from '../auth/two-factor-keys.js';
import type { Database } from '../db/database.js';
import { loadOrCreateSecret } from '../db/settings-store.js';
import { BadRequestError } from '../errors.js';
import { pipeIntoNewFile } from '../files/new-file.js';
import { checkBody, checkSubject, checkUserName, DEFAULT_TO_USER_NAME } from '../messages/message-rules.js';
import { type ThreadPlace, threadPlaceOf } from '../messages/message-thread.js';
import { PROFILE_FIELDS, profileFieldProblem } from '../users/profile-service.js';
import { assertValidUsername, usernameKey } from '../users/username.js';
import {
  createEnigmaImportStore,
  type EnigmaImportStore,
  type ImportedMessageRow,
  type ImportedTwoFactor,
} from './enigma-import-store.js';
import {
  enigmaPasswordOf,
  enigmaTwoFactorOf,
  hasNul,
  ID_RANGE_REASON,
  type ImportedUser,
  importedFile,
  importedUser,
  isImportableId,
  MAX_IMPORTED_ID,
  messageExtras,
  notTextReason,
  type Skipped,
  utcTimestamp,
  withoutNul,
} from './enigma-mapping.js';
import type { EnigmaMessage, EnigmaSource, EnigmaUser } from './enigma-source.js';

/** The kinds of things a move carries over, in the order they are moved. */
export const IMPORT_KINDS = ['users', 'apiKeys', 'messages', 'files', 'calls', 'pointers'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export interface KindCount {
  /** In the ENiGMA½ board. */
  found: number;
  /** Written by this run. */
  imported: number;
  /** On the baud board already (an earlier run). */
  alreadyThere: number;
  /** Not carried over; the reasons are in `skipped`. */
  skipped: number;
}

/** What a run did (or, with `dryRun`, would do), kind by kind, and what it left behind and why. */
export interface ImportSummary {
  readonly dryRun: boolean;
  readonly counts: Record<ImportKind, KindCount>;
  /** One entry per kind and reason, with how often it happened. */
  readonly skipped: Array<Skipped & { count: number }>;
  readonly seconds: number;
}

export interface ImportProgress {
  readonly kind: ImportKind;
  readonly done: number;
  readonly total: number;
}

export interface ImportOptions {
  readonly dryRun: boolean;
  /** Hard-link files into baud's storage instead of copying them (same file system only). */
  readonly link: boolean;
  /** baud's storage directory of each storage tag (absolute). */
  readonly storageDirectories: Readonly<Record<string, string>>;
  readonly onProgress?: (progress: ImportProgress) => void;
  readonly batchSize?: number;
  readonly now?: () => Date;
}

/** Where a private mail message lives in ENiGMA½: not an area of its config; baud serves it through /mail only (src/mail). */
const PRIVATE_MAIL_AREA = 'private_mail';

/** Tallies what happened, kind by kind, and every reason something was left behind. */
function createTally() {
  const counts = Object.fromEntries(
    IMPORT_KINDS.map((kind) => [kind, { found: 0, imported: 0, alreadyThere: 0, skipped: 0 }]),
  ) as Record<ImportKind, KindCount>;
  const skipped = new Map<string, Skipped & { count: number }>();
  return {
    counts,
    skip(kind: ImportKind | string, reason: string, count = 1) {
      if (kind in counts) counts[kind as ImportKind].skipped += count;
      const key = `${kind}\u0000${reason}`;
      const entry = skipped.get(key) ?? { kind, reason, count: 0 };
      entry.count += count;
      skipped.set(key, entry);
    },
    /** A note that is not a loss (kept but not served, kept elsewhere). */
    note(kind: string, reason: string, count = 1) {
      const key = `${kind}\u0000${reason}`;
      const entry = skipped.get(key) ?? { kind, reason, count: 0 };
      entry.count += count;
      skipped.set(key, entry);
    },
    skippedList: () => [...skipped.values()],
  };
}

type Tally = ReturnType<typeof createTally>;

/** What the import says when it removes U+0000, which PostgreSQL refuses in text. */
const NUL_NOTE = 'NUL characters in its text: removed';

/** SHA-256 of a file, streamed. */
async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Moves an ENiGMA½ board's content into a baud board's database and file store: users (with
 * their ENiGMA½ password hashes, verified and rehashed at first login), groups, status and
 * profiles; API keys by hash; messages with their ids, UUIDs, replies and FTN metadata; files
 * with their bytes; last callers; new-scan pointers. Every step skips what the board holds
 * already, so a second run changes nothing and an interrupted run finishes when run again.
 * With `dryRun`, only reads, and counts what a run would do.
 */
export async function importEnigmaBoard(
  source: EnigmaSource,
  database: Database | null,
  options: ImportOptions,
): Promise<ImportSummary> {
  const started = performance.now();
  const now = options.now ?? (() => new Date());
  const importedAt = now().toISOString();
  const tally = createTally();
  const store = database ? createEnigmaImportStore(database) : null;
  // The board's own two-factor keys: a carried-over secret is sealed as an enrolment on the board is.
  const twoFactorKeys = database
    ? createTwoFactorKeys(await loadOrCreateSecret(database.db, TWO_FACTOR_SECRET_SETTING))
    : null;
  const progress = (kind: ImportKind, done: number, total: number) => options.onProgress?.({ kind, done, total });

  // Rows whose ids baud cannot keep are left out before anything else, so no counter ever moves
  // past what a column, a thread path or the board's own later posts can carry.
  const importable = <Row extends { id: number }>(kind: ImportKind, rows: readonly Row[]): Row[] => {
    tally.counts[kind].found = rows.length;
    const kept = rows.filter((row) => isImportableId(row.id));
    if (kept.length < rows.length) tally.skip(kind, ID_RANGE_REASON, rows.length - kept.length);
    return kept;
  };
  const users = importable('users', source.users());
  const keys = importable('apiKeys', source.apiKeys());
  const files = importable('files', source.files());
  // First of all, the counters move past every id ENiGMA½ gave: a post, sign-up or upload made
  // on the board while (or after) importing never takes an id the import is about to keep.
  const maxId = (ids: readonly number[]) => ids.reduce((max, id) => Math.max(max, id), 0);
  await store?.advanceIdCounters({
    users: maxId(users.map((user) => user.id)),
    messages: source.maxMessageId(MAX_IMPORTED_ID),
    files: maxId(files.map((file) => file.id)),
    apiKeys: maxId(keys.map((key) => key.id)),
  });

  // Users and their groups: only names a sign-up could have (the same rules, not a copy).
  const validUsers = users.filter((user) => {
    if (user.notText.length > 0) tally.skip('users', notTextReason(user.notText));
    else if (!isValidUsername(user.userName)) tally.skip('users', usernameRefusal(user.userName));
    else return true;
    return false;
  });
  // baud tells names apart without letter case; ENiGMA½ may hold two that differ only in case.
  const takenNames = new Set<string>();
  const distinctUsers = validUsers.filter((user) => {
    const key = usernameKey(user.userName);
    if (!takenNames.has(key)) {
      takenNames.add(key);
      return true;
    }
    tally.skip('users', 'the same name as an earlier user but for letter case (baud tells them apart without case)');
    return false;
  });
  const rows = distinctUsers.map((user) => {
    if (hasNul(user.userName, ...user.properties.values())) tally.note('users', NUL_NOTE);
    const password = enigmaPasswordOf(user);
    let passwordHash = '!no-password';
    try {
      if (password) passwordHash = encodeEnigmaPasswordHash(password);
      else tally.note('users', 'no ENiGMA½ password stored: cannot log in until `baud user passwd`');
    } catch (error) {
      // Named one by one: the sysop has to give each of these accounts a password.
      tally.note(
        'users',
        `user ${user.id} ${JSON.stringify(user.userName)}: ${(error as Error).message} Imported without a usable password: set one with \`baud user passwd\``,
      );
    }
    const row = withProfileRules(importedUser(user, importedAt), tally);
    if (row.disabledAt !== null)
      tally.note('users', 'not active in ENiGMA½ (disabled, inactive or locked): locked out');
    return {
      user: row,
      passwordHash,
      groups: user.groups,
      twoFactor: importedTwoFactor(user, twoFactorKeys, importedAt, tally),
    };
  });
  // Keys and posts attach only to the accounts that are these ENiGMA½ users, never to another
  // account that took an id or a name on the board between runs.
  let userIds: ReadonlySet<number> = new Set(rows.map(({ user }) => user.id));
  if (store) {
    const inserted = await store.insertUsers(rows);
    tally.counts.users.imported = inserted.added;
    tally.counts.users.alreadyThere = inserted.alreadyThere;
    if (inserted.idTaken > 0) tally.skip('users', 'its id belongs to another account on the board', inserted.idTaken);
    if (inserted.nameTaken > 0)
      tally.skip('users', 'its name belongs to another account on the board', inserted.nameTaken);
    userIds = inserted.ownIds;
  } else {
    tally.counts.users.imported = rows.length;
  }
  progress('users', users.length, users.length);

  // API keys, by their hash (baud hashes keys the same way: SHA-256 of the raw key).
  const keyRows = keys.flatMap((key) => {
    if (key.notText.length > 0) {
      tally.skip('apiKeys', notTextReason(key.notText));
      return [];
    }
    if (!userIds.has(key.userId)) {
      tally.skip('apiKeys', 'its user is not on the board');
      return [];
    }
    if (hasNul(key.label)) tally.note('apiKeys', NUL_NOTE);
    const scope = ['read', 'write', 'read,write'].includes(key.scope) ? key.scope : 'read';
    if (scope !== key.scope) tally.note('apiKeys', `unknown scope "${key.scope}": imported as read-only`);
    const createdAt = utcTimestamp(key.createdAt) ?? importedAt;
    return [
      {
        id: key.id,
        userId: key.userId,
        label: withoutNul(key.label).slice(0, 128),
        scope,
        keyHash: key.keyHash.toLowerCase(),
        createdAt,
        lastUsedAt: utcTimestamp(key.lastUsedAt),
        // ENiGMA½ keeps only a flag: the revocation is dated at the move.
        revokedAt: key.isRevoked ? importedAt : null,
      },
    ];
  });
  if (store) {
    const inserted = await store.insertApiKeys(keyRows);
    tally.counts.apiKeys.imported = inserted.added;
    tally.counts.apiKeys.alreadyThere = keyRows.length - inserted.added - inserted.idTaken;
    if (inserted.idTaken > 0) tally.skip('apiKeys', 'its id belongs to another API key on the board', inserted.idTaken);
  } else {
    tally.counts.apiKeys.imported = keyRows.length;
  }
  progress('apiKeys', keys.length, keys.length);

  await importMessages(source, store, tally, userIds, options, progress);
  await importFiles(source, files, store, tally, userIds, options, importedAt, progress);

  // Last callers: ENiGMA½'s login history.
  const logins = source.logins().filter((login) => userIds.has(login.userId));
  tally.counts.calls.found = logins.length;
  const calls = logins.flatMap((login) => {
    const calledAt = utcTimestamp(login.timestamp);
    return calledAt ? [{ userId: login.userId, calledAt }] : [];
  });
  if (!store) tally.counts.calls.imported = calls.length;
  else {
    const added = await store.insertCalls(calls);
    tally.counts.calls.imported = added;
    tally.counts.calls.alreadyThere = calls.length - added;
  }

  // New-scan pointers.
  // Only for areas baud serves: a pointer into private mail or a forgotten area means nothing.
  const servedAreas = source.messageAreaTags();
  const allPointers = source.pointers().filter((pointer) => userIds.has(pointer.userId));
  const inRange = allPointers.filter((pointer) => isImportableId(pointer.messageId));
  if (inRange.length < allPointers.length) tally.skip('pointers', ID_RANGE_REASON, allPointers.length - inRange.length);
  const pointers = inRange.filter((pointer) => servedAreas.has(pointer.areaTag));
  if (pointers.length < inRange.length) {
    tally.skip(
      'pointers',
      'in an area baud does not serve (private mail, or not in the configuration)',
      inRange.length - pointers.length,
    );
  }
  tally.counts.pointers.found = allPointers.length;
  tally.counts.pointers.imported = pointers.length;
  if (store) {
    await store.insertPointers(
      pointers.map((pointer) => ({
        userId: pointer.userId,
        areaTag: pointer.areaTag,
        lastReadMessageId: pointer.messageId,
        updatedAt: importedAt,
      })),
    );
    await store.recountAreas([...servedAreas]);
    await store.advanceIdCounters();
    await store.analyze();
  }

  return {
    dryRun: store === null,
    counts: tally.counts,
    skipped: tally.skippedList(),
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * The user's ENiGMA½ two-factor login as the board keeps it (sealed secret, hashed backup codes),
 * or null when there is none or it cannot carry over; the report says which. A dry run (no keys)
 * only counts.
 */
function importedTwoFactor(
  user: EnigmaUser,
  keys: TwoFactorKeys | null,
  importedAt: string,
  tally: Tally,
): ImportedTwoFactor | null {
  const outcome = enigmaTwoFactorOf(user);
  if (outcome.kind === 'none') return null;
  if (outcome.kind === 'dropped') {
    tally.note('users', outcome.reason);
    return null;
  }
  const { key, algorithm, backupCodes, backupCodesProblem } = outcome.twoFactor;
  tally.note(
    'users',
    `two-factor login (TOTP, HMAC-${algorithm.toUpperCase()}) carried over: its authenticator app keeps working`,
  );
  if (backupCodesProblem !== null) tally.note('users', backupCodesProblem);
  if (keys === null) return null;
  return {
    enrolledAt: importedAt,
    sealedSecret: keys.seal(user.id, key),
    algorithm,
    recoveryCodeHashes: backupCodes.map((code) => keys.hashRecoveryCode(user.id, code)),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a sign-up could take `username` (baud's own rules). */
function isValidUsername(username: string): boolean {
  return usernameRefusal(username) === '';
}

/** Why a sign-up could not take `username` ("username must not be all digits"), or "" when it could. */
function usernameRefusal(username: string): string {
  try {
    assertValidUsername(username);
    return '';
  } catch (error) {
    if (error instanceof BadRequestError) return error.detail;
    throw error;
  }
}

/**
 * The user's profile as PUT /users/me would take it: a field its rules refuse (a `javascript:`
 * web address, control characters, too long) is left empty and reported, the account kept.
 */
function withProfileRules(user: ImportedUser, tally: Tally): ImportedUser {
  const checked = { ...user };
  for (const field of PROFILE_FIELDS) {
    const value = checked[field];
    const problem = value === null ? null : profileFieldProblem(field, value);
    if (problem === null) continue;
    checked[field] = null;
    tally.note('users', `${field} ${problem}: left empty`);
  }
  return checked;
}

/**
 * A message's names, subject and body as posting over HTTP takes them (NULs removed first, as
 * reported), or why posting would refuse them.
 */
function postedText(
  message: EnigmaMessage,
): Pick<ImportedMessageRow, 'fromUserName' | 'toUserName' | 'subject' | 'body'> | { refused: string } {
  try {
    return {
      fromUserName: checkUserName(withoutNul(message.fromUserName), '/fromUserName'),
      toUserName: checkUserName(withoutNul(message.toUserName), '/toUserName', DEFAULT_TO_USER_NAME),
      subject: checkSubject(withoutNul(message.subject), '/subject'),
      body: checkBody(withoutNul(message.body), '/body'),
    };
  } catch (error) {
    if (error instanceof BadRequestError) return { refused: error.detail };
    throw error;
  }
}

async function importMessages(
  source: EnigmaSource,
  store: EnigmaImportStore | null,
  tally: Tally,
  userIds: ReadonlySet<number>,
  options: ImportOptions,
  progress: (kind: ImportKind, done: number, total: number) => void,
): Promise<void> {
  tally.counts.messages.found = source.messageCount();
  const total = source.messageCountUpTo(MAX_IMPORTED_ID);
  if (total < tally.counts.messages.found) tally.skip('messages', ID_RANGE_REASON, tally.counts.messages.found - total);
  const configuredAreas = source.messageAreaTags();
  let done = 0;
  for (const batch of source.messageBatches(options.batchSize ?? 5000, MAX_IMPORTED_ID)) {
    const first = batch[0]?.id ?? 0;
    const last = batch[batch.length - 1]?.id ?? 0;
    const existing = store ? await store.existingMessageUuids(first, last) : new Map<number, string>();
    const fresh = batch.filter((message) => {
      const storedUuid = existing.get(message.id);
      if (storedUuid === undefined) return true;
      if (storedUuid === message.uuid.toLowerCase()) tally.counts.messages.alreadyThere += 1;
      else tally.skip('messages', 'its id belongs to another message on the board');
      return false;
    });
    // Every parent this batch does not place is looked up with its area, whether an earlier
    // batch or an earlier run stored it, so the other-area rule below applies to it as well.
    const placedHere = new Set(fresh.map((message) => message.id));
    const storedParents = store
      ? await store.threadPlacesOf([
          ...new Set(
            fresh.flatMap((message) =>
              message.replyToMessageId !== null &&
              isImportableId(message.replyToMessageId) &&
              !placedHere.has(message.replyToMessageId)
                ? [message.replyToMessageId]
                : [],
            ),
          ),
        ])
      : new Map<number, ThreadPlace & { areaTag: string }>();
    const placed = new Map<number, ThreadPlace & { areaTag: string }>();
    const rows: ImportedMessageRow[] = [];
    for (const message of fresh) {
      if (message.notText.length > 0) {
        tally.skip('messages', notTextReason(message.notText));
        continue;
      }
      if (!UUID.test(message.uuid)) {
        tally.skip('messages', 'its message_uuid is not a UUID');
        continue;
      }
      if (hasNul(message.subject, message.body, message.fromUserName, message.toUserName))
        tally.note('messages', NUL_NOTE);
      const text = postedText(message);
      if ('refused' in text) {
        tally.skip('messages', text.refused);
        continue;
      }
      const extras = messageExtras(message.meta, userIds);
      for (const name of extras.unmapped) tally.note('messages', `meta "${name}" has no place in baud: not kept`);
      if (message.areaTag === PRIVATE_MAIL_AREA)
        tally.note('messages', 'private mail: served to its sender and its recipient only');
      else if (!configuredAreas.has(message.areaTag)) {
        tally.note('messages', `area "${message.areaTag}" is not in ENiGMA½'s configuration: kept, not served`);
      }
      const timestamp = utcTimestamp(message.timestamp);
      if (timestamp === null) {
        tally.skip('messages', 'unreadable timestamp');
        continue;
      }
      let parentId = message.replyToMessageId;
      let parent: (ThreadPlace & { areaTag: string }) | undefined;
      if (parentId !== null) {
        parent = placed.get(parentId) ?? storedParents.get(parentId);
        // Threads are listed by their root alone: a reply joining a thread of another area
        // (private mail, a restricted area) would show that thread to the reply's readers.
        const inOtherArea = parent !== undefined && parent.areaTag !== message.areaTag;
        if (!parent || parentId >= message.id || inOtherArea) {
          tally.note(
            'messages',
            'replies to a message that is missing or in another area: kept as a thread of its own',
          );
          parentId = null;
          parent = undefined;
        }
      }
      const place = threadPlaceOf(message.id, parent ?? null);
      placed.set(message.id, { ...place, areaTag: message.areaTag });
      rows.push({
        id: message.id,
        uuid: message.uuid.toLowerCase(),
        areaTag: message.areaTag,
        replyToMessageId: parentId,
        fromUserId: extras.fromUserId,
        ...text,
        timestamp,
        network: JSON.stringify(extras.network),
        ...place,
      });
    }
    if (store) await store.insertMessages(rows);
    tally.counts.messages.imported += rows.length;
    done += batch.length;
    progress('messages', done, total);
  }
}

async function importFiles(
  source: EnigmaSource,
  files: ReturnType<EnigmaSource['files']>,
  store: EnigmaImportStore | null,
  tally: Tally,
  userIds: ReadonlySet<number>,
  options: ImportOptions,
  importedAt: string,
  progress: (kind: ImportKind, done: number, total: number) => void,
): Promise<void> {
  const fileAreas = source.fileAreaTags();
  // The bytes each area holds (stored, or imported by this run): baud keeps one copy per area.
  const contents = store ? await store.fileContents() : new Map<string, Set<string>>();
  let done = 0;
  for (const file of files) {
    done += 1;
    if (done > 1) progress('files', done - 1, files.length);
    if (file.notText.length > 0) {
      tally.skip('files', notTextReason(file.notText));
      continue;
    }
    if (!fileAreas.has(file.areaTag)) {
      tally.skip('files', `file area "${file.areaTag}" is not in ENiGMA½'s configuration`);
      continue;
    }
    if (hasNul(file.fileName, file.desc, file.descLong, ...file.hashTags)) tally.note('files', NUL_NOTE);
    const record = importedFile(file, userIds, importedAt);
    const to = options.storageDirectories[file.storageTag];
    const found = bytesOf(source.storageDirectory(file.storageTag), file);
    if (!to || 'skipped' in found) {
      tally.skip(
        'files',
        'skipped' in found
          ? found.skipped
          : `its bytes are not in the ENiGMA½ file base (storage tag "${file.storageTag}")`,
      );
      continue;
    }
    if (store && (await store.fileExists(file.id))) {
      tally.counts.files.alreadyThere += 1;
      continue;
    }
    const areaContents = contents.get(record.areaTag) ?? new Set<string>();
    contents.set(record.areaTag, areaContents);
    if (areaContents.has(record.sha256)) {
      tally.skip('files', 'same content as another file of its area (baud keeps one copy per area)');
      continue;
    }
    if (store) {
      const target = path.join(to, String(file.id));
      const staging = path.join(to, `.incoming`, `enigma-${file.id}-${process.pid}`);
      try {
        mkdirSync(path.dirname(staging), { recursive: true });
        const storedName = await store.insertFile({ ...record, byteSize: found.stats.size }, async () => {
          try {
            await placeBytes(found, staging, options.link, tally);
            const actual = await sha256Of(staging);
            if (actual !== record.sha256)
              tally.note('files', 'bytes differ from the SHA-256 ENiGMA½ recorded: imported as they are');
            renameSync(staging, target);
          } catch (error) {
            rmSync(staging, { force: true });
            throw error;
          }
        });
        if (storedName !== record.fileName)
          tally.note('files', 'the name of another file of its area: stored with a " (n)" suffix');
      } catch (error) {
        if (error instanceof FileRefused) {
          tally.skip('files', error.message);
          continue;
        }
        // One unreadable or unplaceable file is reported, and the others still move.
        const code = (error as NodeJS.ErrnoException).code;
        if (typeof code !== 'string' || !code.startsWith('E')) throw error;
        tally.skip('files', `its bytes could not be placed: ${code}`);
        continue;
      }
    }
    areaContents.add(record.sha256);
    tally.counts.files.imported += 1;
  }
  progress('files', files.length, files.length);
}

/** A file left out for a reason found while placing its bytes (not an I/O error). */
class FileRefused extends Error {}

/** Where a file's bytes are in ENiGMA½'s file base, and what was there when the path was checked. */
interface SourceBytes {
  readonly path: string;
  readonly stats: Stats;
}

/**
 * Where a file's bytes are in ENiGMA½'s file base. The path comes from the source's database
 * (`storage_tag_rel_path`, `file_name`), which an attacker may have written: it must stay inside
 * the storage directory, reach a regular file, and pass through no symbolic link (a link, or a
 * linked directory on the way, would carry a host file into a public area). Every component is
 * `lstat`ed; the storage directory itself may be a link (the sysop's choice of where it lives).
 * `placeBytes` then opens the file with `O_NOFOLLOW` and checks it is the same file.
 */
function bytesOf(
  storageDirectory: string | null,
  file: { storageTag: string; storageRelPath: string | null; fileName: string },
): SourceBytes | { skipped: string } {
  const notThere = { skipped: `its bytes are not in the ENiGMA½ file base (storage tag "${file.storageTag}")` };
  if (!storageDirectory) return notThere;
  const resolved = path.resolve(storageDirectory, file.storageRelPath ?? '', file.fileName);
  const relative = path.relative(storageDirectory, resolved);
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
    return { skipped: 'its path leads outside its storage directory' };
  const parts = relative.split(path.sep);
  let reached = storageDirectory;
  let stats: Stats | undefined;
  for (const [index, part] of parts.entries()) {
    reached = path.join(reached, part);
    try {
      stats = lstatSync(reached);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      return code === 'ENOENT' || code === 'ENOTDIR' ? notThere : { skipped: `its bytes could not be read: ${code}` };
    }
    const isLast = index === parts.length - 1;
    if (stats.isSymbolicLink())
      return { skipped: isLast ? 'its file is a symbolic link' : 'its path goes through a symbolic link' };
    if (!isLast && !stats.isDirectory()) return notThere;
  }
  if (!stats?.isFile()) return { skipped: 'its path is not a regular file' };
  return { path: resolved, stats };
}

/** Whether two stats describe one file (the same inode of the same device). */
const isSameFile = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino;

/**
 * Puts the checked file's bytes at `to`: a hard link when asked for and possible (same file
 * system), else a copy. A directory on the way may have been swapped for a link since
 * `bytesOf` looked, so the copy reads from one descriptor opened with `O_NOFOLLOW` (and
 * `O_NONBLOCK`, so a FIFO cannot hang the import) that must be the checked file, and a new hard
 * link must be the checked file too; anything else is refused and removed.
 */
async function placeBytes(from: SourceBytes, to: string, link: boolean, tally: Tally): Promise<void> {
  rmSync(to, { force: true });
  if (link) {
    try {
      linkSync(from.path, to);
      if (!isSameFile(lstatSync(to), from.stats)) throw new FileRefused('it changed while being imported');
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      tally.note('files', 'not on the same file system as baud’s storage: copied instead of linked');
    }
  }
  const fd = openSync(from.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || !isSameFile(opened, from.stats)) throw new FileRefused('it changed while being imported');
    await pipeIntoNewFile(to, createReadStream('', { fd, autoClose: false }));
  } finally {
    closeSync(fd);
  }
}
