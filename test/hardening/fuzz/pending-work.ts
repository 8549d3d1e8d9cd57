import type { Board } from '../../../src/board.js';

const SETTLE_TIMEOUT_MS = 10_000;

/**
 * Tracks the promises of every board service call, so the suite can wait for work a request
 * leaves running after its answer (a download is counted when the last byte has gone, after
 * `inject` resolved) before it takes the state fingerprint — otherwise, on PostgreSQL, that
 * late write lands in the next request's window and looks like the next request's doing.
 *
 * Wraps, in place, each function of each service object of the board (`files`, `messages` …;
 * not the database handle): the routes look methods up on these objects at call time.
 * Returns a function that resolves once nothing tracked is pending.
 */
export function trackPendingWork(board: Board): () => Promise<void> {
  const pending = new Set<Promise<unknown>>();
  for (const [name, service] of Object.entries(board)) {
    if (name === 'db' || name === 'database' || typeof service !== 'object' || service === null) continue;
    if (Object.isFrozen(service)) continue;
    const methods = service as Record<string, unknown>;
    for (const [method, original] of Object.entries(methods)) {
      if (typeof original !== 'function') continue;
      methods[method] = function tracked(this: unknown, ...args: unknown[]) {
        const result: unknown = original.apply(this, args);
        if (result instanceof Promise) {
          pending.add(result);
          result.finally(() => pending.delete(result)).catch(() => {});
        }
        return result;
      };
    }
  }
  return async () => {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    while (pending.size > 0) {
      if (Date.now() > deadline) throw new Error(`${pending.size} board service calls did not settle`);
      await Promise.race([Promise.allSettled([...pending]), new Promise((resolve) => setTimeout(resolve, 100))]);
    }
  };
}
