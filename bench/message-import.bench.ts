/**
 * Measures `importMessages` on SQLite: generates a JSON Lines file of N messages in a temp
 * directory (10% replies, a few with FTN metadata, ~400-byte bodies), imports it into a fresh
 * board and prints messages/second.
 *
 *   npx tsx bench/message-import.bench.ts [count=1000000] [database-url]
 *
 * With a `postgres://…?schema=name` URL it measures PostgreSQL instead (the schema must be new).
 */

import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { openBoard } from '../src/board.js';
import { configFromObject } from '../src/config/load-config.js';
import { importMessages } from '../src/messages/message-import.js';

const count = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(path.join(tmpdir(), 'baud-bench-import-'));
const databaseUrl = process.argv[3] ?? `sqlite:${path.join(dir, 'baud.db')}`;
const file = path.join(dir, 'messages.jsonl');

async function writeFixture(): Promise<void> {
  const out = createWriteStream(file);
  const paragraph = 'The quick brown fox jumps over the lazy dog while the modem sings at 2400 baud. ';
  const start = Date.parse('2020-01-01T00:00:00Z');
  for (let line = 1; line <= count; line += 1) {
    const message: Record<string, unknown> = {
      from: `User ${line % 997}`,
      to: line % 5 === 0 ? `User ${line % 13}` : 'All',
      subject: `Message number ${line} about things`,
      body: `${paragraph.repeat(5)}\n-- line ${line}`,
      timestamp: new Date(start + line * 60_000).toISOString(),
    };
    if (line > 10 && line % 10 === 0) message.replyTo = line - 7;
    if (line % 50 === 0) message.ftn = { ftnMsgId: `1:2/3 ${line.toString(16)}`, ftnSeenBy: ['1/2', '1/3'] };
    if (!out.write(`${JSON.stringify(message)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

const config = configFromObject({
  paths: { dataDir: dir },
  database: { url: databaseUrl },
  logging: { level: 'silent' },
  messageConferences: { main: { name: 'Main', areas: { general: { name: 'General' } } } },
});

try {
  await writeFixture();
  console.error(`fixture: ${count} messages, ${(statSync(file).size / 1024 / 1024).toFixed(0)} MiB`);
  const board = await openBoard(config);
  try {
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    const started = performance.now();
    const { imported } = await importMessages(board, 'general', lines, (done) => {
      if (done % 100_000 === 0) console.error(`  ${done} …`);
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${board.database.dialect}: imported ${imported} messages in ${seconds.toFixed(1)} s = ${Math.round(imported / seconds)} messages/second`,
    );
  } finally {
    await board.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
