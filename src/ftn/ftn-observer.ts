/**
 * What the FTN side of a node tells its metrics (src/metrics/board-metrics.ts): binkp sessions,
 * packets tossed, written and refused, messages imported, refused as duplicates, skipped and
 * exported, and the bytes binkp moved.
 */
export interface FtnObserver {
  session(outcome: 'ok' | 'error'): void;
  /** `in`: tossed; `out`: written for a link; `bad`: moved to bad. */
  packets(direction: 'in' | 'out' | 'bad', count: number): void;
  /** `imported`, `duplicate` (refused) and `skipped` (kept in bad) on toss; `exported` into outbounds. */
  messages(outcome: 'imported' | 'duplicate' | 'skipped' | 'exported', count: number): void;
  bytes(direction: 'in' | 'out', count: number): void;
}

/** An observer that records nothing (a board without metrics, the CLI). */
export const NO_FTN_OBSERVER: FtnObserver = Object.freeze({
  session() {},
  packets() {},
  messages() {},
  bytes() {},
});

/** An observer that hands everything to the one attached later (the metrics, made after the board). */
export interface FtnObserverRelay extends FtnObserver {
  /** Replaces the observer told from now on. */
  attach(observer: FtnObserver): void;
}

export function createFtnObserverRelay(): FtnObserverRelay {
  let target: FtnObserver = NO_FTN_OBSERVER;
  return {
    attach(observer) {
      target = observer;
    },
    session: (outcome) => target.session(outcome),
    packets: (direction, count) => target.packets(direction, count),
    messages: (outcome, count) => target.messages(outcome, count),
    bytes: (direction, count) => target.bytes(direction, count),
  };
}
