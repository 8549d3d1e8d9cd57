import type { BoardAreas } from '../access/board-areas.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import { checkNetwork } from './message-network.js';
import { checkBody, checkSubject, checkUserName, DEFAULT_TO_USER_NAME } from './message-rules.js';
import type { MessageStore } from './message-store.js';
import { type ThreadPlace, threadPlaceOf } from './message-thread.js';
import { messageUuid } from './message-uuid.js';
import type { NewMessageRow } from './message-writes.js';

/** Rows committed per transaction; measured in bench/message-import.bench.ts. */
export const DEFAULT_IMPORT_BATCH_SIZE = 5000;

/** A line of the file that cannot be imported. Batches before the one holding it stay committed. */
export class MessageImportError extends BadRequestError {
  constructor(
    readonly lineNumber: number,
    reason: string,
    /** Messages committed (in earlier batches) before the import stopped. */
    readonly committedCount: number,
  ) {
    super(
      'message.import-line-invalid',
      `line ${lineNumber}: ${reason} (nothing from its batch was imported; ${committedCount} earlier messages were)`,
    );
  }
}

export interface ImportResult {
  readonly imported: number;
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const KNOWN_MEMBERS: ReadonlySet<string> = new Set(['from', 'to', 'subject', 'body', 'timestamp', 'replyTo', 'ftn']);

interface PendingMessage {
  readonly lineNumber: number;
  /** The row but for what the batch's commit gives it: its id, parent and thread place. */
  readonly row: Omit<NewMessageRow, 'id' | 'replyToMessageId' | 'threadRootId' | 'threadPath'>;
  /** Line number of the message this one replies to (an earlier message line of the file). */
  readonly replyToLine: number | null;
}

function requireString(source: Record<string, unknown>, member: string): string {
  const value = source[member];
  if (typeof value !== 'string') throw new BadRequestError('message.import-line-invalid', `${member} must be a string`);
  return value;
}

/**
 * Loads messages from JSON Lines into one area, as the operator (no ACS; the area must exist
 * and not be blocked). Each non-blank line is an object:
 *
 * `{ "from": "Sysop", "to": "All", "subject": "…", "body": "…", "timestamp": "2024-01-02T03:04:05Z",
 *    "replyTo": 1, "ftn": { "ftnMsgId": "…", "ftnSeenBy": ["…"] } }`
 *
 * - `to` defaults to `All`; subject and body follow the same limits as posting over HTTP.
 * - `timestamp` is RFC 3339 (any offset; stored as UTC with milliseconds).
 * - `replyTo` is the 1-based **line number of an earlier line in the same file**, not a
 *   messageId: messageIds are only assigned on import, so a file can only name its own
 *   messages, and a file stays importable into any board.
 * - `ftn` holds the FTN members of decisions.md ("network"); unknown members are refused.
 *
 * Messages are committed `batchSize` lines per transaction (multi-row inserts, counters
 * updated in the same transaction). A bad line throws `MessageImportError` with its line
 * number: nothing of its batch is committed, earlier batches stay. `onProgress` is called
 * after every committed batch with the running total. The planner's statistics are brought
 * up to date at the end (PostgreSQL would otherwise page a big new area slowly).
 */
export async function importMessages(
  deps: { readonly messageStore: MessageStore; readonly areas: BoardAreas },
  areaTag: string,
  lines: AsyncIterable<string>,
  onProgress: (imported: number) => void = () => {},
  options: { readonly batchSize?: number } = {},
): Promise<ImportResult> {
  if (!deps.areas.messageAreas.has(areaTag))
    throw new NotFoundError('message.area-not-found', `No message area "${areaTag}".`);
  const batchSize = options.batchSize ?? DEFAULT_IMPORT_BATCH_SIZE;
  const store = deps.messageStore;
  // messageId of every committed line (by line number), for replies to earlier batches.
  const idsByLine: number[] = [];
  // The message lines not committed yet: the batch being read, and the one being committed.
  const uncommittedLines = new Set<number>();
  let batch: PendingMessage[] = [];
  let imported = 0;
  let lineNumber = 0;
  const bulkWrite = store.startBulkWrite();

  async function commitBatch(pending: readonly PendingMessage[]): Promise<void> {
    // The batches before this one are in, so a reply to a line before it names a committed line;
    // a reply within the batch names a line that has no id yet.
    const earlierParentIds = pending.flatMap(({ replyToLine }) => {
      const committedId = replyToLine === null ? undefined : idsByLine[replyToLine];
      return committedId === undefined ? [] : [committedId];
    });
    // RFC 3339 UTC strings with milliseconds sort as text.
    const newest = pending.map(({ row }) => row.timestamp).sort()[pending.length - 1] ?? '';
    const idByLine = await store.transaction(async (trx) => {
      // The area's counter row first: its lock orders the writers of the area (see postMessage).
      await trx.addToAreaCounters(areaTag, pending.length, newest);
      const ids = await trx.reserveMessageIds(pending.length);
      // Replies to earlier batches hang under messages already stored; replies inside the batch under rows of it.
      const earlierParents = await trx.threadPlacesOf(earlierParentIds);
      const idInBatch = new Map<number, number>();
      const placeByLine = new Map<number, ThreadPlace>();
      const rows = pending.map((message, index) => {
        const id = ids[index] as number;
        const { lineNumber: line, replyToLine } = message;
        let replyToMessageId: number | null = null;
        let parent: ThreadPlace | undefined;
        if (replyToLine !== null) {
          const parentInBatch = idInBatch.get(replyToLine);
          replyToMessageId = parentInBatch ?? (idsByLine[replyToLine] as number);
          parent = parentInBatch === undefined ? earlierParents.get(replyToMessageId) : placeByLine.get(replyToLine);
        }
        const place = threadPlaceOf(id, parent ?? null);
        idInBatch.set(line, id);
        placeByLine.set(line, place);
        return { ...message.row, id, replyToMessageId, ...place };
      });
      await trx.insertMessages(rows);
      return idInBatch;
    });
    for (const [line, id] of idByLine) {
      idsByLine[line] = id;
      uncommittedLines.delete(line);
    }
    imported += pending.length;
    bulkWrite.batchCommitted();
    onProgress(imported);
  }

  // One batch is committed while the next is read: the database's work (on its own thread or
  // server) and the parsing go on at once. A batch starts only once the one before it is in.
  let committing: Promise<void> = Promise.resolve();
  async function commitInTurn(): Promise<void> {
    const pending = batch;
    batch = [];
    await committing;
    if (pending.length === 0) return;
    committing = commitBatch(pending);
    // Awaited before the next batch or the end; a failure meanwhile must not count as unhandled.
    committing.catch(() => {});
  }

  function parseLine(text: string): PendingMessage {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new BadRequestError('message.import-line-invalid', 'not valid JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new BadRequestError('message.import-line-invalid', 'must be a JSON object');
    }
    const source = value as Record<string, unknown>;
    for (const member of Object.keys(source)) {
      if (!KNOWN_MEMBERS.has(member))
        throw new BadRequestError('message.import-line-invalid', `${member} is not a known member`);
    }
    const from = checkUserName(requireString(source, 'from'), '/from');
    const to = source.to === undefined ? DEFAULT_TO_USER_NAME : checkUserName(requireString(source, 'to'), '/to');
    const subject = checkSubject(requireString(source, 'subject'), '/subject');
    const body = checkBody(requireString(source, 'body'), '/body');
    const rawTimestamp = requireString(source, 'timestamp');
    const millis = Date.parse(rawTimestamp);
    if (!RFC_3339.test(rawTimestamp) || Number.isNaN(millis)) {
      throw new BadRequestError('message.import-line-invalid', 'timestamp must be an RFC 3339 date-time');
    }
    let replyToLine: number | null = null;
    if (source.replyTo !== undefined) {
      const line = source.replyTo;
      if (typeof line !== 'number' || !Number.isInteger(line) || line < 1 || line >= lineNumber) {
        throw new BadRequestError('message.import-line-invalid', 'replyTo must be the line number of an earlier line');
      }
      if (idsByLine[line] === undefined && !uncommittedLines.has(line))
        throw new BadRequestError('message.import-line-invalid', `replyTo ${line} is not a message line`);
      replyToLine = line;
    }
    const network = source.ftn === undefined ? {} : checkNetwork(source.ftn, '/ftn');
    return {
      lineNumber,
      replyToLine,
      row: {
        uuid: messageUuid(),
        areaTag,
        fromUserId: null,
        fromUserName: from,
        toUserName: to,
        subject,
        body,
        timestamp: new Date(millis).toISOString(),
        network: JSON.stringify(network),
      },
    };
  }

  try {
    for await (const text of lines) {
      lineNumber += 1;
      if (text.trim() === '') continue;
      try {
        batch.push(parseLine(text));
        uncommittedLines.add(lineNumber);
      } catch (error) {
        if (!(error instanceof BadRequestError)) throw error;
        // Whatever was committing goes in first: the error counts it.
        await committing;
        throw new MessageImportError(lineNumber, error.detail, imported);
      }
      if (batch.length >= batchSize) await commitInTurn();
    }
    await commitInTurn();
    await committing;
  } finally {
    // Batches committed before a bad line stay, so the statistics must follow them too.
    await committing.catch(() => {});
    if (imported > 0) await bulkWrite.finish();
  }
  return { imported };
}
