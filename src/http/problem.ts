import { STATUS_CODES } from 'node:http';
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
import { API_PREFIX } from './api-prefix.js';

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

export function problemFor(status: number, detail: string): Problem {
  return { type: `${API_PREFIX}/errors/${status}`, title: STATUS_CODES[status] ?? 'Error', status, detail };
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

/** Maps fastify's validation errors to `{ pointer, message }` entries pointing into the request. */
function fieldErrors(error: FastifyError): FieldError[] {
  const base = VALIDATION_CONTEXT_POINTER[error.validationContext ?? 'body'] ?? '/body';
  return ((error.validation ?? []) as AjvError[]).map((item) => {
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
      const problem = problemFor(known.status, known.detail);
      if (known instanceof BadRequestError && known.errors.length > 0) problem.errors = known.errors;
      return sendProblem(reply, problem, known.headers);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendProblem(reply, {
      ...problemFor(500, 'An unexpected error occurred; the request id identifies it in the log.'),
      instance: request.id,
    });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const allowed = allowedMethods(request.url);
    const error =
      allowed.length > 0
        ? new MethodNotAllowedError(request.method, allowed)
        : new NotFoundError(`No resource at ${request.url.split('?')[0]}.`);
    return sendProblem(reply, problemFor(error.status, error.detail), error.headers);
  });
}
