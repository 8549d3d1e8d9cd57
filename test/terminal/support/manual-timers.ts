import type { SessionTimers } from '../../../src/terminal/session-timers.js';

interface Scheduled {
  readonly dueAtMs: number;
  readonly order: number;
  readonly callback: () => void;
  isCancelled: boolean;
}

/**
 * Session timers a test moves by hand, on the test's clock: `advance` moves the clock and runs,
 * in time order, every callback that falls due (those scheduled meanwhile included).
 */
export function createManualTimers(clock: { now(): Date; advance(ms: number): void }) {
  let scheduled: Scheduled[] = [];
  let order = 0;
  const timers: SessionTimers = {
    after(ms, callback) {
      const entry: Scheduled = { dueAtMs: clock.now().getTime() + ms, order: order++, callback, isCancelled: false };
      scheduled.push(entry);
      return () => {
        entry.isCancelled = true;
      };
    },
  };
  return {
    timers,
    /** Callbacks waiting to run. */
    pending: () => scheduled.filter((entry) => !entry.isCancelled).length,
    advance(ms: number) {
      const until = clock.now().getTime() + ms;
      for (;;) {
        scheduled = scheduled.filter((entry) => !entry.isCancelled);
        const due = scheduled
          .filter((entry) => entry.dueAtMs <= until)
          .sort((a, b) => a.dueAtMs - b.dueAtMs || a.order - b.order)[0];
        if (due === undefined) break;
        clock.advance(Math.max(0, due.dueAtMs - clock.now().getTime()));
        due.isCancelled = true;
        due.callback();
      }
      clock.advance(Math.max(0, until - clock.now().getTime()));
    },
  };
}
