import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logStream, readableLogLine } from '../../src/logging/log-stream.js';

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
  it('writes readable lines to a terminal', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    logStream(terminal).write(`${JSON.stringify({ level: 40, time: TIME, msg: 'slow disk' })}\n`);
    expect(written).toEqual(['19:20:01.123 WARN  slow disk\n']);
  });

  it('writes JSON lines, unchanged, to anything else, and has them on disk once flushed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'baud-log-'));
    const file = path.join(dir, 'server.log');
    const fd = openSync(file, 'w');
    try {
      const stream = logStream({ isTTY: false, fd } as unknown as NodeJS.WriteStream) as ReturnType<
        typeof logStream
      > & { flushSync(): void };
      const lines = [1, 2, 3].map((n) => `${JSON.stringify({ level: 30, time: TIME, msg: `line ${n}` })}\n`);
      for (const line of lines) stream.write(line);
      await new Promise((resolve) => setTimeout(resolve, 50));
      stream.flushSync();
      expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
