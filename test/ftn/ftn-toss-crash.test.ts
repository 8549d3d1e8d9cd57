import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { writeBundle } from '../../src/ftn/bundle.js';
import { baudCommand, baudEnvironment } from '../support/baud-command.js';
import { deepMerge, describeEachDialect } from '../support/test-board.js';
import { createFtnTestBoard, dropInbound, type FtnTestBoard, ftnConfig, hubEchomail, packetFrom } from './ftn-board.js';

const BUNDLES = 15;
const PACKETS_PER_BUNDLE = 4;
const MESSAGES_PER_PACKET = 100;
/**
 * Enough that the toss is still running when the first packet is in and it is killed: about a
 * second of work at the thousands of messages a second it tosses, against the few milliseconds
 * between seeing that packet and the kill.
 */
const MESSAGES = BUNDLES * PACKETS_PER_BUNDLE * MESSAGES_PER_PACKET;

/**
 * A toss killed with SIGKILL in the middle, as a crash or the OOM killer would: each packet went
 * in whole or not at all, and tossing again brings in the rest, refusing what was in already as
 * duplicates (the bundle it was in stays in the inbound until every packet of it is in).
 */
describeEachDialect('baud ftn toss killed mid-way', (dialect) => {
  let board: FtnTestBoard;
  beforeEach(async () => {
    board = await createFtnTestBoard(dialect);
  });
  afterEach(async () => {
    await board.close();
  });

  const count = async (query: string): Promise<number> => {
    const { rows } = await sql<{ n: number | string }>`${sql.raw(query)}`.execute(board.board.db);
    return Number(rows[0]?.n ?? 0);
  };

  it('leaves each packet in whole or not at all, and tossing again brings in the rest, none twice', async () => {
    for (let bundle = 0; bundle < BUNDLES; bundle += 1) {
      const entries = Array.from({ length: PACKETS_PER_BUNDLE }, (_, packet) => {
        const first = (bundle * PACKETS_PER_BUNDLE + packet) * MESSAGES_PER_PACKET;
        const messages = Array.from({ length: MESSAGES_PER_PACKET }, (_, index) =>
          hubEchomail({ subject: `Crash test ${first + index}`, msgIdSerial: 0x10000 + first + index }),
        );
        return { name: `${String(packet + 1).padStart(8, '0')}.pkt`, data: packetFrom(messages) };
      });
      const name = `${(0xa000 + bundle).toString(16).padStart(8, '0')}.th0`;
      dropInbound(board, name, writeBundle(entries, { modifiedAt: new Date('2026-11-20T10:00:00Z') }));
    }
    const configPath = path.join(board.dir, 'toss.hjson');
    writeFileSync(
      configPath,
      JSON.stringify(
        deepMerge(ftnConfig(), {
          paths: { dataDir: board.dir },
          database: { url: board.databaseUrl },
          logging: { level: 'silent' },
        }),
      ),
    );

    const [program, programArgs] = baudCommand(['ftn', 'toss', '--config', configPath, '--json']);
    const child = spawn(program, programArgs, { stdio: 'ignore', detached: true, env: baudEnvironment() });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const stored = () => count('SELECT COUNT(*) AS n FROM messages');
    await expect.poll(stored, { interval: 20, timeout: 60_000 }).toBeGreaterThan(0);
    process.kill(-(child.pid ?? 0), 'SIGKILL');
    await exited;
    const afterKill = await stored();
    expect(afterKill % MESSAGES_PER_PACKET, 'a packet is in whole or not at all').toBe(0);
    expect(afterKill, 'the toss must still be running when it is killed').toBeLessThan(MESSAGES);
    const { inbound } = board.network.spool();
    expect(readdirSync(inbound).length).toBeGreaterThan(0);

    const [report] = await board.board.ftn.toss('fsxnet');
    expect(report).toMatchObject({ echomail: MESSAGES - afterKill, netmail: 0, skipped: 0, bad: 0 });
    // Only the packets of the bundle cut short come again, each refused whole as duplicates.
    expect(report?.duplicates ?? -1).toBeLessThanOrEqual(PACKETS_PER_BUNDLE * MESSAGES_PER_PACKET);
    expect((report?.duplicates ?? -1) % MESSAGES_PER_PACKET).toBe(0);
    expect(readdirSync(inbound)).toEqual([]);

    expect(await stored()).toBe(MESSAGES);
    expect(await count('SELECT COUNT(DISTINCT subject) AS n FROM messages')).toBe(MESSAGES);
    expect(await count('SELECT COUNT(*) AS n FROM ftn_message_ids')).toBe(MESSAGES);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE type = 'message.created'")).toBe(MESSAGES);
    expect(await count('SELECT COUNT(*) AS n FROM message_search')).toBe(MESSAGES);
    expect(await count("SELECT message_count AS n FROM message_areas WHERE area_tag = 'fsx_gen'")).toBe(MESSAGES);
  });
});
