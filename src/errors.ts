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
  #headers: Readonly<Record<string, string>>;

  /** `headers`: the response headers the status needs (`WWW-Authenticate`, `Retry-After`, `Allow`). */
  constructor(
    readonly detail: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.#headers = headers;
  }

  /** Extra response headers: the ones the status needs, and any added with `withHeaders`. */
  get headers(): Readonly<Record<string, string>> {
    return this.#headers;
  }

  /**
   * Adds response headers that say more about this one answer than its status does (the
   * RateLimit headers of a refused login), and returns the error, to be thrown:
   * `throw new UnauthorizedError('…').withHeaders(extra)`.
   */
  withHeaders(extra: Readonly<Record<string, string>>): this {
    this.#headers = { ...this.#headers, ...extra };
    return this;
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
  constructor(detail = 'Authentication is required.', bearerError?: 'invalid_token') {
    super(detail, {
      'www-authenticate': bearerError ? `Bearer realm="baud", error="${bearerError}"` : 'Bearer realm="baud"',
    });
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
  constructor(method: string, allowed: readonly string[]) {
    super(`${method} is not allowed here; use ${allowed.join(', ')}.`, { allow: allowed.join(', ') });
  }
}

export class RequestTimeoutError extends BaudError {
  override readonly name = 'RequestTimeoutError';
  readonly status = 408;
  constructor(detail: string) {
    // The rest of the body may still be on its way: closing is the only way not to read it.
    super(detail, { connection: 'close' });
  }
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
  /** `sizeBytes`: the whole representation's length, sent as `Content-Range: bytes *\/size` (RFC 9110 §15.5.17). */
  constructor(detail: string, sizeBytes: number) {
    super(detail, { 'content-range': `bytes */${sizeBytes}` });
  }
}

export class ServiceUnavailableError extends BaudError {
  override readonly name = 'ServiceUnavailableError';
  readonly status = 503;
  /** `shouldCloseConnection`: a node going down closes; one busy for a moment keeps the connection. */
  constructor(detail: string, retryAfterSeconds: number, { shouldCloseConnection = true } = {}) {
    super(detail, {
      'retry-after': String(retryAfterSeconds),
      ...(shouldCloseConnection ? { connection: 'close' } : {}),
    });
  }
}

/** Seconds as Retry-After and RateLimit-Reset count them: whole, rounded up, at least 1. */
export const wholeSecondsIn = (seconds: number) => Math.max(1, Math.ceil(seconds));

export class TooManyRequestsError extends BaudError {
  override readonly name = 'TooManyRequestsError';
  readonly status = 429;
  constructor(detail: string, retryAfterSeconds: number) {
    super(detail, { 'retry-after': String(wholeSecondsIn(retryAfterSeconds)) });
  }
}
