import type { CredentialCosts } from './credential-costs.js';
import type { LoadFigures } from './load-driver.js';
import type { Machine } from './machine.js';
import type { TwoFactorLoginCost } from './two-factor-login.js';

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

/**
 * Event fan-out: `streams` SSE streams (`GET /events?types=message.created`) open on one node,
 * `postsPerSecond` posts for a while, and the delay from each post's 201 to its frame on each stream.
 */
export interface EventFanoutResult {
  readonly streams: number;
  readonly posts: number;
  readonly postsPerSecond: number;
  /** Time to open every stream (up to its `retry:` greeting), 50 at a time. */
  readonly openSeconds: number;
  /** streams × posts. */
  readonly expectedDeliveries: number;
  /** Frames of acknowledged posts that arrived, at most one per stream and message. */
  readonly deliveries: number;
  /** Delay from the post's 201 to the frame, over every delivery; a frame before the 201 counts as 0. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Deliveries whose frame arrived before the post's 201 (the clamped ones). */
  readonly earlyDeliveries: number;
  /** Server RSS before the streams, with them open and idle, and after the posts were delivered. */
  readonly rssBeforeBytes: number;
  readonly rssWithStreamsBytes: number;
  readonly rssAfterPostsBytes: number;
  /** (RSS with the streams − RSS before) ÷ streams. */
  readonly bytesPerStream: number;
  readonly problem: string | null;
}

/** Nearest-rank percentiles of a set of times, and the longest. */
export interface TimeSpread {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Terminal callers dialling in one after another, each hung up at the main menu before the next dials. */
export interface TerminalLoginTimes {
  /** `key`: an ed25519 key registered for the account; `password`: its password, one argon2 verification per login. */
  readonly method: 'key' | 'password';
  /** Logins that reached the main menu (the times are theirs). */
  readonly logins: number;
  readonly failures: number;
  readonly firstFailure: string | null;
  /** From the client's `ready` (the node accepted the login) to the first `Your choice: `: shell, welcome, menu. */
  readonly readyToMenu: TimeSpread;
  /** From dialling to the first `Your choice: `: TCP, key exchange and the login too. */
  readonly connectToMenu: TimeSpread;
}

/**
 * Terminal callers over SSH on one node: `callers` idle callers at the main menu at once, the
 * node's RSS before and with them, and then login → main menu, one caller at a time.
 */
export interface TerminalCallersResult {
  readonly callers: number;
  /** Bench accounts the callers are spread over (their sessions, `callers / accounts` each). */
  readonly accounts: number;
  /** Callers at the main menu and still connected when the RSS was read. */
  readonly held: number;
  /** Time to dial every caller up to its main menu, several at once. */
  readonly openSeconds: number;
  /** Server RSS after start, with every caller connected and idle, and after they all hung up. */
  readonly rssBeforeBytes: number;
  readonly rssWithCallersBytes: number;
  readonly rssAfterCloseBytes: number;
  /** (RSS with the callers − RSS before) ÷ held. */
  readonly bytesPerCaller: number;
  /** Live terminal sessions of the callers' accounts while they were held (their `GET /users/me/sessions`). */
  readonly sessionsWhileHeld: number;
  /** From the last caller's hang-up until none of those sessions was live; null when some were left. */
  readonly sessionsEndedMs: number | null;
  /** With a key, then with a password. */
  readonly logins: readonly TerminalLoginTimes[];
  readonly problem: string | null;
}

/** `baud ftn toss` of a generated packet set (bundles of echomail from the hub), as its own process. */
export interface FtnTossResult {
  /** Echomail messages generated into the bundles. */
  readonly messages: number;
  readonly bundles: number;
  readonly packets: number;
  /** The bundles' bytes (zipped). */
  readonly bytes: number;
  /** Echomail messages the toss reported imported. */
  readonly tossed: number;
  /** From spawning `baud ftn toss` to its exit: start-up included. */
  readonly seconds: number;
  /** tossed ÷ seconds. */
  readonly messagesPerSec: number;
  /** The toss process's VmHWM, read until it exited. */
  readonly peakRssBytes: number;
  /** A miscount (tossed ≠ generated), duplicates, bad files, files left: the figure cannot be trusted. */
  readonly problem: string | null;
}

/** Posting into one area under the load of the post scenario, timed here per request (sub-millisecond). */
export interface PostTimes {
  readonly areaTag: string;
  /** Posts answered 201 in the measured rounds. */
  readonly posts: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/**
 * The post scenario into an area of no network and into an echomail area of the board's network,
 * in alternating rounds on the same node, whose scanner exports the echomail posts meanwhile.
 */
export interface EchomailPostingResult {
  readonly connections: number;
  /** Rounds of each area, taking turns at going first. */
  readonly rounds: number;
  readonly roundSeconds: number;
  readonly plain: PostTimes;
  readonly echomail: PostTimes;
  /** echomail p50 ÷ plain p50. */
  readonly ratio: number;
  /** Posts into the echomail area answered 201, warm-up included: each must be exported. */
  readonly echomailPosted: number;
  /** Of those, messages found in the packets in the hub's outbound after the rounds. */
  readonly exported: number;
  /** Packets the scanner wrote into the hub's outbound. */
  readonly packets: number;
  /** The longest wait, after an echomail round's last post, until the outbound held every post so far. */
  readonly exportLagSeconds: number;
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
  /** A login with a TOTP code beside one without (absent in results of older runs; null when it failed). */
  readonly twoFactor?: TwoFactorLoginCost | null;
}

export interface DatabaseRun {
  readonly database: DatabaseKind;
  readonly messageCount: number;
  readonly seeding: { readonly seconds: number; readonly messagesPerSec: number };
  /** The same import by a build that writes no search index, just before the seeding (null in older results). */
  readonly importWithoutIndex: { readonly seconds: number; readonly messagesPerSec: number } | null;
  /** Walking every page (limit 100) to find the deep cursor, which also counts the messages. */
  readonly walk: { readonly pages: number; readonly messagesSeen: number; readonly seconds: number };
  /** The message the deep page starts after (its cursor's key is this message's position). */
  readonly deepPageAfterMessage: number;
  readonly idleRssBytes: number;
  /** Server RSS after start, after one client walked the whole area (100 a page) and after a second walk. */
  readonly crawlMemory: {
    readonly afterStartBytes: number;
    readonly afterWalkBytes: number;
    readonly afterSecondWalkBytes: number;
  };
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
  /** Measured on a second node of the board, started for it; null when it could not run at all. */
  readonly eventFanout: EventFanoutResult | null;
  /** Measured on a node of the board that takes SSH callers, started for it; null when it could not run at all. */
  readonly terminalCallers: TerminalCallersResult | null;
  /** Posting with and without an echomail area (null when it could not run at all). */
  readonly echomailPosting: EchomailPostingResult | null;
  /** `baud ftn toss` after the server stopped (null when it could not run at all). */
  readonly ftnToss: FtnTossResult | null;
  /** `VmHWM` of the server when it stopped: its highest RSS during the whole run. */
  readonly peakRssBytes: number;
  readonly problems: readonly string[];
}

export interface BenchSettings {
  readonly quick: boolean;
  readonly messageCount: number;
  /** Echomail messages in the generated packet set `baud ftn toss` takes. */
  readonly ftnTossMessages: number;
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
