import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Caller, isSysop } from '../caller.js';
import type { Database } from '../db/database.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import type { NetmailGateway } from '../mail/mail-service.js';
import { formatFtnAddress } from './ftn-address.js';
import { createNetmailGateway } from './ftn-netmail.js';
import type { FtnNetwork } from './ftn-networks.js';
import type { FtnObserver, FtnObserverRelay } from './ftn-observer.js';
import type { FtnScanner, ScanReport } from './ftn-scanner.js';
import type { FtnStore, TossJournalEntry } from './ftn-store.js';
import type { FtnTosser, TossReport } from './ftn-tosser.js';

/** Files waiting in a directory, and their bytes. */
export interface SpoolFiles {
  readonly files: number;
  readonly bytes: number;
}

export interface FtnLinkStatus {
  /** `zone:net/node[.point]` */
  readonly address: string;
  readonly role: 'hub' | 'downlink';
  /** Where the hub is called (`host:port`); null for a downlink, which calls us. */
  readonly calls: string | null;
  /** Packets and bundles waiting in the link's outbound. */
  readonly outbound: SpoolFiles;
}

export interface FtnNetworkStatus {
  readonly network: string;
  /** Ours in the network. */
  readonly address: string;
  readonly pollMinutes: number;
  /** Echomail areas carried. */
  readonly areas: number;
  readonly links: FtnLinkStatus[];
  /** Files received and not tossed yet. */
  readonly inbound: SpoolFiles;
  /** Files the tosser moved aside (each with a `.reason.txt`). */
  readonly bad: SpoolFiles;
  /** Netmail sent here and not packed yet. */
  readonly queuedNetmail: number;
  /** The newest file tossed or moved to bad, or null. */
  readonly lastToss: TossJournalEntry | null;
}

export interface FtnStatus {
  readonly networks: FtnNetworkStatus[];
}

/** What a serving node runs for the FTN networks (see `FtnService.startWorkers`). */
export interface FtnWorkers {
  /** Stops the timers and wake-ups, and waits for the work going on. */
  stop(): Promise<void>;
}

/** After a wake-up, a scan waits this long for more posts to come, so a burst goes out in one packet. */
const SCAN_DELAY_MS = 250;
/**
 * How often a serving node tosses and scans when nothing told it to: files another process
 * dropped into the inbound, posts no wake-up announced (another process on the SQLite file).
 */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The board's FTN networks as the operator works them: tossing the inbound, scanning for what
 * goes out, the figures of `baud ftn status` and `GET /admin/ftn`.
 */
export interface FtnService {
  readonly networks: ReadonlyMap<string, FtnNetwork>;
  /** Netmail from `POST /mail`, for the mail service. */
  readonly netmail: NetmailGateway;
  /** What the FTN side tells the metrics from now on (a serving node's). */
  observeWith(observer: FtnObserver): void;
  /** Calls `listener` when netmail was queued on this node (the scanner of a serving node packs it); returns the unsubscribe. */
  onNetmailQueued(listener: (network: string) => void): () => void;
  /**
   * Makes the spools' directories and gives new echomail areas their export cursors (what was
   * posted before an area joined a network stays here). Run when the board opens.
   */
  prepare(): Promise<void>;
  /** Tosses the inbound of one network, or of every network. Unknown name → 404. */
  toss(network?: string): Promise<TossReport[]>;
  /** Packs what goes out of one network, or of every network, into the outbounds. Unknown name → 404. */
  scan(network?: string): Promise<ScanReport[]>;
  /** Every network's figures (the operator at the console). */
  status(): Promise<FtnStatus>;
  /** The same for a caller of the API: sysops only (anonymous → 401, others → 403). */
  statusFor(caller: Caller): Promise<FtnStatus>;
  /**
   * What a serving node runs: a scan shortly after anything is written to the event log (a post
   * on any node: PostgreSQL's NOTIFY, or this node's append on SQLite) or netmail is queued here,
   * and a toss and a scan every minute whatever happens. Each network's work runs one piece at a time.
   */
  startWorkers(options: { readonly onError: (error: unknown) => void }): Promise<FtnWorkers>;
}

async function spoolFiles(directory: string, isCounted: (name: string) => boolean): Promise<SpoolFiles> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return { files: 0, bytes: 0 };
    throw error;
  }
  let files = 0;
  let bytes = 0;
  for (const name of names) {
    if (name.startsWith('.') || !isCounted(name)) continue;
    try {
      const info = await stat(path.join(directory, name));
      if (!info.isFile()) continue;
      files += 1;
      bytes += info.size;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    }
  }
  return { files, bytes };
}

const everyFile = () => true;
const notReason = (name: string) => !name.endsWith('.reason.txt');

