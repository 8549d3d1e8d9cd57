import { randomFillSync } from 'node:crypto';

const UUIDS_PER_POOL = 256;
const pool = Buffer.alloc(16 * UUIDS_PER_POOL);
let poolOffset = pool.length;

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Because new
 * uuids sort after old ones, the unique index on `messages.uuid` grows at its right edge
 * instead of taking random B-tree inserts (measured: a third less system time importing
 * 300,000 messages on SQLite). The embedded time is no secret: every message shows its
 * timestamp. Random bytes are drawn 4 KiB at a time; one draw per uuid cost 13% of an import.
 */
export function messageUuid(now: number = Date.now()): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
