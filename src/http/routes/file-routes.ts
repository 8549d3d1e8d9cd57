import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import { BadRequestError, BaudError, RangeNotSatisfiableError, UnsupportedMediaTypeError } from '../../errors.js';
import { contentTypeForFileName } from '../../files/file-name.js';
import { areaFileListId, fileSearchListId, UPLOAD_FIELD_NAMES, type UploadPart } from '../../files/file-service.js';
import { apiMountOf } from '../api-prefix.js';
import { isMultipartFormData } from '../content-type.js';
import type { CursorCodec } from '../cursor-codec.js';
import { attachmentDisposition, ifNoneMatchHits, rangeOutcome } from '../download-headers.js';
import {
  ListEnvelope,
  ListQuery,
  listPageSender,
  StripAnsiQuery,
  shouldStripAnsi,
  wholeListReply,
} from '../pagination.js';
import { ProblemResponses, SearchAreaGlob, SearchQ, SearchSort } from '../schemas.js';
import {
  closeUnfinishedUpload,
  guardUploadBody,
  LINGER_MAX_BYTES,
  LINGER_MS,
  type UploadBodyGuard,
  uploadBodyTooLarge,
} from '../upload-body-guard.js';

const FileArea = Type.Object(
  {
    areaTag: Type.String(),
    name: Type.String(),
    desc: Type.String(),
    storageTag: Type.String({ description: 'Where uploads to this area are stored.' }),
    fileCount: Type.Integer(),
  },
  {
    $id: 'FileArea',
    examples: [
      {
        areaTag: 'uploads',
        name: 'Uploads',
        desc: 'New files, checked by the sysop',
        storageTag: 'main',
        fileCount: 128,
      },
    ],
  },
);

/** What the examples of the file answers show. */
const FILE_EXAMPLE = {
  fileId: 42,
  areaTag: 'uploads',
  fileName: 'modem_drivers-v2.zip',
  desc: 'Courier drivers',
  descLong: 'US Robotics Courier drivers, v2.',
  byteSize: 183_204,
  uploadTimestamp: '2026-11-24T15:51:03.763Z',
  uploadByUsername: 'alice',
  dlCount: 3,
  sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  archiveType: 'application/zip',
  hashTags: ['hardware', 'modems'],
  estReleaseYear: 1994,
};

const FileRecord = Type.Object(
  {
    fileId: Type.Integer(),
    areaTag: Type.String(),
    fileName: Type.String(),
    desc: Type.String({ description: 'Short description ("" when none).' }),
    descLong: Type.String({ description: 'Long description ("" when none).' }),
    byteSize: Type.Integer(),
    uploadTimestamp: Type.String({ format: 'date-time' }),
    uploadByUsername: Type.Union([Type.String(), Type.Null()], {
      description: "Null when the uploader's account is gone or the operator imported the file.",
    }),
    dlCount: Type.Integer({ description: 'Completed full downloads.' }),
    sha256: Type.String({ description: 'Lower-case hex SHA-256 of the content; also the download ETag.' }),
    archiveType: Type.Union([Type.String(), Type.Null()], {
      description: 'MIME type of the archive format found by magic bytes, or null.',
    }),
    hashTags: Type.Array(Type.String()),
    estReleaseYear: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'FileRecord', examples: [FILE_EXAMPLE] },
);

const FoundFile = Type.Object(
  {
    ...FileRecord.properties,
    snippet: Type.String({
      description: 'At most 200 characters of the descriptions as plain text around the first hit, hits in « ».',
    }),
  },
  {
    $id: 'FoundFile',
    examples: [{ ...FILE_EXAMPLE, snippet: '«Courier» drivers US Robotics «Courier» drivers, v2.' }],
  },
);

const FileSearchQuery = Type.Object({
  ...ListQuery.properties,
  q: SearchQ,
  areaTag: SearchAreaGlob,
  sort: SearchSort,
});

const AreaTagParams = Type.Object({ areaTag: Type.String({ minLength: 1, maxLength: 64 }) });
// fileId is a PostgreSQL `integer`: a larger id is refused here (400) instead of failing in the query (500).
const MAX_FILE_ID = 2_147_483_647;
const FileIdParams = Type.Object({ fileId: Type.Integer({ minimum: 1, maximum: MAX_FILE_ID }) });

