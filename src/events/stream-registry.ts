import type { EventStream } from './event-stream.js';

/** What a node counts of its streams (metrics). */
export interface StreamObserver {
  opened(): void;
  closed(): void;
}

/** A node's open event streams and the places they hold under the limits. */
export interface StreamRegistry {
  /**
   * Takes a place for a stream of `owner`: `'owner'` or `'node'` says which limit is full (or
   * that the node is closing), else the function that gives the place back.
   */
  reserve(owner: string): 'owner' | 'node' | (() => void);
  /** Holds an open stream (one added while the node closes is closed at once). */
  add(stream: EventStream): void;
  remove(stream: EventStream): void;
  /** Ends the streams open now; new ones are still taken. */
  endOpen(): void;
  /** Ends every stream (their clients reconnect with Last-Event-ID, elsewhere) and takes no more. */
  closeAll(): void;
}

/**
 * The open event streams of a node, held to the configured limits — per user (anonymous
 * callers: per address) and per node — and closed together when the node drains or stops.
 */
export function createStreamRegistry(
  limits: { maxPerOwner: number; maxPerNode: number },
  observer?: StreamObserver,
): StreamRegistry {
  const byOwner = new Map<string, number>();
  const streams = new Set<EventStream>();
  let reserved = 0;
  let isClosing = false;

  return {
    reserve(owner) {
      if (isClosing || reserved >= limits.maxPerNode) return 'node';
      const count = byOwner.get(owner) ?? 0;
      if (count >= limits.maxPerOwner) return 'owner';
      byOwner.set(owner, count + 1);
      reserved += 1;
      observer?.opened();
      let isReleased = false;
      return () => {
        if (isReleased) return;
        isReleased = true;
        reserved -= 1;
        const left = (byOwner.get(owner) ?? 1) - 1;
        if (left === 0) byOwner.delete(owner);
        else byOwner.set(owner, left);
        observer?.closed();
      };
    },

    add(stream) {
      if (isClosing) stream.close();
      else streams.add(stream);
    },

    remove(stream) {
      streams.delete(stream);
    },

    endOpen() {
      for (const stream of streams) stream.close();
      streams.clear();
    },

    closeAll() {
      isClosing = true;
      this.endOpen();
    },
  };
}
