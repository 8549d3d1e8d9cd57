/**
 * Every error the board raises on purpose, declared once with its HTTP status. Services throw
 * these; `src/http/problem.ts` turns them (and everything else) into problem+json, and the
 * CLI prints their `detail` as a one-line error.
 */
export interface FieldError {
  /** JSON pointer into the request, e.g. `/body/subject` or `/query/limit`. */
  readonly pointer: string;
  readonly message: string;
}

export abstract class BaudError extends Error {
  abstract readonly status: number;
  /** Extra response headers the status needs (`WWW-Authenticate`, `Retry-After`, `Allow`). */
  readonly headers: Readonly<Record<string, string>> = {};

  constructor(readonly detail: string) {
    super(detail);
  }
}

export class BadRequestError extends BaudError {
  override readonly name = 'BadRequestError';
  readonly status = 400;
  constructor(
    detail: string,
    readonly errors: readonly FieldError[] = [],
  ) {
    super(detail);
  }
}

export class UnauthorizedError extends BaudError {
  override readonly name = 'UnauthorizedError';
  readonly status = 401;
  override readonly headers: Readonly<Record<string, string>>;
  constructor(detail = 'Authentication is required.', bearerError?: 'invalid_token') {
    super(detail);
    this.headers = {
      'www-authenticate': bearerError ? `Bearer realm="baud", error="${bearerError}"` : 'Bearer realm="baud"',
    };
  }
}

export class ForbiddenError extends BaudError {
  override readonly name = 'ForbiddenError';
  readonly status = 403;
}

export class NotFoundError extends BaudError {
  override readonly name = 'NotFoundError';
  readonly status = 404;
}

export class MethodNotAllowedError extends BaudError {
  override readonly name = 'MethodNotAllowedError';
  readonly status = 405;
  override readonly headers: Readonly<Record<string, string>>;
  constructor(method: string, allowed: readonly string[]) {
    super(`${method} is not allowed here; use ${allowed.join(', ')}.`);
    this.headers = { allow: allowed.join(', ') };
  }
}

export class RequestTimeoutError extends BaudError {
  override readonly name = 'RequestTimeoutError';
  readonly status = 408;
  // The rest of the body may still be on its way: closing is the only way not to read it.
  override readonly headers: Readonly<Record<string, string>> = { connection: 'close' };
}

export class ConflictError extends BaudError {
  override readonly name = 'ConflictError';
  readonly status = 409;
}

export class PayloadTooLargeError extends BaudError {
  override readonly name = 'PayloadTooLargeError';
  readonly status = 413;
}

export class UnsupportedMediaTypeError extends BaudError {
  override readonly name = 'UnsupportedMediaTypeError';
  readonly status = 415;
}

export class RangeNotSatisfiableError extends BaudError {
  override readonly name = 'RangeNotSatisfiableError';
  readonly status = 416;
  override readonly headers: Readonly<Record<string, string>>;
  /** `sizeBytes`: the whole representation's length, sent as `Content-Range: bytes *\/size` (RFC 9110 §15.5.17). */
  constructor(detail: string, sizeBytes: number) {
    super(detail);
    this.headers = { 'content-range': `bytes */${sizeBytes}` };
  }
}

export class ServiceUnavailableError extends BaudError {
  override readonly name = 'ServiceUnavailableError';
  readonly status = 503;
  override readonly headers: Readonly<Record<string, string>>;
  constructor(detail: string, retryAfterSeconds: number) {
    super(detail);
    this.headers = { 'retry-after': String(retryAfterSeconds), connection: 'close' };
  }
}

export class TooManyRequestsError extends BaudError {
  override readonly name = 'TooManyRequestsError';
  readonly status = 429;
  override readonly headers: Readonly<Record<string, string>>;
  constructor(detail: string, retryAfterSeconds: number) {
    super(detail);
    this.headers = { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) };
  }
}
