import type { CredentialCosts } from './credential-costs.js';
import type { LoadFigures } from './load-driver.js';
import type { Machine } from './machine.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** One request scenario: the same load against the bare ceiling and against baud. */
export interface RequestScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly connections: number;
  readonly ceiling: LoadFigures;
  readonly baud: LoadFigures;
  /** baud req/s ÷ ceiling req/s. */
  readonly ratio: number;
  /** Why the figures cannot be trusted (errors, unexpected statuses), or null. */
  readonly problem: string | null;
}

/** A single big transfer: baud against a reference that moves the same bytes without baud. */
export interface TransferResult {
  readonly bytes: number;
  readonly baudBytesPerSec: number;
  readonly referenceBytesPerSec: number;
  readonly referenceTitle: string;
  readonly ratio: number;
  /** Highest sampled server RSS during the transfer minus the RSS just before it. */
  readonly rssGrowthBytes: number;
  /** Other references measured beside, in bytes/s (e.g. `fs.copyFile`, which may copy in the kernel). */
  readonly alsoMeasured: Readonly<Record<string, number>>;
  readonly problem: string | null;
}

export interface LoginCost {
  /** Median time of one argon2 verification of the stored hash, alone, in this process. */
  readonly argon2Ms: number;
  /** The parameters read from the stored hash (`m=…,t=…,p=…`). */
  readonly argon2Parameters: string;
  /** What the cores could do if a login were nothing but its argon2 verification. */
  readonly argon2BoundReqPerSec: number;
  /** Login req/s ÷ that bound. */
  readonly ratioToArgon2Bound: number;
}

export interface DatabaseRun {
  readonly database: DatabaseKind;
  readonly messageCount: number;
  readonly seeding: { readonly seconds: number; readonly messagesPerSec: number };
  /** Walking every page (limit 100) to find the deep cursor, which also counts the messages. */
  readonly walk: { readonly pages: number; readonly messagesSeen: number; readonly seconds: number };
  /** The message the deep page starts after (its cursor's key is this message's position). */
  readonly deepPageAfterMessage: number;
  readonly idleRssBytes: number;
  /**
   * PostgreSQL only: page times (one request at a time, median of 3) right after the import
   * and after the ANALYZE the bench runs before measuring; null on SQLite.
   */
  readonly statistics: {
    readonly autovacuum: string;
    readonly analyzeSeconds: number;
    readonly firstPageMs: { readonly before: number; readonly after: number };
    readonly cursorPageMs: { readonly before: number; readonly after: number };
  } | null;
  readonly scenarios: readonly RequestScenarioResult[];
  readonly login: LoginCost | null;
  readonly upload: TransferResult | null;
  readonly download: TransferResult | null;
  /** `VmHWM` of the server when it stopped: its highest RSS during the whole run. */
  readonly peakRssBytes: number;
  readonly problems: readonly string[];
}

export interface BenchSettings {
  readonly quick: boolean;
  readonly messageCount: number;
  readonly transferBytes: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly readConnections: number;
  readonly writeConnections: number;
  readonly logLevel: string;
}

export interface BenchRun {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly settings: BenchSettings;
  readonly machine: Machine;
  readonly build: {
    /** `head`: the committed tree of `machine.commit`; `worktree`: src/ as it was on disk. */
    readonly source: 'head' | 'worktree';
    readonly seconds: number;
    readonly typeErrors: readonly string[];
  };
  readonly runs: readonly DatabaseRun[];
  readonly credentials: CredentialCosts;
}
