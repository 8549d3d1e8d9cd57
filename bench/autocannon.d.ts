/**
 * The part of autocannon's programmatic API the load driver uses (autocannon ships no types;
 * only `autocannon` itself is a dependency of the benchmark, not `@types/autocannon`).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Seconds to wait for an answer before counting a timeout. */
    timeout?: number;
    /** Called before each request is sent; may change its `path`. */
    requests?: readonly { setupRequest?: (request: { path: string }) => { path: string } }[];
  }

  interface Histogram {
    readonly average: number;
    readonly min: number;
    readonly max: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    /** Present on `requests` (completed requests) and `throughput` (bytes). */
    readonly total: number;
  }

  interface Result {
    /** Seconds the run took. */
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>;
    /** Milliseconds. */
    readonly latency: Histogram;
    /** Requests per second, sampled each second; `total` counts the completed requests. */
    readonly requests: Histogram;
    /** Bytes per second, sampled each second; `total` counts the bytes. */
    readonly throughput: Histogram;
  }

  interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(options: Options, done: (error: Error | null, result: Result) => void): Instance;

  export default autocannon;
  export type { Instance, Options, Result };
}
