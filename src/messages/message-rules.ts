import { BadRequestError } from '../errors.js';

/** decisions.md "Messages": limits shared by posting over HTTP and the operator import. */
export const MAX_SUBJECT_CODE_POINTS = 72;
export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_USER_NAME_CHARS = 36;
export const DEFAULT_TO_USER_NAME = 'All';
/** messageIds are PostgreSQL `integer`s: a larger number cannot name a message (and would make PostgreSQL fail). */
export const MAX_MESSAGE_ID = 2_147_483_647;

/** The order of an area's message list: `oldest` first (v1, the default) or `newest` first. */
export type MessageOrder = 'oldest' | 'newest';

function invalid(pointer: string, message: string): BadRequestError {
  const field = pointer.split('/').pop() ?? pointer;
  return new BadRequestError('request.invalid-body', `${field} ${message}`, [{ pointer, message }]);
}

const codePoints = (text: string) => [...text].length;

/** PostgreSQL text cannot hold U+0000; refusing it on both dialects keeps them alike (400, not a 500). */
function refuseNul(text: string, pointer: string): void {
  if (text.includes('\u0000')) throw invalid(pointer, 'must not contain NUL characters');
}

/** The subject as stored: trimmed, then 1..72 Unicode code points. */
export function checkSubject(raw: string, pointer: string): string {
  const subject = raw.trim();
  if (subject === '') throw invalid(pointer, 'must not be empty');
  refuseNul(subject, pointer);
  if (codePoints(subject) > MAX_SUBJECT_CODE_POINTS) {
    throw invalid(pointer, `must be at most ${MAX_SUBJECT_CODE_POINTS} characters`);
  }
  return subject;
}

/**
 * The body as given (never trimmed: leading spaces can be art). It must contain something
 * other than whitespace and be at most 64 KiB of UTF-8 — the signature appended on posting
 * does not count against the limit.
 */
export function checkBody(raw: string, pointer: string): string {
  if (raw.trim() === '') throw invalid(pointer, 'must not be empty');
  if (Buffer.byteLength(raw, 'utf8') > MAX_BODY_BYTES) {
    throw invalid(pointer, `must be at most ${MAX_BODY_BYTES} bytes of UTF-8`);
  }
  refuseNul(raw, pointer);
  return raw;
}

/** A from/to name: trimmed, at most 36 characters; an absent or blank name is `fallback` (if any). */
export function checkUserName(raw: string | undefined, pointer: string, fallback?: string): string {
  const name = (raw ?? '').trim();
  if (name === '') {
    if (fallback !== undefined) return fallback;
    throw invalid(pointer, 'must not be empty');
  }
  if (codePoints(name) > MAX_USER_NAME_CHARS) {
    throw invalid(pointer, `must be at most ${MAX_USER_NAME_CHARS} characters`);
  }
  refuseNul(name, pointer);
  return name;
}
