import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** The API's prefix below the board's address. */
export const API_PREFIX = '/_baud/api/v1';

/** One validation failure of a 400: where in the request, and what is wrong. */
export interface ProblemField {
  readonly pointer: string;
  readonly message: string;
}

/** What went wrong, for branching on: docs/api-notes.md "Problem codes" lists every code. */
export type ProblemCode = components['schemas']['ProblemCode'];

/**
 * An answer of status 400 or more: the server's RFC 7807 problem, as an exception. `code` says
 * what went wrong (`message.area-not-found`; null when the answer is no problem of baud's, such
 * as a proxy's error page); `status` what kind (401 log in, 403 not allowed, 404, 409, 413, 415,
 * 429 …); `errors` name the fields of a 400; `retryAfterSeconds` comes with 429 and 503;
 * `otpRequired` is true when a login's password was right and the account wants its one-time
 * code too (log in again with `otp`).
 */
export class BaudProblem extends Error {
  override readonly name = 'BaudProblem';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly title: string,
    readonly detail: string,
    readonly errors: readonly ProblemField[],
    readonly retryAfterSeconds: number | null,
    readonly code: ProblemCode | null,
    readonly otpRequired = false,
  ) {
    super(`${status} ${title}: ${detail}`);
  }
}

export interface BaudClientOptions {
  /** The board's address: `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** Authenticate every request with this API key instead of logging in. */
  readonly apiKey?: string;
  /** Another fetch (tests, older runtimes); the global one by default. */
  readonly fetch?: typeof fetch;
  /** Refresh the access token this long before it expires (default 60 s). */
  readonly refreshMarginSeconds?: number;
  /** Called when the login session ended under the client: a silent refresh was refused. */
  readonly onSessionEnd?: () => void;
}

/** How far an upload's request body has gone: bytes sent of the whole multipart body. */
export interface UploadProgress {
  readonly sentBytes: number;
  readonly totalBytes: number;
}

/** A file's record, as `GET /files/{fileId}` answers it. */
export type FileRecord = paths['/_baud/api/v1/files/{fileId}']['get']['responses'][200]['content']['application/json'];

/** One event of `GET /events`. */
export interface BaudEvent {
  readonly id: number | null;
  readonly type: string;
  readonly data: unknown;
}

type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { 'application/json': { data: unknown[]; meta: unknown } } } } };
  }
    ? P
    : never;
}[keyof paths];

type ItemOf<P extends ListPath> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': { data: (infer Item)[] } } } } };
}
  ? Item
  : never;

/** `GET` parameters of a list path, as openapi-fetch takes them. */
type ListParams<P extends ListPath> = paths[P] extends { get: { parameters: infer Params } } ? Params : never;

async function problemOf(response: Response): Promise<BaudProblem> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const body = (await response
    .clone()
    .json()
    .catch(() => ({}))) as Partial<{
    type: string;
    title: string;
    detail: string;
    errors: ProblemField[];
    code: ProblemCode;
    otpRequired: boolean;
  }>;
  return new BaudProblem(
    response.status,
    body.type ?? 'about:blank',
    body.title ?? response.statusText,
    body.detail ?? '',
    body.errors ?? [],
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
    body.code ?? null,
    body.otpRequired === true,
  );
}

/**
 * A typed client of a baud board: every operation of the OpenAPI document through
 * `client.api` (openapi-fetch: `api.GET('/_baud/api/v1/messages/{uuid}', { params: { path: { uuid } } })`),
 * plus what every client needs around it — login with a silently refreshed access token (the
 * refresh cookie is the browser's; in Node the client keeps it), or an API key; every problem
 * answer thrown as a `BaudProblem`; cursor pages as an async iterator; the event stream.
 */
