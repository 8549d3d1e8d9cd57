import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { encodeEnigmaPasswordHash } from '../auth/enigma-password.js';
import type { Database } from '../db/database.js';
import { type ThreadPlace, threadPlaceOf } from '../messages/message-thread.js';
import { usernameKey } from '../users/username.js';
import { createEnigmaImportStore, type ImportedMessageRow } from './enigma-import-store.js';
import {
  enigmaPasswordOf,
  importedFile,
  importedUser,
  messageExtras,
  type Skipped,
  utcTimestamp,
} from './enigma-mapping.js';
import type { EnigmaSource } from './enigma-source.js';

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

/** Where a private mail message lives in ENiGMA½: not an area of its config, and never served by baud. */
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
  const progress = (kind: ImportKind, done: number, total: number) => options.onProgress?.({ kind, done, total });

  // Users and their groups.
  const users = source.users();
  tally.counts.users.found = users.length;
  // baud tells names apart without letter case; ENiGMA½ may hold two that differ only in case.
  const takenNames = new Set<string>();
  const distinctUsers = users.filter((user) => {
    const key = usernameKey(user.userName);
    if (!takenNames.has(key)) {
      takenNames.add(key);
      return true;
    }
    tally.skip('users', 'the same name as an earlier user but for letter case (baud tells them apart without case)');
    return false;
  });
  const rows = distinctUsers.map((user) => {
    const password = enigmaPasswordOf(user);
    let passwordHash = '!no-password';
    try {
      if (password) passwordHash = encodeEnigmaPasswordHash(password);
      else tally.note('users', 'no ENiGMA½ password stored: cannot log in until `baud user passwd`');
    } catch {
      tally.note('users', 'password hash in a form baud cannot verify: set one with `baud user passwd`');
    }
    const row = importedUser(user, importedAt);
    if (row.disabledAt !== null)
      tally.note('users', 'not active in ENiGMA½ (disabled, inactive or locked): locked out');
    return { user: row, passwordHash, groups: user.groups };
  });
  if (store) {
    const added = await store.insertUsers(rows);
    tally.counts.users.imported = added;
    tally.counts.users.alreadyThere = rows.length - added;
  }
  progress('users', users.length, users.length);
  const userIds = store ? await store.userIds() : new Set(users.map((user) => user.id));

  // API keys, by their hash (baud hashes keys the same way: SHA-256 of the raw key).
  const keys = source.apiKeys();
  tally.counts.apiKeys.found = keys.length;
  const keyRows = keys.flatMap((key) => {
    if (!userIds.has(key.userId)) {
      tally.skip('apiKeys', 'its user is not on the board');
      return [];
    }
    const scope = ['read', 'write', 'read,write'].includes(key.scope) ? key.scope : 'read';
    if (scope !== key.scope) tally.note('apiKeys', `unknown scope "${key.scope}": imported as read-only`);
    const createdAt = utcTimestamp(key.createdAt) ?? importedAt;
    return [
      {
        id: key.id,
        userId: key.userId,
        label: key.label.slice(0, 128),
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
    const added = await store.insertApiKeys(keyRows);
    tally.counts.apiKeys.imported = added;
    tally.counts.apiKeys.alreadyThere = keyRows.length - added;
  }
  progress('apiKeys', keys.length, keys.length);

  await importMessages(source, store, tally, userIds, options, progress);
  await importFiles(source, store, tally, userIds, options, importedAt, progress);

  // Last callers: ENiGMA½'s login history.
  const logins = source.logins().filter((login) => userIds.has(login.userId));
  tally.counts.calls.found = logins.length;
  if (store) {
    const calls = logins.flatMap((login) => {
      const calledAt = utcTimestamp(login.timestamp);
      return calledAt ? [{ userId: login.userId, calledAt }] : [];
    });
    const added = await store.insertCalls(calls);
    tally.counts.calls.imported = added;
    tally.counts.calls.alreadyThere = calls.length - added;
  }

  // New-scan pointers.
  const pointers = source.pointers().filter((pointer) => userIds.has(pointer.userId));
  tally.counts.pointers.found = pointers.length;
  if (store) {
    await store.insertPointers(
      pointers.map((pointer) => ({
        userId: pointer.userId,
        areaTag: pointer.areaTag,
        lastReadMessageId: pointer.messageId,
        updatedAt: importedAt,
      })),
    );
    tally.counts.pointers.imported = pointers.length;
    await store.recountAreas();
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

async function importMessages(
  source: EnigmaSource,
  store: ReturnType<typeof createEnigmaImportStore> | null,
  tally: Tally,
  userIds: ReadonlySet<number>,
  options: ImportOptions,
  progress: (kind: ImportKind, done: number, total: number) => void,
): Promise<void> {
  const total = source.messageCount();
  tally.counts.messages.found = total;
  const configuredAreas = source.messageAreaTags();
  let done = 0;
  for (const batch of source.messageBatches(options.batchSize ?? 5000)) {
    const first = batch[0]?.id ?? 0;
    const last = batch[batch.length - 1]?.id ?? 0;
    const existing = store ? await store.existingMessageIds(first, last) : new Set<number>();
    const fresh = batch.filter((message) => !existing.has(message.id));
    tally.counts.messages.alreadyThere += batch.length - fresh.length;
    // Parents stored by earlier batches or runs; parents in this batch are placed as we go.
    const earlierParents = store
      ? await store.threadPlacesOf(
          fresh.flatMap((message) =>
            message.replyToMessageId !== null && message.replyToMessageId < first ? [message.replyToMessageId] : [],
          ),
        )
      : new Map<number, ThreadPlace>();
    const placed = new Map<number, ThreadPlace & { areaTag: string }>();
    const rows: ImportedMessageRow[] = [];
    for (const message of fresh) {
      const extras = messageExtras(message.meta, userIds);
      for (const name of extras.unmapped) tally.note('messages', `meta "${name}" has no place in baud: not kept`);
      if (message.areaTag === PRIVATE_MAIL_AREA) tally.note('messages', 'private mail: kept, never served');
      else if (!configuredAreas.has(message.areaTag)) {
        tally.note('messages', `area "${message.areaTag}" is not in ENiGMA½'s configuration: kept, not served`);
      }
      const timestamp = utcTimestamp(message.timestamp);
      if (timestamp === null) {
        tally.skip('messages', 'unreadable timestamp');
        continue;
      }
      let parentId = message.replyToMessageId;
      let parent: (ThreadPlace & { areaTag?: string }) | undefined;
      if (parentId !== null) {
        parent = placed.get(parentId) ?? earlierParents.get(parentId);
        const inOtherArea = parent?.areaTag !== undefined && parent.areaTag !== message.areaTag;
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
        fromUserName: message.fromUserName,
        toUserName: message.toUserName,
        subject: message.subject,
        body: message.body,
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
  store: ReturnType<typeof createEnigmaImportStore> | null,
  tally: Tally,
  userIds: ReadonlySet<number>,
  options: ImportOptions,
  importedAt: string,
  progress: (kind: ImportKind, done: number, total: number) => void,
): Promise<void> {
  const files = source.files();
  tally.counts.files.found = files.length;
  const fileAreas = source.fileAreaTags();
  let done = 0;
  for (const file of files) {
    done += 1;
    if (done > 1) progress('files', done - 1, files.length);
    if (!fileAreas.has(file.areaTag)) {
      tally.skip('files', `file area "${file.areaTag}" is not in ENiGMA½'s configuration`);
      continue;
    }
    const record = importedFile(file, userIds, importedAt);
    const from = source.storageDirectory(file.storageTag);
    const to = options.storageDirectories[file.storageTag];
    const sourcePath = from ? path.join(from, file.storageRelPath ?? '', file.fileName) : null;
    if (!sourcePath || !to || !existsSync(sourcePath)) {
      tally.skip('files', `its bytes are not in the ENiGMA½ file base (storage tag "${file.storageTag}")`);
      continue;
    }
    if (store && (await store.fileExists(file.id))) {
      tally.counts.files.alreadyThere += 1;
      continue;
    }
    const twin = store ? await store.fileWithContent(record.areaTag, record.sha256) : null;
    if (twin !== null) {
      tally.skip('files', 'same content as another file of its area (baud keeps one copy per area)');
      continue;
    }
    const byteSize = statSync(sourcePath).size;
    if (store) {
      const target = path.join(to, String(file.id));
      const staging = path.join(to, `.incoming`, `enigma-${file.id}-${process.pid}`);
      mkdirSync(path.dirname(staging), { recursive: true });
      await store.insertFile({ ...record, byteSize }, async () => {
        try {
          placeBytes(sourcePath, staging, options.link, tally);
          const actual = await sha256Of(staging);
          if (actual !== record.sha256)
            tally.note('files', 'bytes differ from the SHA-256 ENiGMA½ recorded: imported as they are');
          renameSync(staging, target);
        } catch (error) {
          rmSync(staging, { force: true });
          throw error;
        }
      });
    }
    tally.counts.files.imported += 1;
  }
  progress('files', files.length, files.length);
}

/** A hard link when asked for and possible (same file system), else a copy. */
function placeBytes(from: string, to: string, link: boolean, tally: Tally): void {
  rmSync(to, { force: true });
  if (link) {
    try {
      linkSync(from, to);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      tally.note('files', 'not on the same file system as baud’s storage: copied instead of linked');
    }
  }
  copyFileSync(from, to);
}
