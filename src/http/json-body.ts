import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BadRequestError, RequestTimeoutError } from '../errors.js';
import { isMultipartFormData } from './content-type.js';

/**
 * Deepest nesting of arrays and objects a JSON body may have. No request of the API needs more
 * than 3; a bound keeps every later walk over the body (validation, the NUL guard) shallow.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether JSON text nests arrays/objects deeper than `maxDepth`. One pass over the characters,
 * no recursion and no parsing, so a body of a million `[` costs a loop, not the stack.
 */
export function isNestedDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let isInString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (isInString) {
      if (char === 0x5c /* \ */) index += 1;
      else if (char === 0x22 /* " */) isInString = false;
    } else if (char === 0x22) {
      isInString = true;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      depth -= 1;
    }
  }
  return false;
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * JSON bodies, the only kind outside uploads: nesting bounded (400 beyond `MAX_JSON_DEPTH`), `__proto__` and `constructor`
 * keys refused (Fastify's secure parser), and a whole non-upload body must arrive within
 * `bodyTimeoutSeconds` of the headers — otherwise 408 and the connection closes. Without that a
 * client that announces a body and never sends it holds a connection for the whole request
 * timeout (600 s by default, sized for uploads). Uploads have their own idle limit.
 */
export function installJsonBody(app: FastifyInstance, options: { bodyTimeoutSeconds: number }): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Every body of the API is JSON (uploads bring their own multipart parser): text/plain would
  // only turn into a confusing "body must be object"; without a parser it is a clear 415.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // A wrong method or unknown path is answered 405/404 whatever its body says; and a client
    // that labels every request JSON may send an empty one where no body is expected (refresh).
    const isBodyIgnored = request.is404 || (body === '' && request.routeOptions.schema?.body === undefined);
    if (isBodyIgnored) {
      done(null, undefined);
      return;
    }
    if (isNestedDeeperThan(body as string, MAX_JSON_DEPTH)) {
      done(
        new BadRequestError('request.json-too-deep', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`),
        undefined,
      );
      return;
    }
    parseJson(request, body as string, done);
  });

  const bodyTimeoutMs = options.bodyTimeoutSeconds * 1000;
  // Callback style: an async hook would cost every GET a promise for a body it does not have.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!hasBody(request) || isMultipartFormData(request.headers['content-type'])) {
      done(null, payload);
      return;
    }
    const timed = new PassThrough();
    const timer = setTimeout(() => {
      timed.destroy(
        new RequestTimeoutError(
          'request.timeout',
          `The request body did not arrive within ${options.bodyTimeoutSeconds}s.`,
        ),
      );
    }, bodyTimeoutMs);
    const stop = () => clearTimeout(timer);
    payload.once('end', stop);
    reply.raw.once('close', stop);
    payload.once('error', (error) => timed.destroy(error));
    done(null, payload.pipe(timed));
  });
}
