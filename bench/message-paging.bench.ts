/**
 * Keyset pagination benchmark: loads N messages into one area (SQLite by default), then
 * times GET /messages/areas/:areaTag/messages for the first page and for a page near the end
 * (continuing from a cursor just before the last 100 messages), both through the real app.
 * Keyset paging promises the deep page costs the same as the first: the run fails (exit 1)
 * if the deep page is more than 2× slower. Figures are a ratio measured in the same run.
 *
 *   npx tsx bench/message-paging.bench.ts [count=200000] [database-url]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { openBoard } from '../src/board.js';
import { configFromObject } from '../src/config/load-config.js';
import { importMessages } from '../src/messages/message-import.js';
import { areaMessageListId } from '../src/messages/message-service.js';

const count = Number(process.argv[2] ?? 200_000);
const ROUNDS = 300;
const MAX_RATIO = 2;
const dir = mkdtempSync(path.join(tmpdir(), 'baud-bench-paging-'));
const databaseUrl = process.argv[3] ?? `sqlite:${path.join(dir, 'baud.db')}`;

async function* generatedLines(): AsyncIterable<string> {
  const start = Date.parse('2020-01-01T00:00:00Z');
  for (let line = 1; line <= count; line += 1) {
    yield JSON.stringify({
      from: `User ${line % 997}`,
      to: 'All',
      subject: `Message ${line}`,
      body: `Body of message ${line}. `.repeat(20),
      timestamp: new Date(start + line * 60_000).toISOString(),
    });
  }
}

const config = configFromObject({
  paths: { dataDir: dir },
  database: { url: databaseUrl },
  logging: { level: 'silent' },
  messageConferences: { main: { name: 'Main', areas: { general: { name: 'General' } } } },
  contentServers: { web: { restApi: { messages: { publicAccess: { main: { include: ['*'] } } } } } },
});

let failed = false;
try {
  const board = await openBoard(config);
  const app = await buildApp(config, { board, logger: false });
  try {
    await importMessages(board, 'general', generatedLines());
    const last = await board.db
      .selectFrom('messages')
      .select((eb) => eb.fn.max('id').as('maxId'))
      .executeTakeFirstOrThrow();
    const deepCursor = board.cursors.encode(areaMessageListId('general'), Number(last.maxId) - 100);
    const url = '/_baud/api/v1/messages/areas/general/messages?limit=100';
    const time = async (target: string) => {
      const started = performance.now();
      for (let round = 0; round < ROUNDS; round += 1) {
        const response = await app.inject({ method: 'GET', url: target });
        if (response.statusCode !== 200) throw new Error(`${target} answered ${response.statusCode}`);
      }
      return (performance.now() - started) / ROUNDS;
    };
    await time(url); // warm-up
    const firstMs = await time(url);
    const deepMs = await time(`${url}&cursor=${deepCursor}`);
    const ratio = deepMs / firstMs;
    console.log(
      `${board.database.dialect}, ${count} messages: first page ${firstMs.toFixed(2)} ms, page near the end ${deepMs.toFixed(2)} ms, ratio ${ratio.toFixed(2)} (limit ${MAX_RATIO})`,
    );
    failed = ratio > MAX_RATIO;
  } finally {
    await app.close();
    await board.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(failed ? 'FAIL' : 'PASS');
process.exitCode = failed ? 1 : 0;
