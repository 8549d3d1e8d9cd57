import { useEffect } from 'preact/hooks';
import { type BaudEvent, BaudProblem } from '../../clients/typescript/src/index.js';
import { client, currentSession, onSessionChange } from './session.js';

type Listener = (event: BaudEvent) => void;

const listeners = new Set<Listener>();
let lastEventId: number | undefined;
let running: AbortController | null = null;

/** The first wait before following the stream again; it doubles with each failure in a row, up to the last. */
const FIRST_RETRY_MS = 3_000;
const LAST_RETRY_MS = 60_000;
/** A stream that lasted this long was healthy: its end starts the waits from the first again. */
const HEALTHY_STREAM_MS = 60_000;

/**
 * The wait after `failures` ends or failures in a row: 3 s, 6 s, 12 s … 60 s, each between half
 * and all of that at random, so the tabs a board restart cut off do not all come back at once.
 */
function retryDelayMs(failures: number): number {
  const ceiling = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Whether following again could succeed after this refusal. 401 may pass with a fresh token and
 * 429 once other tabs let go; any other 4xx (404: the board has its event stream off, 403) would
 * only be refused again.
 */
function isWorthRetrying(error: unknown): boolean {
  if (!(error instanceof BaudProblem)) return true;
  return error.status >= 500 || error.status === 401 || error.status === 429;
}

/**
 * One event stream for the whole page, shared by every view that shows something live. It
 * resumes where it left off (Last-Event-ID) when the server ends it (token expired, node
 * draining) or the network drops, waiting longer after each failure in a row. A `reset` event
 * (the board no longer holds what was missed) reaches the listeners like any other: views that
 * show live data reload on it.
 */
async function follow(controller: AbortController): Promise<void> {
  let failures = 0;
  while (!controller.signal.aborted) {
    const startedAt = Date.now();
    let waitMs: number | null = null;
    try {
      const stream = client.events({
        // mail.received reaches only its recipient's streams: a guest's stream simply never sees one.
        types: ['message.created', 'message.deleted', 'file.created', 'mail.received'],
        signal: controller.signal,
        ...(lastEventId === undefined ? {} : { lastEventId }),
      });
      for await (const event of stream) {
        if (event.id !== null) lastEventId = event.id;
        for (const listener of listeners) listener(event);
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      if (!isWorthRetrying(error)) return;
      // 429 says when a place is free again.
      if (error instanceof BaudProblem && error.status === 429 && error.retryAfterSeconds !== null) {
        waitMs = error.retryAfterSeconds * 1000;
      }
    }
    if (controller.signal.aborted) return;
    failures = Date.now() - startedAt >= HEALTHY_STREAM_MS ? 1 : failures + 1;
    await pause(waitMs ?? retryDelayMs(failures), controller.signal);
  }
}

/** Follows the stream from now on, as whoever is logged in; again, as the new caller, when that changes. */
export function startLiveEvents(): void {
  // undefined: not following yet; null: following as a guest.
  let followingAs: number | null | undefined;
  const followAs = (userId: number | null) => {
    if (userId === followingAs) return;
    followingAs = userId;
    running?.abort();
    running = new AbortController();
    void follow(running);
  };
  // A profile reload sets the same user again: only a log-in, log-out or another user restarts.
  onSessionChange((session) => followAs(session.user?.userId ?? null));
  followAs(currentSession().user?.userId ?? null);
}

/** Calls `listener` with every live event while the calling component is shown. */
export function useLiveEvents(listener: Listener, deps: readonly unknown[]): void {
  useEffect(() => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, deps);
}