export function createFtnService(deps: {
  networks: ReadonlyMap<string, FtnNetwork>;
  store: FtnStore;
  tosser: FtnTosser;
  scanner: FtnScanner;
  /** The relay the tosser and scanner report to. */
  observer: FtnObserverRelay;
  /** What wakes a serving node's scanner: the event log's appends here and its NOTIFY channel. */
  events: Pick<EventLog, 'onAppend' | 'channel'>;
  database: Pick<Database, 'listen'>;
}): FtnService {
  const { networks, store, tosser, scanner } = deps;
  const queuedListeners = new Set<(network: string) => void>();
  const netmail = createNetmailGateway({
    networks,
    store,
    onQueued: (network) => {
      for (const listener of queuedListeners) listener(network);
    },
  });

  function chosen(name: string | undefined): FtnNetwork[] {
    if (name === undefined) return [...networks.values()];
    const network = networks.get(name);
    if (!network) {
      const known = [...networks.keys()];
      throw new NotFoundError(
        'ftn.network-not-found',
        `No FTN network "${name}" (${known.length === 0 ? 'the board is in none' : `known: ${known.join(', ')}`}).`,
      );
    }
    return [network];
  }

  async function networkStatus(network: FtnNetwork, queued: ReadonlyMap<string, number>): Promise<FtnNetworkStatus> {
    const spool = network.spool();
    const links: FtnLinkStatus[] = [];
    for (const link of network.links) {
      links.push({
        address: link.name,
        role: link.role,
        calls: link.host === null ? null : `${link.host}:${link.port}`,
        outbound: await spoolFiles(spool.outboundFor(link.address), everyFile),
      });
    }
    const [lastToss] = await store.recentTosses(network.name, 1);
    return {
      network: network.name,
      address: formatFtnAddress(network.address),
      pollMinutes: network.pollMinutes,
      areas: network.echoByArea.size,
      links,
      inbound: await spoolFiles(spool.inbound, everyFile),
      bad: await spoolFiles(spool.bad, notReason),
      queuedNetmail: queued.get(network.name) ?? 0,
      lastToss: lastToss ?? null,
    };
  }

  const service: FtnService = {
    networks,
    netmail,

    observeWith: (observer) => deps.observer.attach(observer),

    onNetmailQueued(listener) {
      queuedListeners.add(listener);
      return () => queuedListeners.delete(listener);
    },

    async prepare() {
      for (const network of networks.values()) {
        // The spool's directories exist from the first start: where the sysop looks, and where a mailer drops files.
        for (const link of network.links) network.spool().outboundFor(link.address);
        await scanner.startCursors(network);
      }
    },

    async toss(name) {
      const reports: TossReport[] = [];
      for (const network of chosen(name)) reports.push(await tosser.tossInbound(network));
      return reports;
    },

    async scan(name) {
      const reports: ScanReport[] = [];
      for (const network of chosen(name)) reports.push(await scanner.scanNetwork(network));
      return reports;
    },

    async status() {
      const queued = await store.countQueuedNetmail();
      const statuses: FtnNetworkStatus[] = [];
      for (const network of networks.values()) statuses.push(await networkStatus(network, queued));
      return { networks: statuses };
    },

    async startWorkers({ onError }) {
      const workers = [...networks.values()].map((network) => startNetworkWorker(network, onError));
      const wakeAll = () => {
        for (const worker of workers) worker.requestScan();
      };
      const stopHearingAppends = deps.events.onAppend(wakeAll);
      const stopHearingNetmail = service.onNetmailQueued((name) =>
        workers.find((worker) => worker.network.name === name)?.requestScan(),
      );
      const stopListening = workers.length === 0 ? null : await deps.database.listen(deps.events.channel, wakeAll);
      for (const worker of workers) {
        worker.requestToss();
        worker.requestScan();
      }
      return {
        async stop() {
          stopHearingAppends();
          stopHearingNetmail();
          await stopListening?.();
          await Promise.all(workers.map((worker) => worker.stop()));
        },
      };
    },

    async statusFor(caller) {
      if (caller.kind === 'anonymous') throw new UnauthorizedError('auth.required');
      if (!isSysop(caller)) throw new ForbiddenError('ftn.sysops-only', "Only sysops see the board's FTN networks.");
      return service.status();
    },
  };
  /** One network's work on this node: scans, tosses (and polls), one at a time, never two of a kind queued. */
  function startNetworkWorker(network: FtnNetwork, onError: (error: unknown) => void) {
    let chain: Promise<void> = Promise.resolve();
    let isStopped = false;
    let scanTimer: NodeJS.Timeout | undefined;
    const queued = new Set<string>();
    const enqueue = (kind: string, job: () => Promise<unknown>) => {
      if (isStopped || queued.has(kind)) return;
      queued.add(kind);
      chain = chain
        .then(async () => {
          // Taken off the queue as it starts: what arrives while it runs asks for another.
          queued.delete(kind);
          if (!isStopped) await job();
        })
        .catch(onError);
    };
    const worker = {
      network,
      requestScan() {
        if (isStopped || scanTimer !== undefined) return;
        scanTimer = setTimeout(() => {
          scanTimer = undefined;
          enqueue('scan', () => scanner.scanNetwork(network));
        }, SCAN_DELAY_MS);
        scanTimer.unref();
      },
      requestToss() {
        enqueue('toss', async () => {
          const report = await tosser.tossInbound(network);
          // What came in may go on to the other links (we are the downlinks' hub).
          if (report.echomail > 0) worker.requestScan();
        });
      },
      async stop() {
        isStopped = true;
        clearTimeout(scanTimer);
        clearInterval(sweepTimer);
        await chain;
      },
    };
    const sweepTimer = setInterval(() => {
      worker.requestToss();
      worker.requestScan();
    }, SWEEP_INTERVAL_MS);
    sweepTimer.unref();
    return worker;
  }

  return service;
}
