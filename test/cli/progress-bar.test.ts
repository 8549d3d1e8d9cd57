import { describe, expect, it } from 'vitest';
import { createProgressBar } from '../../src/cli/progress-bar.js';

/** A stream that records what is written, as a terminal or as a pipe. */
function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, write: (text: string) => writes.push(text) } as unknown as NodeJS.WriteStream };
}

describe('progress bar', () => {
  it('redraws one line on a terminal with counts, rate and time left, and ends it', () => {
    const { writes, stream } = fakeStream(true);
    let now = 0;
    const bar = createProgressBar('messages', 'messages', stream, () => now);
    now = 1000;
    bar.update(250, 1000);
    now = 1050; // too soon to redraw
    bar.update(260, 1000);
    now = 2000;
    bar.update(1000, 1000);
    bar.finish();
    expect(writes).toEqual([
      '\r\u001b[2Kmessages [######..................] 250/1,000 messages, 250/s, 3 s left',
      '\r\u001b[2Kmessages [########################] 1,000/1,000 messages, 500/s',
      '\n',
    ]);
  });

  it('writes a plain line at most every 5 s to a pipe, and always the last one', () => {
    const { writes, stream } = fakeStream(false);
    let now = 0;
    const bar = createProgressBar('files', 'files', stream, () => now);
    now = 1000;
    bar.update(1, 10);
    now = 3000;
    bar.update(2, 10);
    now = 7000;
    bar.update(5, 10);
    now = 8000;
    bar.update(10, 10);
    bar.finish();
    expect(writes).toEqual([
      'files [##......................] 1/10 files, 1/s, 9 s left\n',
      'files [############............] 5/10 files, 1/s, 7 s left\n',
      'files [########################] 10/10 files, 1/s\n',
    ]);
  });
});
