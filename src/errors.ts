/**
 * Every error the board raises on purpose, declared once: its stable `code` (what clients branch
 * on), the HTTP status it answers with, and its default detail, which docs/api-notes.md "Problem
 * codes" lists as its meaning (a test keeps the two alike). Services throw the classes below,
 * naming a code of the class's status; `src/http/problem.ts` turns them (and everything else)
 * into problem+json carrying the code, and the CLI prints their `detail` as a one-line error.
 */
export const ERROR_CODES = {
  'request.invalid': { status: 400, detail: 'The request is invalid.' },
  'request.invalid-body': { status: 400, detail: 'A field of the body is invalid; `errors` points at each.' },
  'request.invalid-query': { status: 400, detail: 'A query parameter is invalid; `errors` points at each.' },
  'request.invalid-path': { status: 400, detail: 'A path parameter is invalid; `errors` points at each.' },
  'request.invalid-header': { status: 400, detail: 'A request header is invalid; `errors` points at it.' },
  'request.invalid-cursor': { status: 400, detail: 'The cursor is invalid or belongs to another list.' },
  'request.invalid-json': { status: 400, detail: 'The body is not valid JSON.' },
  'request.json-too-deep': { status: 400, detail: 'The JSON body is nested too deep.' },
  'request.invalid-url': {
    status: 400,
    detail: 'The URL is not valid: a percent sign must start an escape such as %2F.',
  },
  'request.invalid-http': { status: 400, detail: 'The request is not valid HTTP.' },
  'request.timeout': { status: 408, detail: 'The request did not arrive in time.' },
  'request.body-too-large': { status: 413, detail: 'The request body is too large.' },
  'request.unsupported-media-type': { status: 415, detail: 'This content type is not accepted here.' },
  'request.headers-too-large': { status: 431, detail: 'The request headers are too large.' },
  'route.not-found': { status: 404, detail: 'No resource at this path.' },
  'route.method-not-allowed': { status: 405, detail: 'The method is not allowed here; `Allow` lists those that are.' },
  'rate-limit.exceeded': { status: 429, detail: 'Too many attempts in this window; wait `Retry-After` seconds.' },
  'server.internal-error': {
    status: 500,
    detail: 'An unexpected error occurred; the request id identifies it in the log.',
  },
  'server.shutting-down': { status: 503, detail: 'The board is shutting down; try again shortly.' },

  'auth.required': { status: 401, detail: 'Authentication is required.' },
  'auth.invalid-credentials': { status: 401, detail: 'The username or password is incorrect.' },
  'auth.unsupported-scheme': { status: 401, detail: 'Only Bearer credentials are accepted.' },
  'auth.invalid-token': { status: 401, detail: 'The access token is invalid or expired.' },
  'auth.invalid-api-key': { status: 401, detail: 'The API key is unknown or revoked.' },
  'auth.refresh-token-missing': { status: 401, detail: 'No refresh token was presented.' },
  'auth.invalid-refresh-token': { status: 401, detail: 'The refresh token is invalid, expired or revoked.' },
  'auth.account-gone': { status: 401, detail: 'The account no longer exists.' },
  'auth.otp-required': {
    status: 401,
    detail: 'Two-factor login is on for this account: send the code of its authenticator app as `otp`.',
  },
  'auth.invalid-otp': { status: 401, detail: 'The one-time code is wrong, expired, or used already.' },
  'auth.password-incorrect': { status: 403, detail: 'The password is incorrect.' },
  'auth.scope-insufficient': { status: 403, detail: "The API key's scope does not allow this request." },
  'access.denied': { status: 403, detail: "The area's or conference's ACS does not let the caller do this." },
  'area.invalid-glob': { status: 400, detail: 'An area glob is invalid, or there are too many of them.' },

  'user.invalid-username': { status: 400, detail: 'The username breaks the rules for usernames.' },
  'user.password-too-short': { status: 400, detail: 'The password is shorter than the board allows.' },
  'user.invalid-group': { status: 400, detail: 'The group name is not valid.' },
  'user.not-found': { status: 404, detail: 'No user has this name.' },
  'user.username-taken': { status: 409, detail: 'The username is taken.' },
  'auth.account-pending': { status: 403, detail: 'The account awaits approval by the sysop.' },
  'registration.closed': { status: 403, detail: 'The board takes no registrations.' },
  'registration.too-many': { status: 429, detail: 'Too many registrations came from this address this hour.' },
  'account.login-session-required': {
    status: 403,
    detail: 'Only a login session may do this: an API key may not.',
  },
  'account.session-not-found': { status: 404, detail: 'The caller has no live login session with this id.' },
  'totp.invalid-code': {
    status: 400,
    detail: "The code is not the authenticator's current code (nor an unused recovery code).",
  },
  'totp.already-enabled': { status: 409, detail: 'Two-factor login is on already: turn it off first.' },
  'totp.not-enrolled': { status: 409, detail: 'There is no enrolment to confirm: enrol first (POST /users/me/totp).' },
  'totp.not-enabled': { status: 409, detail: 'Two-factor login is not on for this account.' },
  'desk.sysops-only': { status: 403, detail: "Only sysops work the sysop's desk." },
  'desk.account-gone': { status: 404, detail: 'The account went away while the desk worked on it.' },
  'desk.not-pending': { status: 409, detail: 'The account is not an application waiting for a decision.' },
  'desk.self-lock': { status: 409, detail: 'A sysop cannot lock their own account.' },

  'api-key.invalid-id': { status: 400, detail: 'The API key id is not a positive integer.' },
  'api-key.invalid-label': { status: 400, detail: 'The API key label is empty or too long.' },
  'api-key.invalid-scope': { status: 400, detail: 'The API key scope is not one baud knows.' },
  'api-key.not-found': { status: 404, detail: 'No API key has this id.' },
  'ssh-key.malformed': {
    status: 400,
    detail:
      'The public key is not one OpenSSH public key line: paste the contents of a .pub file such as ~/.ssh/id_ed25519.pub.',
  },
  'ssh-key.private-key': {
    status: 400,
    detail: 'This is a private key: paste the public key (the .pub file, such as ~/.ssh/id_ed25519.pub) instead.',
  },
  'ssh-key.unsupported-type': {
    status: 400,
    detail:
      'The key type is not accepted: use ssh-ed25519, ecdsa-sha2-nistp256/384/521, or ssh-rsa of 2048 bits or more.',
  },
  'ssh-key.rsa-too-short': { status: 400, detail: 'The RSA key has fewer than 2048 bits.' },
  'ssh-key.too-large': { status: 400, detail: 'The public key is over 16 KiB: paste one line of a .pub file.' },
  'ssh-key.invalid-label': {
    status: 400,
    detail: 'The SSH key label is longer than 100 characters or holds control characters.',
  },
  'ssh-key.not-found': { status: 404, detail: 'The caller has no SSH key with this id.' },
  'ssh-key.duplicate': { status: 409, detail: 'The caller has registered this key already.' },
  'ssh-key.limit-reached': { status: 409, detail: 'The caller has as many SSH keys as allowed.' },

  'message.invalid-reply-target': { status: 400, detail: 'The message replied to is not in this area.' },
  'message.import-line-invalid': { status: 400, detail: 'A line of a message import cannot be imported.' },
  'message.delete-forbidden': { status: 403, detail: 'Only the author or the sysop may delete a message.' },
  'message.conference-not-found': { status: 404, detail: 'No message conference has this tag.' },
  'message.area-not-found': { status: 404, detail: 'No message area has this tag.' },
  'message.not-found': { status: 404, detail: 'No message has this id or uuid, or the caller may not read it.' },
  'message.ids-exhausted': { status: 503, detail: 'The board has used every message id: no message can be posted.' },

  'mail.invalid-reply-target': { status: 400, detail: 'The mail replied to is not a mail of the caller.' },
  'mail.cannot-block-self': { status: 400, detail: 'A user cannot block themselves.' },
  'mail.invalid-netmail-address': {
    status: 400,
    detail: 'The netmail recipient is not `Name@zone:net/node[.point][@network]` in a network of this board.',
  },
  'mail.sender-blocked': { status: 403, detail: 'The recipient does not take mail from the caller.' },
  'mail.not-found': { status: 404, detail: 'No mail of the caller has this uuid.' },
  'mail.recipient-not-found': { status: 404, detail: 'No user can receive mail under this name.' },
  'mail.too-many': {
    status: 429,
    detail: 'The caller sent as many mails as a window allows; wait `Retry-After` seconds.',
  },

  'search.query-empty': { status: 400, detail: 'The search query `q` is empty.' },
  'search.query-too-long': { status: 400, detail: 'The search query `q` is too long.' },
  'search.too-many-terms': { status: 400, detail: 'The search query `q` has too many terms.' },
  'search.prefix-too-short': { status: 400, detail: 'A prefix search needs more letters before `*`.' },
  'search.misplaced-or': { status: 400, detail: '`OR` needs a word or phrase on each side, neither excluded.' },
  'search.nothing-to-search-for': { status: 400, detail: 'The search query `q` has no words to search for.' },
  'search.busy': { status: 503, detail: 'Too many searches are running on this node; try again shortly.' },

  'file.invalid-upload': { status: 400, detail: 'The multipart upload is malformed or its fields are wrong.' },
  'file.area-not-found': { status: 404, detail: 'No file area has this tag.' },
  'file.not-found': { status: 404, detail: 'No file has this id, or the caller may not see it.' },
  'file.content-missing': { status: 404, detail: "The file's content is missing from the file store." },
  'file.duplicate': { status: 409, detail: 'The same file is already in the file area.' },
  'file.name-exhausted': { status: 409, detail: 'Too many files of this name are in the file area.' },
  'file.too-large': { status: 413, detail: 'The file is larger than the upload limit.' },
  'file.range-not-satisfiable': { status: 416, detail: "The range is outside the file's bytes." },

  'event.unknown-type': { status: 400, detail: 'An event type of the filter is unknown.' },
  'event.too-many-streams': { status: 429, detail: 'The caller has as many event streams open as allowed.' },
  'event.node-at-capacity': { status: 429, detail: 'This node follows as many event streams as it can.' },

  'webhook.target-not-allowed': { status: 400, detail: 'The webhook URL may not be delivered to.' },
  'webhook.not-found': { status: 404, detail: 'No webhook of the caller has this id.' },
  'webhook.limit-reached': { status: 409, detail: 'The caller has as many webhooks as allowed.' },

  'ftn.sysops-only': { status: 403, detail: "Only sysops see the board's FTN networks." },
  'ftn.network-not-found': { status: 404, detail: 'No FTN network of this board has this name.' },

  'cli.invalid-argument': { status: 400, detail: 'A command-line argument is invalid.' },
  'cli.already-running': { status: 500, detail: 'The command is already running on this board.' },
  'config.invalid': { status: 500, detail: 'The configuration is missing or invalid.' },
  'acs.invalid-syntax': { status: 500, detail: 'An ACS does not follow the grammar.' },
  'storage.unwritable': { status: 500, detail: 'A storage directory cannot take new files.' },
  'board.already-initialised': { status: 500, detail: 'The board is initialised already.' },
  'enigma.invalid-source': { status: 500, detail: 'The directory is not an ENiGMA½ installation baud can read.' },
  'enigma.target-not-empty': {
    status: 500,
    detail: 'The board already holds content from elsewhere: import into a new board.',
  },
} as const satisfies Readonly<Record<string, { readonly status: number; readonly detail: string }>>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes that answer with `status`: a `NotFoundError` can only name a 404 code. */
export type ErrorCodeOf<Status extends number> = {
  [Code in ErrorCode]: (typeof ERROR_CODES)[Code]['status'] extends Status ? Code : never;
}[ErrorCode];

