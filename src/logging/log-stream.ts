import pino from 'pino';

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

/**
 * Where the server's log goes. Not a terminal (a journal, a file, a log shipper): JSON lines,
 * written asynchronously — a synchronous write per request line cost 20 µs of a request's
 * time in the benchmark; pino batches what arrives while a write is under way and flushes
 * what is left when the process exits. A terminal: one readable line per record.
 */
export function logStream(output: NodeJS.WriteStream = process.stdout): pino.DestinationStream {
  if (output.isTTY) {
    return { write: (line: string) => output.write(readableLogLine(JSON.parse(line) as LogRecord)) };
  }
  const fd = (output as { fd?: unknown }).fd;
  return pino.destination({ dest: typeof fd === 'number' ? fd : 1, sync: false });
}
