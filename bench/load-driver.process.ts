/**
 * The load generator's own process (forked by `startLoadDriver`): runs autocannon jobs sent
 * over IPC and answers with their figures, so the generator never shares an event loop with
 * the server it measures, nor with the orchestrator. It exits when its parent goes away.
 */
import autocannon, { type Result } from 'autocannon';
import type { DriverReply, DriverRequest, LoadFigures, LoadJob } from './load-driver.js';

function send(reply: DriverReply): void {
  process.send?.(reply);
}

/** One request definition whose path moves through `paths`, one step per request sent. */
function rotatingPaths(paths: readonly string[]) {
  let next = 0;
  return [
    {
      setupRequest: (request: { path: string }) => {
        const path = paths[next % paths.length] ?? request.path;
        next += 1;
        return { ...request, path };
      },
    },
  ];
}

function run(job: LoadJob, durationSeconds: number, phase: 'warm-up' | 'measure'): Promise<Result> {
  return new Promise((resolve, reject) => {
    let second = 0;
    const instance = autocannon(
      {
        url: job.url,
        method: job.method,
        headers: { ...job.headers },
        ...(job.body === undefined ? {} : { body: job.body }),
        connections: job.connections,
        duration: durationSeconds,
        timeout: 30,
        ...(job.paths ? { requests: rotatingPaths(job.paths) } : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('tick', (counts: { counter: number }) => {
      second += 1;
      send({ type: 'tick', phase, second, seconds: durationSeconds, requests: counts.counter });
    });
  });
}

function figuresOf(result: Result): LoadFigures {
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats)) statusCodes[code] = stats.count;
  return {
    requests: result.requests.total,
    seconds: result.duration,
    reqPerSec: result.requests.total / result.duration,
    bytesPerSec: result.throughput.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

process.on('message', (message: DriverRequest) => {
  const { job } = message;
  (async () => {
    if (job.warmupSeconds > 0) await run(job, job.warmupSeconds, 'warm-up');
    const result = await run(job, job.durationSeconds, 'measure');
    send({ type: 'result', figures: figuresOf(result) });
  })().catch((error: unknown) => send({ type: 'error', message: String((error as Error).stack ?? error) }));
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
