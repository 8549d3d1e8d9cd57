/** A small fetch wrapper for the hardening tests: status, headers and the parsed body. */

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  readonly json: unknown;
}

export interface ApiRequest {
  readonly method?: string;
  /** `Authorization: Bearer <token>` */
  readonly token?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly json?: unknown;
  /** Sent as is (give the content type in `headers`). */
  readonly body?: Uint8Array | string;
}

export async function api(apiUrl: string, path: string, request: ApiRequest = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  let body: Uint8Array | string | undefined = request.body;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  }
  const response = await fetch(`${apiUrl}${path}`, {
    method: request.method ?? 'GET',
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** Reads a property of a JSON object answer, failing loudly when the shape is not what was expected. */
export function field<T>(value: unknown, name: string): T {
  if (typeof value !== 'object' || value === null || !(name in value)) {
    throw new Error(`expected an object with "${name}", got ${JSON.stringify(value)}`);
  }
  return (value as Record<string, T>)[name] as T;
}

export interface Session {
  readonly accessToken: string;
  /** The raw `baud_refresh` cookie value. */
  readonly refreshToken: string;
}

/** Logs in with username and password; fails the test unless the answer is 200 with a refresh cookie. */
export async function login(apiUrl: string, username: string, password: string): Promise<Session> {
  const response = await api(apiUrl, '/auth/login', { method: 'POST', json: { username, password } });
  if (response.status !== 200) throw new Error(`login of ${username}: ${response.status} ${response.text}`);
  return { accessToken: field<string>(response.json, 'accessToken'), refreshToken: refreshCookieOf(response) };
}

/** The `baud_refresh` value a response sets. */
export function refreshCookieOf(response: ApiResponse): string {
  for (const cookie of response.headers.getSetCookie()) {
    const match = /^baud_refresh=([^;]*)/.exec(cookie);
    if (match?.[1]) return match[1];
  }
  throw new Error(`no baud_refresh cookie in ${JSON.stringify(response.headers.getSetCookie())}`);
}

/** Every item of a keyset-paginated list, following `meta.nextCursor` at 100 items a page. */
export async function listAll<T>(apiUrl: string, path: string, token?: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const query = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await api(apiUrl, `${path}?${query}`, token ? { token } : {});
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.text}`);
    items.push(...field<T[]>(response.json, 'data'));
    cursor = field<string | null>(field<unknown>(response.json, 'meta'), 'nextCursor');
    if (cursor === null) return items;
  }
  throw new Error(`${path}: more than 10,000 pages`);
}

/** Runs `work` over `items` with at most `concurrency` calls in flight; results in input order. */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
