import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BaudError,
  ERROR_CODES,
  type ErrorCode,
  type ErrorCodeOf,
  type FieldError,
  MethodNotAllowedError,
  NotFoundError,
} from '../errors.js';
import { API_PREFIX, apiMountOf } from './api-prefix.js';
import { answerHeaders, BASELINE_HEADERS } from './response-headers.js';

/** The RFC 7807 body every failure answers with. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** What went wrong, for clients to branch on: one of `ERROR_CODES` in `src/errors.ts`. */
  code: ErrorCode;
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
 * The problem body of `error`: its code, the status `ERROR_CODES` gives that code, and its detail
 * (the code's default detail when it has none). Its `type` lives under `prefix`, the API prefix
 * the request came in on (an ENiGMA½ client sees ENiGMA½'s); baud's when there is no request to ask.
 */
export function problemFor(
  { code, detail = ERROR_CODES[code].detail }: { readonly code: ErrorCode; readonly detail?: string },
  prefix = API_PREFIX,
): Problem {
  const { status } = ERROR_CODES[code];
  return { type: `${prefix}/errors/${status}`, title: STATUS_CODES[status] ?? 'Error', status, detail, code };
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

const INVALID_FIELD_CODES: Readonly<Record<string, ErrorCodeOf<400>>> = {
  body: 'request.invalid-body',
  query: 'request.invalid-query',
  path: 'request.invalid-path',
  headers: 'request.invalid-header',
};

/** The code of a 400 about the field at `pointer`: `/query/limit` → `request.invalid-query`. */
export function invalidFieldCode(pointer: string): ErrorCodeOf<400> {
  return INVALID_FIELD_CODES[pointer.split('/')[1] ?? ''] ?? 'request.invalid';
}

/** Where in the request the fields fastify found invalid are: `/body`, `/query` … */
function validatedPart(error: FastifyError): string {
  return VALIDATION_CONTEXT_POINTER[error.validationContext ?? 'body'] ?? '/body';
}

/** Maps fastify's validation errors to `{ pointer, message }` entries pointing into the request. */
function fieldErrors(error: FastifyError): FieldError[] {
  const base = validatedPart(error);
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

/** Fastify's own errors, under baud's codes; the detail is the code's default unless given. */
const FASTIFY_ERRORS: Readonly<Record<string, { readonly code: ErrorCode; readonly detail?: string }>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'request.unsupported-media-type' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'request.body-too-large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'request.invalid-json', detail: 'The JSON body is empty.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'request.invalid-json' },
};

/** What a client is told of an error: a `BaudError`, or one fastify raised put in baud's words. */
interface ClientFault {
  readonly code: ErrorCode;
  /** The code's default detail when absent. */
  readonly detail?: string;
  readonly errors?: readonly FieldError[];
  readonly headers?: Readonly<Record<string, string>>;
  /** Extension members of the body (`otpRequired`). */
  readonly members?: Readonly<Record<string, boolean>>;
}

/** Turns an error fastify or its plugins raised into what the client is told, when it is the client's fault. */
function fromFrameworkError(error: FastifyError): ClientFault | null {
  if (error.validation) {
    const errors = fieldErrors(error);
    const first = errors[0];
    return {
      code: invalidFieldCode(validatedPart(error)),
      detail: first ? `${first.pointer.slice(1)} ${first.message}` : 'The request is invalid.',
      errors,
    };
  }
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  const known = FASTIFY_ERRORS[error.code];
  if (known) return known;
  if (error instanceof SyntaxError) return { code: 'request.invalid-json' };
  // A plugin's own 413 or 415 (multipart's limits) keeps its words; any other client error is a 400.
  if (status === 413) return { code: 'request.body-too-large', detail: error.message };
  if (status === 415) return { code: 'request.unsupported-media-type', detail: error.message };
  return { code: 'request.invalid', detail: error.message };
}

/**
 * Installs the one error path: every thrown error, every unknown route and every wrong
 * method answers with problem+json. Unexpected errors are logged once with the request id and
 * answered with a bare 500 whose `instance` is that id.
 */
export function installProblemHandlers(app: FastifyInstance, allowedMethods: (url: string) => string[]): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { prefix } = apiMountOf(request);
    const fault: ClientFault | null = error instanceof BaudError ? error : fromFrameworkError(error);
    // A 500 of baud's own (a ConfigError, an unwritable storage) is the board's failure, not the
    // request's: its detail is for the log, like any unexpected error's.
    if (fault && ERROR_CODES[fault.code].status !== 500) {
      const problem = problemFor(fault, prefix);
      if (fault.errors && fault.errors.length > 0) problem.errors = fault.errors;
      return sendProblem(reply, { ...problem, ...fault.members }, fault.headers);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendProblem(reply, { ...problemFor({ code: 'server.internal-error' }, prefix), instance: request.id });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const allowed = allowedMethods(request.url);
    // A route that exists for this very method may still find nothing (the docs' static files).
    const isMethodWrong = allowed.length > 0 && !allowed.includes(request.method);
    const error = isMethodWrong
      ? new MethodNotAllowedError('route.method-not-allowed', request.method, allowed)
      : new NotFoundError('route.not-found', `No resource at ${echoedPath(request.url)}.`);
    return sendProblem(reply, problemFor(error, apiMountOf(request).prefix), error.headers);
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
      ? problemFor({ code: 'route.not-found', detail: `No resource at ${echoedPath(request.url)}.` }, prefix)
      : problemFor({ code: 'request.invalid-url' }, prefix);
  // Answered before any hook runs, so the hooks' headers are set here.
  return sendProblem(reply, problem, { ...answerHeaders(request), 'x-request-id': request.id });
}

/** Node's HTTP parser errors, under baud's codes; any other is `request.invalid-http`. */
const CLIENT_ERRORS: Readonly<Record<string, ErrorCode>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'request.timeout',
  HPE_HEADER_OVERFLOW: 'request.headers-too-large',
};

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes before there was a
 * request (malformed request line, headers too large, headers too slow). The answer is written
 * to the socket by hand, as problem+json like every other answer, and the connection closed.
 */
export function writeClientErrorProblem(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem = problemFor({ code: CLIENT_ERRORS[error.code ?? ''] ?? 'request.invalid-http' });
  const body = JSON.stringify(problem);
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
    socket.write(`HTTP/1.1 ${problem.status} ${problem.title}\r\n${head}\r\n\r\n${body}`);
  }
  socket.destroy();
}