// Documentation only: the body is streamed by the handler, never parsed into `request.body`
// (which fastify validates as null, hence the 'null' member).
const UploadBody = Type.Unsafe<unknown>({
  type: ['object', 'null'],
  required: ['file'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'The file (at most fileBase.maxUploadBytes).' },
    desc: { type: 'string', description: "Short description; overrides the archive's FILE_ID.DIZ." },
    hashTags: { type: 'string', description: 'Comma-separated tags, `#` optional.' },
  },
  examples: [{ file: '(the bytes of modem_drivers.zip)', desc: 'Courier drivers', hashTags: 'hardware, modems' }],
});

const BinaryContent = { schema: { type: 'string', format: 'binary' } };

/** Form field value bytes at most (desc, hashTags), and form fields at most. */
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_FIELDS = 8;
// busboy's own limit on one part's header block (Content-Disposition with the file name, Content-Type).
const MAX_PART_HEADER_BYTES = 80 * 1024;

/**
 * Bytes a valid upload body may hold besides the file: the accepted form fields at their
 * limit, a header block per part, and the boundary lines (1 KiB is ample for RFC 2046's
 * 70-character boundaries) — 369 KiB. A longer body cannot be a valid upload, so it is refused
 * by its Content-Length before a byte is read, or cut off as soon as its byte count passes.
 */
export const UPLOAD_ENVELOPE_ALLOWANCE_BYTES =
  UPLOAD_FIELD_NAMES.size * MAX_FIELD_BYTES + (UPLOAD_FIELD_NAMES.size + 1) * MAX_PART_HEADER_BYTES + 1024;

// Errors of @fastify/multipart that mean "the client sent the wrong shape", not "too large".
const SHAPE_ERROR_CODES: ReadonlySet<string> = new Set([
  'FST_FILES_LIMIT',
  'FST_FIELDS_LIMIT',
  'FST_PARTS_LIMIT',
  'FST_PROTO_VIOLATION',
  'FST_MP_PREMATURE_CLOSE',
]);

/**
 * Adapts @fastify/multipart's part iterator to the service's `UploadPart`s, and tells which
 * errors came from the multipart parser (busboy raises plain errors for a malformed or
 * truncated body, through the iterator or the file stream) so they become 400, not 500.
 * When `guard` breaks the body off (too large, idle), the part being read fails with its error.
 */
function multipartUpload(request: FastifyRequest, guard: UploadBodyGuard) {
  const parserErrors = new WeakSet<object>();
  // The file stream busboy fed: when it failed, its error is the parser's, not ours.
  let lastFile: Readable | null = null;
  const noteParserError = (error: unknown) => {
    if (typeof error === 'object' && error !== null && !('status' in error)) parserErrors.add(error);
  };
  // A broken-off body sends busboy nothing more: the file stream it feeds must fail instead of waiting.
  guard.broken.catch((error: Error) => lastFile?.destroy(error));
  async function* parts(): AsyncGenerator<UploadPart> {
    const iterator = request.parts()[Symbol.asyncIterator]();
    try {
      for (;;) {
        // Raced with the guard for the same reason: after a break-off the next part never comes.
        const next = await Promise.race([iterator.next(), guard.broken]);
        if (next.done) return;
        const part = next.value;
        if (part.type === 'file') {
          lastFile = part.file;
          yield {
            kind: 'file',
            fieldName: part.fieldname,
            fileName: part.filename ?? '',
            stream: part.file,
          };
        } else {
          yield {
            kind: 'field',
            fieldName: part.fieldname,
            value: typeof part.value === 'string' ? part.value : String(part.value),
            isTruncated: part.valueTruncated,
          };
        }
      }
    } catch (error) {
      noteParserError(error);
      throw error;
    }
  }
  return {
    parts: parts(),
    translate(error: unknown): unknown {
      // Our own errors (413 from the byte limit, 409, 400 …) also destroy the file stream: keep them.
      if (error instanceof BaudError) return error;
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && SHAPE_ERROR_CODES.has(code)) {
        return new BadRequestError(
          'file.invalid-upload',
          'The multipart body must hold one "file" part and at most the desc and hashTags fields.',
        );
      }
      if (typeof code === 'string' && code.startsWith('FST_')) return error;
      // A file stream busboy failed before our pipeline attached surfaces as a premature close.
      const isParserError =
        typeof error === 'object' &&
        error !== null &&
        (parserErrors.has(error) ||
          (lastFile !== null && lastFile.errored !== null) ||
          code === 'ERR_STREAM_PREMATURE_CLOSE');
      if (isParserError) {
        return new BadRequestError('file.invalid-upload', 'The multipart body is malformed or incomplete.');
      }
      return error;
    },
  };
}