export interface FieldError {
  /** JSON pointer into the request, e.g. `/body/subject` or `/query/limit`. */
  readonly pointer: string;
  readonly message: string;
}

export abstract class BaudError<Code extends ErrorCode = ErrorCode> extends Error {
  /** The HTTP status, the code's in `ERROR_CODES`. */
  readonly status: number;
  #headers: Readonly<Record<string, string>>;
  #members: Readonly<Record<string, boolean>> = {};

  /**
   * `detail`: what went wrong this time, for people (the code's default otherwise). `headers`:
   * the response headers the status needs (`WWW-Authenticate`, `Retry-After`, `Allow`).
   */
  constructor(
    readonly code: Code,
    readonly detail: string = ERROR_CODES[code].detail,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.status = ERROR_CODES[code].status;
    this.#headers = headers;
  }

  /** Extra response headers: the ones the status needs, and any added with `withHeaders`. */
  get headers(): Readonly<Record<string, string>> {
    return this.#headers;
  }

  /**
   * Adds response headers that say more about this one answer than its status does (the
   * RateLimit headers of a refused login), and returns the error, to be thrown:
   * `throw new TooManyRequestsError('rate-limit.exceeded', '…', 60).withHeaders(extra)`.
   */
  withHeaders(extra: Readonly<Record<string, string>>): this {
    this.#headers = { ...this.#headers, ...extra };
    return this;
  }

