import { useEffect } from 'preact/hooks';
import type { BaudEvent } from '../../clients/typescript/src/index.js';
import { client, onSessionChange } from './session.js';

type Listener = (event: BaudEvent) => void;

const listeners = new Set<Listener>();
let lastEventId: number | undefined;
let running: AbortController | null = null;

/** How long to wait before following the stream again after it ended or failed. */
const RECONNECT_MS = 3000;

/**
 * One event stream for the whole page, shared by every view that shows something live. It
 * resumes where it left off (Last-Event-ID) when the server ends it (token expired, node
 * draining) or the network drops, and starts again as the new caller after a log-in or log-out.
 */
async function follow(controller: AbortController): Promise<void> {
  while (!controller.signal.aborted) {
    try {
      const stream = client.events({
        types: ['message.created', 'message.deleted', 'file.created'],
        signal: controller.signal,
        ...(lastEventId === undefined ? {} : { lastEventId }),
      });
      for await (const event of stream) {
        if (event.id !== null) lastEventId = event.id;
        for (const listener of listeners) listener(event);
      }
    } catch {
      // Ended or refused (429 when too many tabs follow): try again shortly.
    }
    if (controller.signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}

/** Follows the stream from now on, as whoever is logged in; again from where it was after each log-in or log-out. */
export function startLiveEvents(): void {
  const restart = () => {
    running?.abort();
    running = new AbortController();
    void follow(running);
  };
  onSessionChange(restart);
  restart();
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
