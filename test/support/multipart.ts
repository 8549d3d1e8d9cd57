import { randomBytes } from 'node:crypto';

/** One part of a multipart/form-data body: a field, or a file when `fileName` is given. */
export interface FormPart {
  readonly name: string;
  readonly value: string | Uint8Array;
  /** Makes the part a file part (`filename="…"` in its Content-Disposition). */
  readonly fileName?: string;
  readonly contentType?: string;
}

export interface MultipartBody {
  readonly body: Buffer;
  /** The request's `Content-Type`, boundary included. */
  readonly contentType: string;
}

function quote(value: string): string {
  // What browsers do: escape quotes, keep everything else (UTF-8) as is.
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function partHeader(part: Omit<FormPart, 'value'>, boundary: string): string {
  const disposition =
    part.fileName === undefined
      ? `form-data; name="${quote(part.name)}"`
      : `form-data; name="${quote(part.name)}"; filename="${quote(part.fileName)}"`;
  const type = part.contentType ?? (part.fileName === undefined ? undefined : 'application/octet-stream');
  return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n`;
}

export function newBoundary(): string {
  return `----baudtest${randomBytes(12).toString('hex')}`;
}

/** Builds a complete multipart/form-data body from `parts`, in order. */
export function buildMultipart(parts: readonly FormPart[], boundary = newBoundary()): MultipartBody {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(partHeader(part, boundary), 'utf8'));
    chunks.push(typeof part.value === 'string' ? Buffer.from(part.value, 'utf8') : Buffer.from(part.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * The bytes around one streamed file part (for bodies too large to build in memory):
 * send `head`, then the file's bytes, then `tail`.
 */
export function fileEnvelope(
  fileName: string,
  fields: readonly FormPart[] = [],
  boundary = newBoundary(),
): { head: Buffer; tail: Buffer; contentType: string } {
  const before = buildMultipart(fields, boundary).body;
  // Drop the closing delimiter of the fields-only body; the file part follows.
  const fieldsPart = before.subarray(0, before.length - `--${boundary}--\r\n`.length);
  const head = Buffer.concat([fieldsPart, Buffer.from(partHeader({ name: 'file', fileName }, boundary))]);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { head, tail, contentType: `multipart/form-data; boundary=${boundary}` };
}
