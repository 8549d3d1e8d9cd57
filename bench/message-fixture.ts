import { once } from 'node:events';
import { createWriteStream, statSync } from 'node:fs';

const PARAGRAPH = 'The quick brown fox jumps over the lazy dog while the modem sings at 2400 baud. ';
const FIRST_TIMESTAMP = Date.parse('2020-01-01T00:00:00Z');

/** The first lines of the fixture are one thread of this many messages … */
export const THREAD_MESSAGES = 10_000;
/** … this many levels deep: lines 1..50 are a chain of replies, the rest hang under levels 1..49 in turn. */
export const THREAD_LEVELS = 50;

/** The line an earlier line replies to, or null: the big thread first, then 10% replies (to the line seven earlier). */
function replyToLine(line: number): number | null {
  if (line <= THREAD_MESSAGES) {
    if (line === 1) return null;
    return line <= THREAD_LEVELS ? line - 1 : (line % (THREAD_LEVELS - 1)) + 1;
  }
  return line % 10 === 0 ? line - 7 : null;
}

/**
 * Writes `count` messages as the JSON Lines `baud message import` reads: ~400-byte bodies,
 * every fifth to a named user, every fiftieth with FTN metadata, one minute apart; the first
 * THREAD_MESSAGES one thread THREAD_LEVELS deep, then 10% replies. Line N becomes message N of
 * a fresh area, in this order. Returns the file's size in bytes.
 */
export async function writeMessageFixture(
  file: string,
  count: number,
  onProgress: (written: number) => void,
): Promise<number> {
  const out = createWriteStream(file);
  for (let line = 1; line <= count; line += 1) {
    const message: Record<string, unknown> = {
      from: `User ${line % 997}`,
      to: line % 5 === 0 ? `User ${line % 13}` : 'All',
      subject: `Message number ${line} about things`,
      body: `${PARAGRAPH.repeat(5)}\n-- line ${line}`,
      timestamp: new Date(FIRST_TIMESTAMP + line * 60_000).toISOString(),
    };
    const replyTo = replyToLine(line);
    if (replyTo !== null) message.replyTo = replyTo;
    if (line % 50 === 0) message.ftn = { ftnMsgId: `1:2/3 ${line.toString(16)}`, ftnSeenBy: ['1/2', '1/3'] };
    if (!out.write(`${JSON.stringify(message)}\n`)) await once(out, 'drain');
    if (line % 50_000 === 0) onProgress(line);
  }
  out.end();
  await once(out, 'finish');
  onProgress(count);
  return statSync(file).size;
}
