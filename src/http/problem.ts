import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BadRequestError,
  BaudError,
  type FieldError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../errors.js';
import { API_PREFIX, apiMountOf } from './api-prefix.js';
import { answerHeaders, BASELINE_HEADERS } from './response-headers.js';

/** The RFC 7807 body every failure answers with. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: readonly FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

// A path echoed into a detail is cut here: a 10,000-character path need not come back whole.
const MAX_ECHOED_PATH = 200;

function echoedPath(url: string): string {
  const path = url.split('?')[0] ?? url;
  return path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}…` : path;
}

/**
 * The problem body for `status`. Its `type` lives under `prefix`, the API prefix the request came
 * in on (an ENiGMA½ client sees ENiGMA½'s); baud's when there is no request to ask.
 */
export function problemFor(status: number, detail: string, prefix = API_PREFIX): Problem {
  return { type: `${prefix}/errors/${status}`, title: STATUS_CODES[status] ?? 'Error', status, detail };
}

/** Writes `problem` as the reply (headers included). */
export function sendProblem(reply: FastifyReply, problem: Problem, headers: Readonly<Record<string, string>> = {}) {
  return reply.code(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(problem);
}

interface AjvError {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

const VALIDATION_CONTEXT_POINTER: Readonly<Record<string, string>> = {
  body: '/body',
  querystring: '/query',
  params: '/path',
  headers: '/headers',
};

/**
 * One field error per failure a client can act on. A union (`string` or `null`) fails as one
 * error per member plus an `anyOf` summary; those fold into one "must be string or null".
 */
function foldUnionErrors(items: readonly AjvError[]): AjvError[] {
  const unionPaths = new Set(items.filter((item) => item.keyword === 'anyOf').map((item) => item.instancePath));
  if (unionPaths.size === 0) return [...items];
  const folded: AjvError[] = [];
  for (const item of items) {
    if (!unionPaths.has(item.instancePath)) folded.push(item);
    else if (item.keyword === 'anyOf') {
      const alternatives = items.filter((other) => other.instancePath === item.instancePath && other !== item);
      const types = alternatives.map((other) => other.params.type);
      const isTypeUnion = types.length > 0 && types.every((type) => typeof type === 'string');
      folded.push({
        ...item,
        message: isTypeUnion ? `must be ${types.join(' or ')}` : 'matches none of the allowed forms',
      });
    }
  }
  return folded;
}

/** Maps fastify's validation errors to `{ pointer, message }` entries pointing into the request. */
function fieldErrors(error: FastifyError): FieldError[] {
  const base = VALIDATION_CONTEXT_POINTER[error.validationContext ?? 'body'] ?? '/body';
  return foldUnionErrors((error.validation ?? []) as AjvError[]).map((item) => {
    let pointer = `${base}${item.instancePath}`;
    let message = item.message ?? 'is invalid';
    if (item.keyword === 'required' && typeof item.params.missingProperty === 'string') {
      pointer += `/${item.params.missingProperty}`;
      message = 'is required';
    } else if (item.keyword === 'additionalProperties' && typeof item.params.additionalProperty === 'string') {
      pointer += `/${item.params.additionalProperty}`;
      message = 'is not a known field';
    }
    return { pointer, message };
  });
}

/** Turns an error fastify or its plugins raised into the matching BaudError, when one fits. */
function fromFrameworkError(error: FastifyError): BaudError | null {
  if (error.validation) {
    const errors = fieldErrors(error);
    const first = errors[0];
    return new BadRequestError(
      first ? `${first.pointer.slice(1)} ${first.message}` : 'The request is invalid.',
      errors,
    );
  }
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  const detailByCode: Readonly<Record<string, string>> = {
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'This content type is not accepted here.',
    FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is too large.',
    FST_ERR_CTP_EMPTY_JSON_BODY: 'The JSON body is empty.',
    FST_ERR_CTP_INVALID_JSON_BODY: 'The body is not valid JSON.',
  };
  const detail =
    detailByCode[error.code] ?? (error instanceof SyntaxError ? 'The body is not valid JSON.' : error.message);
  if (status === 413) return new PayloadTooLargeError(detail);
  if (status === 415) return new UnsupportedMediaTypeError(detail);
  return new BadRequestError(detail);
}

/**
 * Installs the one error path: every thrown error, every unknown route and every wrong
 * method answers with problem+json. Unexpected errors are logged once with the request id and
 * answered with a bare 500 whose `instance` is that id.
 */
export function installProblemHandlers(app: FastifyInstance, allowedMethods: (url: string) => string[]): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof BaudError ? error : fromFrameworkError(error);
    if (known) {
      const problem = problemFor(known.status, known.detail, apiMountOf(request).prefix);
      if (known instanceof BadRequestError && known.errors.length > 0) problem.errors = known.errors;
      return sendProblem(reply, problem, known.headers);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendProblem(reply, {
      ...problemFor(
        500,
        'An unexpected error occurred; the request id identifies it in the log.',
        apiMountOf(request).prefix,
      ),
      instance: request.id,
    });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const allowed = allowedMethods(request.url);
    // A route that exists for this very method may still find nothing (the docs' static files).
    const isMethodWrong = allowed.length > 0 && !allowed.includes(request.method);
    const error = isMethodWrong
      ? new MethodNotAllowedError(request.method, allowed)
      : new NotFoundError(`No resource at ${echoedPath(request.url)}.`);
    return sendProblem(reply, problemFor(error.status, error.detail, apiMountOf(request).prefix), error.headers);
  });
}

/**
 * Fastify's `frameworkErrors`: errors the router raises before any route or hook runs. A path
 * parameter longer than the router accepts names no resource that can exist (tags are at most
 * 64 characters, ids and uuids shorter still), so it is a 404 like any unknown path, not a 414.
 */
export function sendFrameworkProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { prefix } = apiMountOf(request);
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? problemFor(404, `No resource at ${echoedPath(request.url)}.`, prefix)
      : problemFor(400, 'The URL is not valid: a percent sign must start an escape such as %2F.', prefix);
  // Answered before any hook runs, so the hooks' headers are set here.
  return sendProblem(reply, problem, { ...answerHeaders(request), 'x-request-id': request.id });
}

const CLIENT_ERRORS: Readonly<Record<string, { status: number; detail: string }>> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request did not arrive in time.' },
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'The request headers are too large.' },
};

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes before there was a
 * request (malformed request line, headers too large, headers too slow). The answer is written
 * to the socket by hand, as problem+json like every other answer, and the connection closed.
 */
export function writeClientErrorProblem(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, detail: 'The request is not valid HTTP.' };
  const body = JSON.stringify(problemFor(known.status, known.detail));
  if (socket.writable) {
    const headers = {
      'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
      'content-length': String(Buffer.byteLength(body)),
      ...BASELINE_HEADERS,
      connection: 'close',
    };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\n${head}\r\n\r\n${body}`);
  }
  socket.destroy();
}
