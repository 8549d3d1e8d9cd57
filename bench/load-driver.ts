import { forkBenchProcess, nextMessage } from './child-processes.js';
import type { Cleanup } from './cleanup.js';

/** One load run: `warmupSeconds` of load that is thrown away, then `durationSeconds` measured. */
export interface LoadJob {
  readonly url: string;
  /**
   * Paths (with query) to send in turn instead of `url`'s, shared by every connection: the
   * next request of any connection takes the next path, so no two connections move in step.
   */
  readonly paths?: readonly string[];
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
}

/** What one measured run gave, as autocannon counted it. */
export interface LoadFigures {
  /** Completed requests. */
  readonly requests: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  readonly bytesPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly non2xx: number;
  /** Connection errors, timeouts included. */
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Readonly<Record<string, number>>;
}

export type DriverRequest = { readonly type: 'run'; readonly job: LoadJob };
export type DriverReply =
  | { readonly type: 'ready' }
  | {
      readonly type: 'tick';
      readonly phase: 'warm-up' | 'measure';
      readonly second: number;
      readonly seconds: number;
      readonly requests: number;
    }
  | { readonly type: 'result'; readonly figures: LoadFigures }
  | { readonly type: 'error'; readonly message: string };

export interface LoadDriver {
  /** The autocannon process (its CPU counts against the machine the server shares). */
  readonly pid: number;
  /** Runs `job`; `onTick` hears about every second of it (for the progress line). */
  run(job: LoadJob, onTick?: (tick: Extract<DriverReply, { type: 'tick' }>) => void): Promise<LoadFigures>;
  stop(): Promise<void>;
}

const isReply = (message: unknown): message is DriverReply =>
  typeof message === 'object' && message !== null && 'type' in message;

/** Forks the autocannon process (`load-driver.process.ts`) and waits until it is ready. */
export async function startLoadDriver(cleanup: Cleanup): Promise<LoadDriver> {
  const { child, stop } = forkBenchProcess('load-driver.process.ts', cleanup);
  await nextMessage(child, (message) => (isReply(message) && message.type === 'ready' ? true : undefined));
  return {
    pid: child.pid ?? 0,
    async run(job, onTick) {
      const onMessage = (message: unknown) => {
        if (isReply(message) && message.type === 'tick') onTick?.(message);
      };
      child.on('message', onMessage);
      try {
        const done = nextMessage(child, (message) =>
          isReply(message) && (message.type === 'result' || message.type === 'error') ? message : undefined,
        );
        child.send({ type: 'run', job } satisfies DriverRequest);
        const reply = await done;
        if (reply.type === 'error') throw new Error(`load driver: ${reply.message}`);
        return reply.figures;
      } finally {
        child.off('message', onMessage);
      }
    },
    stop,
  };
}
