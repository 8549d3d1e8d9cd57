import { ServiceUnavailableError } from '../errors.js';

/**
 * How many searches one node runs at once, and how many wait for a turn. Twenty anonymous
 * clients repeating a heavy relevance query pushed `/system/info` to a p50 of 359–558 ms: on
 * SQLite a search holds the event loop while it runs, and searches started back to back left
 * nothing else a turn. With a budget, at most `maxRunning` searches start per turn of the event
 * loop and the rest wait (in order), so other requests are answered in between. A search that
 * finds the queue full, or waits longer than `maxWaitMs`, is answered 503 with `Retry-After`
 * (the node is busy, not the client over a quota, hence not 429).
 *
 * The queue is long because a waiting search costs only a promise and a timer, and `maxWaitMs`
 * bounds how long any of them waits: with 8 places, 50 readers searching at once (the bench's
 * load) were answered 503 nine times out of ten even for a one-message search, while what keeps
 * the rest of the API answering is `maxRunning` per turn, not the queue.
 */
export interface SearchBudgetLimits {
  readonly maxRunning: number;
  readonly maxWaiting: number;
  readonly maxWaitMs: number;
}

export const SEARCH_BUDGET: SearchBudgetLimits = Object.freeze({ maxRunning: 2, maxWaiting: 64, maxWaitMs: 2000 });

/** Pooled PostgreSQL connections a search never takes: the rest of the API's requests always find one. */
const CONNECTIONS_LEFT_FOR_OTHERS = 2;

/**
 * The budget of a node on `dialect`. On SQLite a search runs on the event loop, so two at a time
 * ({@link SEARCH_BUDGET}). On PostgreSQL it runs in the database and the node only waits for
 * it: two at a time left a 10-connection pool mostly idle and capped a node at two searches'
 * worth of database time (rare-word searches refused 503 under 50 readers), so searches may
 * use every pooled connection but two.
 */
export function searchBudgetLimitsFor(dialect: 'sqlite' | 'postgres', poolSize: number): SearchBudgetLimits {
  if (dialect === 'sqlite') return SEARCH_BUDGET;
  return Object.freeze({ ...SEARCH_BUDGET, maxRunning: Math.max(1, poolSize - CONNECTIONS_LEFT_FOR_OTHERS) });
}

/** Seconds a client is told to wait before searching again. */
const RETRY_AFTER_SECONDS = 1;

export interface SearchBudget {
  /** Runs `search` within the budget; throws the 503 when there is no room for it. */
  run<T>(search: () => Promise<T>): Promise<T>;
  /** What this budget allows. */
  readonly limits: SearchBudgetLimits;
  /** Searches running and waiting now (for tests and metrics). */
  readonly running: number;
  readonly waiting: number;
}

interface Waiter {
  readonly start: () => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

export function createSearchBudget(limits: SearchBudgetLimits = SEARCH_BUDGET): SearchBudget {
  let running = 0;
  const waiters: Waiter[] = [];
  const busy = () =>
    new ServiceUnavailableError(
      'search.busy',
      'Too many searches are running on this node; try again shortly.',
      RETRY_AFTER_SECONDS,
      {
        shouldCloseConnection: false,
      },
    );

  function release(): void {
    const next = waiters.shift();
    if (next === undefined) {
      running -= 1;
      return;
    }
    // The slot passes to the next waiter; its timer stops now, so it cannot also time out.
    clearTimeout(next.timer);
    // Next turn of the event loop, not a microtask: requests already read get answered first.
    setImmediate(next.start);
  }

  function turn(): Promise<void> {
    if (running < limits.maxRunning) {
      running += 1;
      // Even with a free slot a search starts on the next turn of the event loop: on SQLite its
      // query holds the loop, and started at once, twenty of them ran back to back before any
      // other request that had arrived was read.
      return new Promise((resolve) => setImmediate(resolve));
    }
    if (waiters.length >= limits.maxWaiting) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        timer: setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(busy());
        }, limits.maxWaitMs),
      };
      waiters.push(waiter);
    });
  }

  return {
    async run(search) {
      await turn();
      try {
        return await search();
      } finally {
        release();
      }
    },
    limits,
    get running() {
      return running;
    },
    get waiting() {
      return waiters.length;
    },
  };
}
