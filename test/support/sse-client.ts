import { type IncomingMessage, request } from 'node:http';

/** One frame of an event stream as a client sees it; a comment frame has only `comment`. */
export interface SseFrame {
  readonly id?: number;
  readonly event?: string;
  readonly data?: unknown;
  readonly comment?: string;
  readonly retry?: number;
}

export interface SseClient {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Every frame so far. */
  readonly frames: SseFrame[];
  /** The first frame after `from` (an index into `frames`) that `matches`; rejects after `timeoutMs`. */
  next(matches: (frame: SseFrame) => boolean, options?: { timeoutMs?: number; from?: number }): Promise<SseFrame>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** Stops reading: what the server sends waits in the connection until `resume()`. */
  pause(): void;
  resume(): void;
  close(): void;
}

/**
 * Opens `GET url` and parses its Server-Sent Events as they come (a non-200 answer's body is kept
 * as one data frame). `pauseMs` makes a slow reader: after each chunk it stops reading for that long.
 */
export function openSse(
  url: string,
  headers: Record<string, string> = {},
  options: { readonly pauseMs?: number } = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const frames: SseFrame[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let endStream: () => void = () => {};
      const ended = new Promise<void>((done) => {
        endStream = done;
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (options.pauseMs !== undefined) {
          response.pause();
          setTimeout(() => response.resume(), options.pauseMs);
        }
        buffer += chunk;
        for (;;) {
          const end = buffer.indexOf('\n\n');
          if (end < 0) break;
          frames.push(...parseFrame(buffer.slice(0, end), response.statusCode === 200));
          buffer = buffer.slice(end + 2);
        }
        for (const waiter of waiters) waiter();
      });
      response.on('end', () => {
        if (response.statusCode !== 200 && buffer !== '') frames.push({ data: JSON.parse(buffer) });
        endStream();
        for (const waiter of waiters) waiter();
      });
      response.on('close', endStream);
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        frames,
        ended,
        pause: () => response.pause(),
        resume: () => response.resume(),
        close: () => req.destroy(),
        next(matches, { timeoutMs = 5000, from = 0 } = {}) {
          return new Promise((found, fail) => {
            const check = () => {
              const frame = frames.slice(from).find(matches);
              if (frame) {
                waiters.delete(check);
                clearTimeout(timer);
                found(frame);
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching frame within ${timeoutMs} ms; frames: ${JSON.stringify(frames)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function parseFrame(text: string, isStream: boolean): SseFrame[] {
  if (!isStream) return [];
  const frame: { id?: number; event?: string; data?: unknown; comment?: string; retry?: number } = {};
  const comments: string[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === '') comments.push(value);
    else if (field === 'id') frame.id = Number(value);
    else if (field === 'event') frame.event = value;
    else if (field === 'data') frame.data = JSON.parse(value);
    else if (field === 'retry') frame.retry = Number(value);
  }
  const frames: SseFrame[] = comments.map((comment) => ({ comment }));
  return Object.keys(frame).length > 0 ? [...frames, frame] : frames;
}