export function createBaudClient(options: BaudClientOptions) {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const marginMs = (options.refreshMarginSeconds ?? 60) * 1000;
  let accessToken: string | null = null;
  let expiresAt = 0;
  /** Outside browsers no cookie jar keeps the refresh cookie: the client does. */
  let refreshCookie: string | null = null;
  let refreshing: Promise<void> | null = null;

  const url = (path: string) => `${options.baseUrl}${path}`;

  async function authPost(path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (refreshCookie !== null) headers.cookie = refreshCookie;
    const response = await fetchImpl(url(path), {
      method: 'POST',
      headers,
      credentials: 'include',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const setCookie = response.headers.getSetCookie?.() ?? [];
    const cookie = setCookie.find((value) => value.startsWith('baud_refresh='));
    if (cookie !== undefined) refreshCookie = cookie.split(';')[0] ?? null;
    if (!response.ok) throw await problemOf(response);
    return response;
  }

  async function takeToken(response: Response): Promise<void> {
    const answer = (await response.json()) as { accessToken: string; expiresIn: number };
    accessToken = answer.accessToken;
    // Counted from the answer on this machine's clock, not the token's `exp` read against it: a
    // browser clock minutes off would otherwise refresh on every request, or too late.
    expiresAt = Date.now() + answer.expiresIn * 1000;
  }

  /** One refresh at a time: every caller that needs a new token waits for the same request. */
  function refreshToken(): Promise<void> {
    refreshing ??= authPost(`${API_PREFIX}/auth/refresh`)
      .then(takeToken, (error: unknown) => {
        if (error instanceof BaudProblem && error.status === 401 && accessToken !== null) endSession();
        throw error;
      })
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  }

  /** A valid access token, refreshed first when it expires within the margin; null when not logged in. */
  async function currentToken(): Promise<string | null> {
    if (accessToken === null) return null;
    if (Date.now() >= expiresAt - marginMs) await refreshToken();
    return accessToken;
  }

  function endSession(): void {
    accessToken = null;
    refreshCookie = null;
    options.onSessionEnd?.();
  }

  async function credentialHeaders(): Promise<Record<string, string>> {
    if (options.apiKey !== undefined) return { 'x-baud-api-key': options.apiKey };
    const token = await currentToken();
    return token === null ? {} : { authorization: `Bearer ${token}` };
  }

  const middleware: Middleware = {
    async onRequest({ request }) {
      for (const [name, value] of Object.entries(await credentialHeaders())) request.headers.set(name, value);
      return request;
    },
    async onResponse({ response }) {
      if (response.status >= 400) throw await problemOf(response);
      return response;
    },
  };
  const api: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: fetchImpl,
    credentials: 'include',
  });
  api.use(middleware);

  return {
    api,

    /**
     * Logs in; later requests carry the access token, refreshed before it expires. With
     * two-factor login on, a call without `otp` throws a `BaudProblem` whose `otpRequired` is
     * true: ask for the code (or a recovery code) and call again with it.
     */
    async login(username: string, password: string, otp?: string): Promise<void> {
      const body = otp === undefined ? { username, password } : { username, password, otp };
      await takeToken(await authPost(`${API_PREFIX}/auth/login`, body));
    },

    /** Gets a new access token now with the refresh cookie (otherwise done silently before expiry). */
    async refresh(): Promise<void> {
      await refreshToken();
    },

    /** Ends the login session (the refresh cookie with it). */
    async logout(): Promise<void> {
      try {
        await authPost(`${API_PREFIX}/auth/logout`);
      } finally {
        endSession();
      }
    },

    get isLoggedIn(): boolean {
      return accessToken !== null || options.apiKey !== undefined;
    },

    /**
     * Every item of a list, page after page, following `meta.nextCursor`:
     * `for await (const message of client.items('/_baud/api/v1/messages/areas/{areaTag}/messages', { path: { areaTag } }))`.
     */
    async *items<P extends ListPath>(path: P, params: ListParams<P>): AsyncGenerator<ItemOf<P>> {
      let cursor: string | null | undefined;
      do {
        const query = { ...((params as { query?: object }).query ?? {}), ...(cursor ? { cursor } : {}) };
        const get = api.GET as (path: string, init: object) => Promise<{ data?: unknown }>;
        const { data } = await get(path, { params: { ...(params as object), query } });
        const page = data as { data: ItemOf<P>[]; meta: { nextCursor: string | null } };
        yield* page.data;
        cursor = page.meta.nextCursor;
      } while (cursor);
    },

    /**
     * Uploads a file to a file area (multipart): the stored record, or a BaudProblem — 409 when
     * the area holds the same content already, 413 over the size limit, 415 for a bad body.
     */
    async upload(
      areaTag: string,
      file: Blob,
      fileName: string,
      fields: { desc?: string; hashTags?: string; onProgress?: (progress: UploadProgress) => void } = {},
    ): Promise<FileRecord> {
      const form = new FormData();
      if (fields.desc !== undefined) form.set('desc', fields.desc);
      if (fields.hashTags !== undefined) form.set('hashTags', fields.hashTags);
      form.set('file', file, fileName);
      const target = url(`${API_PREFIX}/files/areas/${encodeURIComponent(areaTag)}`);
      const headers = await credentialHeaders();
      // fetch() reports no upload progress; a browser's XMLHttpRequest does.
      const Xhr = (globalThis as { XMLHttpRequest?: new () => XhrLike }).XMLHttpRequest;
      const response =
        fields.onProgress && Xhr
          ? await sendWithProgress(new Xhr(), { target, headers, body: form }, fields.onProgress)
          : await fetchImpl(target, { method: 'POST', headers, body: form });
      if (!response.ok) throw await problemOf(response);
      return (await response.json()) as FileRecord;
    },

    /** A file's content (the caller must be allowed to download it), for a browser to save or a script to read. */
    async download(fileId: number): Promise<Blob> {
      const response = await fetchImpl(url(`${API_PREFIX}/files/${fileId}/download`), {
        headers: await credentialHeaders(),
      });
      if (!response.ok) throw await problemOf(response);
      return response.blob();
    },

    /**
     * The live event stream: yields each event as it comes, until `signal` aborts or the server
     * ends it (it ends after `auth.expired`, and when the node shuts down: resume with the last id).
     */
    async *events(
      filter: { types?: readonly string[]; areas?: readonly string[]; lastEventId?: number; signal?: AbortSignal } = {},
    ): AsyncGenerator<BaudEvent> {
      const query = new URLSearchParams();
      if (filter.types?.length) query.set('types', filter.types.join(','));
      if (filter.areas?.length) query.set('areas', filter.areas.join(','));
      const headers: Record<string, string> = { accept: 'text/event-stream', ...(await credentialHeaders()) };
      if (filter.lastEventId !== undefined) headers['last-event-id'] = String(filter.lastEventId);
      const suffix = query.size > 0 ? `?${query}` : '';
      const response = await fetchImpl(url(`${API_PREFIX}/events${suffix}`), {
        headers,
        ...(filter.signal ? { signal: filter.signal } : {}),
      });
      if (!response.ok || response.body === null) throw await problemOf(response);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const event = parseFrame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            if (event !== null) yield event;
          }
        }
      } finally {
        await reader.cancel().catch(() => {});
      }
    },
  };
}