/**
 * File base routes (spec 4.4): areas, file lists and records, streamed upload and download.
 * Registered as an encapsulated plugin so the multipart parser — bounded by
 * `fileBase.maxUploadBytes` and the upload body guard, not by the JSON `bodyLimit` — exists
 * only here.
 */
export async function fileRoutes(
  parent: FastifyInstance,
  options: { board: Board; cursors: CursorCodec },
): Promise<void> {
  const { board, cursors } = options;
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const sendAreaPage = listPageSender();
  const sendSearchPage = listPageSender();
  const uploadBodyLimits = {
    maxBytes: board.config.fileBase.maxUploadBytes + UPLOAD_ENVELOPE_ALLOWANCE_BYTES,
    idleTimeoutSeconds: board.config.contentServers.web.uploadIdleTimeoutSeconds,
  };
  await app.register(multipart, {
    limits: {
      // The storage counts the file's bytes and fails at the first one over the limit. busboy's
      // own limit would only stop passing bytes on, silently, and read on to the end of the part.
      fileSize: Number.POSITIVE_INFINITY,
      files: 1,
      fields: MAX_FIELDS,
      fieldSize: MAX_FIELD_BYTES,
      fieldNameSize: 100,
      parts: MAX_FIELDS + 1,
      headerPairs: 100,
    },
  });

  app.get(
    '/files/areas',
    {
      config: { access: 'public' },
      schema: {
        tags: ['files'],
        summary: 'List the file areas the caller may browse',
        querystring: StripAnsiQuery,
        response: { 200: ListEnvelope(FileArea), ...ProblemResponses() },
      },
    },
    async (request) => wholeListReply(await board.files.listAreas(request.caller, shouldStripAnsi(request.query))),
  );

  app.get(
    '/files/areas/:areaTag',
    {
      config: { access: 'public' },
      schema: {
        tags: ['files'],
        summary: 'File area detail',
        params: AreaTagParams,
        querystring: StripAnsiQuery,
        response: { 200: FileArea, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => board.files.getArea(request.caller, request.params.areaTag, shouldStripAnsi(request.query)),
  );

  app.get(
    '/files/search',
    {
      config: { access: 'public' },
      schema: {
        tags: ['files'],
        summary: 'Search files',
        description:
          'Full-text search of the file names, descriptions and hash tags of every area you may browse ' +
          '(anonymous callers: the public areas), newest or most relevant first, keyset-paginated; the same query language as ' +
          'message search.',
        querystring: FileSearchQuery,
        response: { 200: ListEnvelope(FoundFile), ...ProblemResponses(503) },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const paging = { list: fileSearchListId(query), cursors };
      return sendSearchPage(request, reply, paging, (page, shouldStrip) =>
        board.files.searchFiles(request.caller, query, page, shouldStrip),
      );
    },
  );

  app.get(
    '/files/areas/:areaTag/files',
    {
      config: { access: 'public' },
      schema: {
        tags: ['files'],
        summary: 'List the files of an area, newest first',
        params: AreaTagParams,
        querystring: ListQuery,
        response: { 200: ListEnvelope(FileRecord), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { areaTag } = request.params;
      const paging = { list: areaFileListId(areaTag), cursors };
      return sendAreaPage(request, reply, paging, (page, shouldStrip) =>
        board.files.listAreaFiles(request.caller, areaTag, page, shouldStrip),
      );
    },
  );

  app.get(
    '/files/:fileId',
    {
      config: { access: 'public' },
      schema: {
        tags: ['files'],
        summary: 'File record',
        params: FileIdParams,
        querystring: StripAnsiQuery,
        response: { 200: FileRecord, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => board.files.getFile(request.caller, request.params.fileId, shouldStripAnsi(request.query)),
  );

  app.post(
    '/files/areas/:areaTag',
    {
      config: { access: 'public' },
      // Before a single body byte is read: who may upload here, is it multipart at all, and
      // does it announce more than an upload may hold.
      preParsing: async (request, _reply, payload) => {
        board.files.assertCanUpload(request.caller, (request.params as { areaTag: string }).areaTag);
        if (!isMultipartFormData(request.headers['content-type'])) {
          throw new UnsupportedMediaTypeError(
            'request.unsupported-media-type',
            'Upload with Content-Type multipart/form-data.',
          );
        }
        if (Number(request.headers['content-length']) > uploadBodyLimits.maxBytes) {
          throw uploadBodyTooLarge(uploadBodyLimits.maxBytes);
        }
        return payload;
      },
      // An answer given before the whole body arrived (refused up front, cut off at a limit, a
      // 400 on the first bad part) ends the connection. `app.inject` has no connection to end.
      onSend: async (request, reply) => {
        const { socket } = request.raw;
        if (!request.raw.complete && socket instanceof Socket) closeUnfinishedUpload(socket, request.raw, reply.raw);
      },
      schema: {
        tags: ['files'],
        summary: 'Upload a file (multipart/form-data, streamed)',
        description: [
          'Fields: `file` (required), `desc`, `hashTags`. Same content already in the area → 409 naming the existing fileId.',
          `A body over \`fileBase.maxUploadBytes\` plus ${UPLOAD_ENVELOPE_ALLOWANCE_BYTES} bytes for the form fields and`,
          'multipart framing → 413: at once when its Content-Length says so, else as soon as that many bytes arrived.',
          'A file over `fileBase.maxUploadBytes` → 413. An upload that sends nothing for',
          '`contentServers.web.uploadIdleTimeoutSeconds` → 408. After an answer given before the whole body arrived,',
          `the server closes the connection (what the client sends meanwhile is dropped, for at most ${LINGER_MS / 1000} s`,
          `and ${LINGER_MAX_BYTES / 1024} KiB); nothing of a refused upload is kept.`,
        ].join(' '),
        params: AreaTagParams,
        querystring: StripAnsiQuery,
        body: { content: { 'multipart/form-data': { schema: UploadBody } } },
        response: {
          201: {
            description: 'Created; Location names the new file record, shown as GET /files/{fileId} shows it.',
            headers: { location: { type: 'string' } },
            content: { 'application/json': { schema: FileRecord } },
          },
          ...ProblemResponses(401, 403, 404, 408, 409, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const guard = guardUploadBody(request.raw, uploadBodyLimits);
      const upload = multipartUpload(request, guard);
      try {
        const record = await board.files.upload(
          request.caller,
          request.params.areaTag,
          upload.parts,
          shouldStripAnsi(request.query),
        );
        reply.code(201).header('location', `${apiMountOf(request).prefix}/files/${record.fileId}`);
        return record;
      } catch (error) {
        guard.halt();
        throw upload.translate(error);
      } finally {
        guard.stop();
      }
    },
  );

  app.get(
    '/files/:fileId/download',
    {
      config: { access: 'public' },
      schema: {
        tags: ['files'],
        summary: 'Download the file (streamed; single byte ranges supported)',
        params: FileIdParams,
        response: {
          200: { description: 'The whole file.', content: { 'application/octet-stream': BinaryContent } },
          206: {
            description: 'One byte range (Content-Range).',
            content: { 'application/octet-stream': BinaryContent },
          },
          304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' },
          ...ProblemResponses(401, 403, 404, 416),
        },
      },
    },
    async (request, reply) => {
      const file = await board.files.downloadableFile(request.caller, request.params.fileId);
      const etag = `"${file.sha256}"`;
      reply.header('etag', etag).header('accept-ranges', 'bytes');
      if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send(null);
      const ifRange = request.headers['if-range'];
      const outcome = rangeOutcome(
        request.headers.range,
        typeof ifRange === 'string' ? ifRange : undefined,
        etag,
        file.byteSize,
      );
      if (outcome.kind === 'unsatisfiable') {
        throw new RangeNotSatisfiableError(
          'file.range-not-satisfiable',
          `The range is outside the file's ${file.byteSize} bytes.`,
          file.byteSize,
        );
      }
      const range = outcome.kind === 'partial' ? outcome.range : undefined;
      const stream = await board.files.openContent(file, range, request.log);
      reply
        .type(contentTypeForFileName(file.fileName))
        .header('content-disposition', attachmentDisposition(file.fileName))
        .header('content-length', String(range ? range.end - range.start + 1 : file.byteSize));
      if (range) {
        reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.byteSize}`);
      } else if (request.method === 'GET') {
        // Counted when the last byte was handed to the socket, so aborted downloads do not count.
        reply.raw.once('finish', () => {
          board.files.recordDownload(request.caller, file).catch((error: unknown) => {
            request.log.error({ err: error, fileId: file.fileId }, 'could not count a download');
          });
        });
      }
      return reply.send(stream);
    },
  );
}