  /** Extension members of the problem body (RFC 7807 §3.2), such as a login's `otpRequired`. */
  get members(): Readonly<Record<string, boolean>> {
    return this.#members;
  }

  /** Adds extension members to the problem body, and returns the error, to be thrown. */
  withMembers(members: Readonly<Record<string, boolean>>): this {
    this.#members = { ...this.#members, ...members };
    return this;
  }
}

export class BadRequestError extends BaudError<ErrorCodeOf<400>> {
  override readonly name = 'BadRequestError';
  constructor(
    code: ErrorCodeOf<400>,
    detail?: string,
    readonly errors: readonly FieldError[] = [],
  ) {
    super(code, detail);
  }
}

export class UnauthorizedError extends BaudError<ErrorCodeOf<401>> {
  override readonly name = 'UnauthorizedError';
  constructor(code: ErrorCodeOf<401>, detail?: string, bearerError?: 'invalid_token') {
    super(code, detail, {
      'www-authenticate': bearerError ? `Bearer realm="baud", error="${bearerError}"` : 'Bearer realm="baud"',
    });
  }
}

export class ForbiddenError extends BaudError<ErrorCodeOf<403>> {
  override readonly name = 'ForbiddenError';
}

export class NotFoundError extends BaudError<ErrorCodeOf<404>> {
  override readonly name = 'NotFoundError';
}