export type BaudClient = ReturnType<typeof createBaudClient>;

/** The part of a browser's XMLHttpRequest an upload uses (the client is typed for Node and browsers alike). */
interface XhrLike {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  getAllResponseHeaders(): string;
  send(body: FormData): void;
  responseType: string;
  readonly response: unknown;
  readonly status: number;
  readonly upload: { onprogress: ((event: { loaded: number; total: number }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
  ontimeout: (() => void) | null;
}

/** A POST through XMLHttpRequest, reporting the body's progress, answered as a fetch Response. */
function sendWithProgress(
  request: XhrLike,
  { target, headers, body }: { target: string; headers: Record<string, string>; body: FormData },
  onProgress: (progress: UploadProgress) => void,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    request.open('POST', target);
    request.responseType = 'blob';
    for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => onProgress({ sentBytes: event.loaded, totalBytes: event.total });
    request.onload = () => {
      const answerHeaders = new Headers();
      for (const line of request.getAllResponseHeaders().trim().split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon > 0) answerHeaders.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      }
      resolve(new Response(request.response as Blob, { status: request.status, headers: answerHeaders }));
    };
    // The same rejections fetch() gives, so callers handle one kind of failure either way.
    request.onerror = () => reject(new TypeError('The upload failed: the connection to the board was lost.'));
    request.onabort = () => reject(new DOMException('The upload was aborted.', 'AbortError'));
    request.ontimeout = () => reject(new DOMException('The upload timed out.', 'TimeoutError'));
    request.send(body);
  });
}

/** One SSE frame as an event; null for comments and `retry:` lines. */
function parseFrame(frame: string): BaudEvent | null {
  let id: number | null = null;
  let type: string | null = null;
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const field = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = Number(value);
    else if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  return type === null ? null : { id, type, data: data.length > 0 ? JSON.parse(data.join('\n')) : null };
}
