/** Runs at most `max` tasks at a time; the rest wait their turn, first come first served. */
export interface ConcurrencyLimit {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/**
 * A limit on how many of one kind of task run at once, so that kind cannot take every thread of
 * a shared pool (libuv's four threads also read and write every file).
 *
 * @example
 * const limit = createConcurrencyLimit(2);
 * const derived = await limit.run(() => pbkdf2Async(password, salt, iterations, keyLen, digest));
 */
export function createConcurrencyLimit(max: number): ConcurrencyLimit {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (running < max) running += 1;
      // A finishing task hands its place straight to the next in line (running stays the same).
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
