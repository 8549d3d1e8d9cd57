const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields a log record always has, or that the readable line shows in its own place. */
const SHOWN_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'err']);

interface LogRecord {
  readonly level?: number;
  readonly time?: number;
  readonly msg?: string;
  readonly method?: string;
  readonly url?: string;
  readonly statusCode?: number;
  readonly responseTime?: number;
  readonly userId?: number;
  readonly err?: { readonly stack?: string; readonly message?: string };
  readonly [field: string]: unknown;
}

/**
 * One record as a person reads it on a terminal: the time, the level, then for a request line
 * `GET /path 200 1.2 ms user 3`, for anything else the message and its other fields as JSON;
 * an error's stack follows on its own lines.
 */
export function readableLogLine(record: LogRecord): string {
  const time = new Date(record.time ?? Date.now()).toISOString().slice(11, 23);
  const level = LEVEL_NAMES[record.level ?? 30] ?? String(record.level);
  let text: string;
  if (record.method !== undefined && record.url !== undefined) {
    const status = record.statusCode ?? 'aborted';
    const user = record.userId === undefined ? '' : ` user ${record.userId}`;
    text = `${record.method} ${record.url} ${status} ${record.responseTime ?? '?'} ms${user}`;
  } else {
    const rest = Object.fromEntries(Object.entries(record).filter(([field]) => !SHOWN_FIELDS.has(field)));
    text = `${record.msg ?? ''}${Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : ''}`;
  }
  const stack = record.err?.stack ? `\n${record.err.stack}` : '';
  return `${time} ${level} ${text}${stack}\n`;
}

/** A log destination that can also hand over what it still holds at once (tests, process exit). */
export interface LogStream {
  write(line: string): void;
  flush(): void;
}

/**
 * Where the server's log goes: to a terminal one readable line per record, to anything else
 * (a journal, a file, a log shipper) the JSON lines as pino writes them.
 *
 * Lines leave together, at most {@link LOG_FLUSH_DELAY_MS} after the first of them, in one
 * write: under load one write carries hundreds of request lines. A write per line cost 20 µs
 * of a request's time in the benchmark, and pino's asynchronous destination re-measured its
 * whole pending buffer on every line (a quarter of the CPU at 20,000 requests a second).
 * Standard output is written synchronously on Linux
 * (files and pipes alike), so a slow reader slows the board rather than filling its memory,
 * and what is still held when the process exits is written on the way out.
 */
/** How long a log line may wait for others to leave with it (a crash loses at most this much). */
export const LOG_FLUSH_DELAY_MS = 20;

/** Streams holding lines not yet written, so the process writes them on its way out. */
const holdingStreams = new Set<() => void>();
let isExitFlushInstalled = false;

export function logStream(output: Pick<NodeJS.WriteStream, 'write' | 'isTTY'> = process.stdout): LogStream {
  const format = output.isTTY
    ? (line: string) => readableLogLine(JSON.parse(line) as LogRecord)
    : (line: string) => line;
  let pending: string[] = [];
  const flush = () => {
    holdingStreams.delete(flush);
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    output.write(chunk);
  };
  if (!isExitFlushInstalled) {
    isExitFlushInstalled = true;
    process.once('exit', () => {
      for (const flushHeld of holdingStreams) flushHeld();
    });
  }
  return {
    write(line) {
      if (pending.length === 0) {
        holdingStreams.add(flush);
        setTimeout(flush, LOG_FLUSH_DELAY_MS).unref();
      }
      pending.push(format(line));
    },
    flush,
  };
}
