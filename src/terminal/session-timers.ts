/**
 * The timers a caller session runs on: idle and login timeouts, the welcome pause, keeping the
 * session in the node list. Injected so a test moves time by hand (with the board's clock)
 * instead of waiting for it.
 */
export interface SessionTimers {
  /** Calls `callback` once after `ms`; returns the cancel (harmless after it ran). */
  after(ms: number, callback: () => void): () => void;
}

/** Node's timers, unref'd: a caller's pending timeout never keeps a stopping process alive. */
export const systemTimers: SessionTimers = {
  after(ms, callback) {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
