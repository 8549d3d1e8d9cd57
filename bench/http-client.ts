import http from 'node:http';

/** One answer as it came over the wire, minus the headers that belong to the connection. */
export interface RecordedResponse {
  readonly status: number;
  /** Flat `[name, value, name, value …]` in the order sent (repeated names kept). */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

export interface RequestOptions {
  readonly method?: 'GET' | 'POST' | 'PUT';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

// Connection-level headers: the ceiling's own node:http adds them itself (Date included).
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date']);

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** Sends one request over a kept-alive connection and returns the whole answer. */
export function requestOnce(url: string, options: RequestOptions = {}): Promise<RecordedResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const rawHeaders: string[] = [];
        for (let index = 0; index < response.rawHeaders.length; index += 2) {
          const name = response.rawHeaders[index] ?? '';
          if (!CONNECTION_HEADERS.has(name.toLowerCase())) rawHeaders.push(name, response.rawHeaders[index + 1] ?? '');
        }
        resolve({ status: response.statusCode ?? 0, rawHeaders, body: Buffer.concat(chunks) });
      });
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** `requestOnce`, insisting on `expectedStatus`, with the body parsed as JSON. */
export async function requestJson<T>(url: string, expectedStatus: number, options: RequestOptions = {}): Promise<T> {
  const response = await requestOnce(url, options);
  if (response.status !== expectedStatus) {
    throw new Error(
      `${options.method ?? 'GET'} ${url} answered ${response.status}, not ${expectedStatus}: ${response.body.toString().slice(0, 300)}`,
    );
  }
  return JSON.parse(response.body.toString()) as T;
}

export const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** Logs in through the API (`POST /auth/login`) and returns a fresh access token. */
export async function logIn(apiUrl: string, username: string, password: string): Promise<string> {
  const { accessToken } = await requestJson<{ accessToken: string }>(`${apiUrl}/auth/login`, 200, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ username, password }),
  });
  return accessToken;
}

/** Releases the kept-alive connection, so the process can exit. */
export function closeConnections(): void {
  agent.destroy();
}
