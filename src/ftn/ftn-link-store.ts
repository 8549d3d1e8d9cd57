import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../clock.js';
import type { Db } from '../db/database.js';
import { type FtnAddress, formatFtnAddress } from './ftn-address.js';

/** How one session went, as `recordSession` keeps it (from the session's report). */
export interface FtnSessionRecord {
  readonly at: Date;
  readonly ok: boolean;
  readonly error?: string;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly filesIn: number;
  readonly filesOut: number;
}

/** A link's row for the status pages: who holds it now, its latest session, its last failure. */
export interface FtnLinkStatus {
  readonly network: string;
  /** `zone:net/node[.point]`. */
  readonly address: string;
  /** The node whose session runs now (its lease has not run out); null when none does. */
  readonly lockedBy: string | null;
  readonly lastSessionAt: string | null;
  /** Null before the first session. */
  readonly lastSessionOk: boolean | null;
  readonly lastOkAt: string | null;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
  readonly lastFilesIn: number;
  readonly lastFilesOut: number;
  readonly lastBytesIn: number;
  readonly lastBytesOut: number;
  readonly sessions: number;
  readonly failedSessions: number;
}

export interface FtnLinkStore {
  /**
   * Runs `run` holding the link's lease, or resolves to 'busy' without running it when another
   * session (on this node or another) holds it. The lease is taken with one conditional UPDATE,
   * so of two nodes racing exactly one wins; it is renewed while `run` runs and released after,
   * whatever `run` does. A lease its node did not release (a crash) runs out and is taken.
   */
  withLinkLock<T>(network: string, address: FtnAddress, nodeId: string, run: () => Promise<T>): Promise<T | 'busy'>;
  /** Keeps how a session with the link went: its latest session, counts, and the failure if it failed. */
  recordSession(network: string, address: FtnAddress, session: FtnSessionRecord): Promise<void>;
  /** Every link a session has touched, by network and address. Links are the few the config names. */
  listLinks(): Promise<FtnLinkStatus[]>;
}

export interface FtnLinkStoreOptions {
  readonly clock?: Clock;
  /**
   * How long a lease holds without renewal (renewed every third of it): how long a crashed
   * node keeps its links from the others. 2 minutes outlasts any pause of a live node.
   */
  readonly leaseSeconds?: number;
}

const DEFAULT_LEASE_SECONDS = 120;

/** The key of a link within its network: its address without a domain (the network is the namespace). */
function addressKey(address: FtnAddress): string {
  return formatFtnAddress({ ...address, domain: null });
}

export function createFtnLinkStore(db: Db, options: FtnLinkStoreOptions = {}): FtnLinkStore {
  const clock = options.clock ?? systemClock;
  const leaseMs = (options.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;

  async function ensureRow(network: string, address: string): Promise<void> {
    await db
      .insertInto('ftnLinks')
      .values({ network, address })
      .onConflict((conflict) => conflict.columns(['network', 'address']).doNothing())
      .execute();
  }

  return {
    async withLinkLock(network, address, nodeId, run) {
      const key = addressKey(address);
      await ensureRow(network, key);
      const leaseId = randomUUID();
      const now = clock.now();
      // Free or run out, in the statement itself: PostgreSQL re-checks the condition on the row
      // a concurrent winner just wrote, SQLite runs one writer at a time.
      const taken = await db
        .updateTable('ftnLinks')
        .set({ leaseOwner: nodeId, leaseId, leaseUntil: new Date(now.getTime() + leaseMs).toISOString() })
        .where('network', '=', network)
        .where('address', '=', key)
        .where((eb) => eb.or([eb('leaseUntil', 'is', null), eb('leaseUntil', '<', now.toISOString())]))
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return 'busy';
      const renewal = setInterval(() => {
        db.updateTable('ftnLinks')
          .set({ leaseUntil: new Date(clock.now().getTime() + leaseMs).toISOString() })
          .where('leaseId', '=', leaseId)
          .execute()
          // A renewal that fails leaves the lease to its time; the next one tries again.
          .catch(() => {});
      }, leaseMs / 3);
      renewal.unref();
      try {
        return await run();
      } finally {
        clearInterval(renewal);
        await db
          .updateTable('ftnLinks')
          .set({ leaseOwner: null, leaseId: null, leaseUntil: null })
          .where('leaseId', '=', leaseId)
          .execute();
      }
    },

    async recordSession(network, address, session) {
      const key = addressKey(address);
      const at = session.at.toISOString();
      await ensureRow(network, key);
      await db
        .updateTable('ftnLinks')
        .set((eb) => ({
          lastSessionAt: at,
          lastSessionOk: session.ok ? 1 : 0,
          lastFilesIn: session.filesIn,
          lastFilesOut: session.filesOut,
          lastBytesIn: session.bytesIn,
          lastBytesOut: session.bytesOut,
          sessions: eb('sessions', '+', 1),
          ...(session.ok
            ? { lastOkAt: at }
            : {
                lastError: session.error ?? 'failed',
                lastErrorAt: at,
                failedSessions: eb('failedSessions', '+', 1),
              }),
        }))
        .where('network', '=', network)
        .where('address', '=', key)
        .execute();
    },

    async listLinks() {
      const now = clock.now().toISOString();
      const rows = await db.selectFrom('ftnLinks').selectAll().orderBy('network').orderBy('address').execute();
      return rows.map((row) => ({
        network: row.network,
        address: row.address,
        lockedBy: row.leaseUntil !== null && row.leaseUntil >= now ? row.leaseOwner : null,
        lastSessionAt: row.lastSessionAt,
        lastSessionOk: row.lastSessionOk === null ? null : row.lastSessionOk === 1,
        lastOkAt: row.lastOkAt,
        lastError: row.lastError,
        lastErrorAt: row.lastErrorAt,
        lastFilesIn: Number(row.lastFilesIn),
        lastFilesOut: Number(row.lastFilesOut),
        lastBytesIn: Number(row.lastBytesIn),
        lastBytesOut: Number(row.lastBytesOut),
        sessions: Number(row.sessions),
        failedSessions: Number(row.failedSessions),
      }));
    },
  };
}
