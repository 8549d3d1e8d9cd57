import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOG_FLUSH_DELAY_MS, logStream, readableLogLine } from '../../src/logging/log-stream.js';

const execFileAsync = promisify(execFile);
// The compiled module (test/support/compile-once.ts): a plain `node` loads it without a TypeScript loader.
const LOG_STREAM_MODULE = fileURLToPath(new URL('../../dist/logging/log-stream.js', import.meta.url));
const TIME = Date.parse('2026-11-23T19:20:01.123Z');

describe('readable log lines on a terminal', () => {
  it('shows a request line as method, path, status, time and user', () => {
    const line = readableLogLine({
      level: 30,
      time: TIME,
      pid: 1,
      hostname: 'node1',
      reqId: 'abc',
      msg: 'request completed',
      method: 'GET',
      url: '/_baud/api/v1/messages/areas/general/messages?limit=5',
      statusCode: 200,
      responseTime: 1.2,
      remoteAddress: '127.0.0.1',
      userId: 3,
    });
    expect(line).toBe(
      '19:20:01.123 INFO  GET /_baud/api/v1/messages/areas/general/messages?limit=5 200 1.2 ms user 3\n',
    );
  });

  it('says aborted where a request line has no status', () => {
    const line = readableLogLine({ level: 30, time: TIME, method: 'GET', url: '/x', responseTime: 4, aborted: true });
    expect(line).toBe('19:20:01.123 INFO  GET /x aborted 4 ms\n');
  });

  it('shows any other record as its message and other fields, with an error stack below', () => {
    const line = readableLogLine({
      level: 50,
      time: TIME,
      pid: 1,
      hostname: 'node1',
      msg: 'database unreachable',
      attempt: 2,
      err: { message: 'boom', stack: 'Error: boom\n    at here' },
    });
    expect(line).toBe('19:20:01.123 ERROR database unreachable {"attempt":2}\nError: boom\n    at here\n');
  });
});

describe('where the log goes', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes readable lines to a terminal, soon after', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    logStream(terminal).write(`${JSON.stringify({ level: 40, time: TIME, msg: 'slow disk' })}\n`);
    vi.advanceTimersByTime(LOG_FLUSH_DELAY_MS - 1);
    expect(written).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(written).toEqual(['19:20:01.123 WARN  slow disk\n']);
  });

  it('writes JSON lines that arrive together unchanged, in one write, to anything else', () => {
    const written: string[] = [];
    const journal = { isTTY: false, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const stream = logStream(journal);
    const lines = [1, 2, 3].map((n) => `${JSON.stringify({ level: 30, time: TIME, msg: `line ${n}` })}\n`);
    for (const line of lines) stream.write(line);
    vi.advanceTimersByTime(LOG_FLUSH_DELAY_MS);
    stream.write(lines[0] as string);
    vi.advanceTimersByTime(LOG_FLUSH_DELAY_MS);
    expect(written).toEqual([lines.join(''), lines[0]]);
  });

  it('hands over what it holds at once when flushed, and nothing twice', () => {
    const written: string[] = [];
    const journal = { isTTY: false, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const stream = logStream(journal);
    stream.write('{"msg":"last words"}\n');
    stream.flush();
    stream.flush();
    expect(written).toEqual(['{"msg":"last words"}\n']);
  });

  it('writes what it still holds when the process exits', async () => {
    const { stdout } = await execFileAsync(process.execPath, [
      '--input-type=module',
      '-e',
      `const { logStream } = await import(${JSON.stringify(LOG_STREAM_MODULE)});
       logStream().write('{"msg":"before exit"}\\n');
       process.exit(0);`,
    ]);
    expect(stdout).toBe('{"msg":"before exit"}\n');
  });
});
