import { cutToCodePoints } from '../text/cut-code-points.js';
import type { FileRecord } from './file-store.js';

/**
 * Code points of `desc` and of `descLong` a `file.created` event carries at most. An NFO can
 * be 64 KiB, and an event is held for every stream that has not taken it yet and sent to every
 * webhook: the event is news, `GET /files/{fileId}` has the whole record.
 */
export const MAX_EVENT_DESCRIPTION_CODE_POINTS = 2048;

/** What a `file.created` event carries: the file record with its descriptions cut, and `isTruncated` saying whether they were. */
export function fileCreatedEventData(record: FileRecord): FileRecord & { readonly isTruncated: boolean } {
  const desc = cutToCodePoints(record.desc, MAX_EVENT_DESCRIPTION_CODE_POINTS);
  const descLong = cutToCodePoints(record.descLong, MAX_EVENT_DESCRIPTION_CODE_POINTS);
  return { ...record, desc, descLong, isTruncated: desc !== record.desc || descLong !== record.descLong };
}