export class MethodNotAllowedError extends BaudError<ErrorCodeOf<405>> {
  override readonly name = 'MethodNotAllowedError';
  constructor(code: ErrorCodeOf<405>, method: string, allowed: readonly string[]) {
    super(code, `${method} is not allowed here; use ${allowed.join(', ')}.`, { allow: allowed.join(', ') });
  }
}

export class RequestTimeoutError extends BaudError<ErrorCodeOf<408>> {
  override readonly name = 'RequestTimeoutError';
  constructor(code: ErrorCodeOf<408>, detail?: string) {
    // The rest of the body may still be on its way: closing is the only way not to read it.
    super(code, detail, { connection: 'close' });
  }
}

export class ConflictError extends BaudError<ErrorCodeOf<409>> {
  override readonly name = 'ConflictError';
}

export class PayloadTooLargeError extends BaudError<ErrorCodeOf<413>> {
  override readonly name = 'PayloadTooLargeError';
}

export class UnsupportedMediaTypeError extends BaudError<ErrorCodeOf<415>> {
  override readonly name = 'UnsupportedMediaTypeError';
}

export class RangeNotSatisfiableError extends BaudError<ErrorCodeOf<416>> {
  override readonly name = 'RangeNotSatisfiableError';
  /** `sizeBytes`: the whole representation's length, sent as `Content-Range: bytes *\/size` (RFC 9110 §15.5.17). */
  constructor(code: ErrorCodeOf<416>, detail: string, sizeBytes: number) {
    super(code, detail, { 'content-range': `bytes */${sizeBytes}` });
  }
}

export class ServiceUnavailableError extends BaudError<ErrorCodeOf<503>> {
  override readonly name = 'ServiceUnavailableError';
  /** `shouldCloseConnection`: a node going down closes; one busy for a moment keeps the connection. */
  constructor(
    code: ErrorCodeOf<503>,
    detail: string,
    retryAfterSeconds: number,
    { shouldCloseConnection = true } = {},
  ) {
    super(code, detail, {
      'retry-after': String(retryAfterSeconds),
      ...(shouldCloseConnection ? { connection: 'close' } : {}),
    });
  }
}

/** Seconds as Retry-After and RateLimit-Reset count them: whole, rounded up, at least 1. */
export const wholeSecondsIn = (seconds: number) => Math.max(1, Math.ceil(seconds));

export class TooManyRequestsError extends BaudError<ErrorCodeOf<429>> {
  override readonly name = 'TooManyRequestsError';
  constructor(code: ErrorCodeOf<429>, detail: string, retryAfterSeconds: number) {
    super(code, detail, { 'retry-after': String(wholeSecondsIn(retryAfterSeconds)) });
  }
}
