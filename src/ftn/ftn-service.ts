import { randomUUID } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { type Caller, isSysop } from '../caller.js';
import type { Database } from '../db/database.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import type { NetmailGateway } from '../mail/mail-service.js';
import { callLink } from './binkp-client.js';
import { type BinkpServer, startBinkpServer } from './binkp-server.js';
import type { BinkpProgress, BinkpSessionReport, BinkpSystemInfo } from './binkp-session.js';
import { type FtnAddress, formatFtnAddress, isSameFtnAddress } from './ftn-address.js';
import type { FtnLinkStore } from './ftn-link-store.js';
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

/** How the latest binkp session with a link went. */
export interface FtnLastSession {
  readonly at: string;
  readonly ok: boolean;
  /** Why it failed; null when it went well. */
  readonly error: string | null;
  readonly filesIn: number;
  readonly filesOut: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
}

export interface FtnLinkSummary {
  /** `zone:net/node[.point]` */
  readonly address: string;
  readonly role: 'hub' | 'downlink';
  /** Where the hub is called (`host:port`); null for a downlink, which calls us. */
  readonly calls: string | null;
  /** The latest session with the link (called or answered, on any node); null before the first. */
  readonly lastSession: FtnLastSession | null;
  /** The node whose session with the link runs now; null when none does. */
  readonly inSessionOn: string | null;
  /** Packets and bundles waiting in the link's outbound. */
  readonly outbound: SpoolFiles;
}

/** What one binkp session with a link moved, or `busy` when another session held the link. */
export type FtnSessionSummary =
  | { readonly link: string; readonly outcome: 'busy' }
  | {
      readonly link: string;
      readonly outcome: 'ok' | 'failed';
      /** Why it failed; absent when it went well. */
      readonly error?: string;
      readonly sent: readonly { readonly name: string; readonly size: number }[];
      readonly received: readonly { readonly name: string; readonly size: number }[];
      readonly bytesIn: number;
      readonly bytesOut: number;
      readonly seconds: number;
    };

/** What `poll` did for one network: packed, called the hub, tossed. */
export interface PollReport {
  readonly network: string;
  readonly scan: ScanReport;
  readonly session: FtnSessionSummary;
  readonly toss: TossReport;
}

export interface FtnNetworkStatus {
  readonly network: string;
  /** Ours in the network. */
  readonly address: string;
  readonly pollMinutes: number;
  /** Echomail areas carried. */
  readonly areas: number;
  readonly links: FtnLinkSummary[];
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
  /** The port the binkp server listens on; null when `contentServers.binkp` is off. */
  readonly binkpPort: number | null;
  /** Stops the binkp server (hanging up its sessions), the timers and wake-ups, and waits for the work going on. */
  stop(): Promise<void>;
}

/**
 * After a wake-up, a scan waits this long for more posts to come, so a burst goes out in one
 * packet. The scan runs after the post's commit, never inside it: posting 600 messages over the
 * API on SQLite (a pause after every 20, for the scans to run between posts) took 1.08 and 0.83 ms
 * at p50 without the workers and 1.19 and 0.74 ms with them, two runs each: within the noise.
 */
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
  /**
   * Calls the hub of one network, or of each: packs what goes out, runs a binkp session under
   * the link's lock (another session with the hub, on any node, makes it `busy`), records how it
   * went, and tosses what came. Unknown name → 404.
   */
  poll(
    network?: string,
    options?: {
      readonly onProgress?: (network: string, event: BinkpProgress) => void;
      readonly signal?: AbortSignal;
    },
  ): Promise<PollReport[]>;
  /** Every network's figures (the operator at the console). */
  status(): Promise<FtnStatus>;
  /** The same for a caller of the API: sysops only (anonymous → 401, others → 403). */
  statusFor(caller: Caller): Promise<FtnStatus>;
  /**
   * What a serving node runs: the binkp server when `contentServers.binkp` is on (a session's
   * files are tossed when it ends); a poll of each hub every `pollMinutes` (and at start); a scan
   * shortly after anything is written to the event log (a post on any node: PostgreSQL's NOTIFY,
   * or this node's append on SQLite) or netmail is queued here; and a toss and a scan every minute
   * whatever happens. Each network's work runs one piece at a time.
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
  /** The links' session locks and how their sessions went (shared by every node). */
  links: FtnLinkStore;
  /** `contentServers.binkp`: where a serving node answers calls. */
  binkp: { readonly enabled: boolean; readonly address: string; readonly port: number };
  /** What sessions tell the other side about this board (M_NUL). */
  system: BinkpSystemInfo;
}): FtnService {
  const { networks, store, tosser, scanner, links } = deps;
  const observer = deps.observer;
  /** Names this node in the link locks (`inSessionOn`): the host, the process, and this board of it. */
  const nodeId = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
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

  async function networkStatus(
    network: FtnNetwork,
    queued: ReadonlyMap<string, number>,
    sessions: Awaited<ReturnType<FtnLinkStore['listLinks']>>,
  ): Promise<FtnNetworkStatus> {
    const spool = network.spool();
    const summaries: FtnLinkSummary[] = [];
    for (const link of network.links) {
      const row = sessions.find((entry) => entry.network === network.name && entry.address === link.name);
      summaries.push({
        address: link.name,
        role: link.role,
        calls: link.host === null ? null : `${link.host}:${link.port}`,
        lastSession:
          row?.lastSessionAt == null
            ? null
            : {
                at: row.lastSessionAt,
                ok: row.lastSessionOk === true,
                error: row.lastSessionOk === true ? null : row.lastError,
                filesIn: row.lastFilesIn,
                filesOut: row.lastFilesOut,
                bytesIn: row.lastBytesIn,
                bytesOut: row.lastBytesOut,
              },
        inSessionOn: row?.lockedBy ?? null,
        outbound: await spoolFiles(spool.outboundFor(link.address), everyFile),
      });
    }
    const [lastToss] = await store.recentTosses(network.name, 1);
    return {
      network: network.name,
      address: formatFtnAddress(network.address),
      pollMinutes: network.pollMinutes,
      areas: network.echoByArea.size,
      links: summaries,
      inbound: await spoolFiles(spool.inbound, everyFile),
      bad: await spoolFiles(spool.bad, notReason),
      queuedNetmail: queued.get(network.name) ?? 0,
      lastToss: lastToss ?? null,
    };
  }

  /** Keeps how a session went (for the status) and counts it (for the metrics). */
  async function recordSession(network: string, link: FtnAddress, report: BinkpSessionReport): Promise<void> {
    await links.recordSession(network, link, {
      at: report.startedAt,
      ok: report.ok,
      ...(report.error === undefined ? {} : { error: report.error }),
      bytesIn: report.bytesIn,
      bytesOut: report.bytesOut,
      filesIn: report.received.length,
      filesOut: report.sent.length,
    });
    observer.session(report.ok ? 'ok' : 'error');
    observer.bytes('in', report.bytesIn);
    observer.bytes('out', report.bytesOut);
  }

  async function pollNetwork(
    network: FtnNetwork,
    options: { onProgress?: (network: string, event: BinkpProgress) => void; signal?: AbortSignal },
  ): Promise<PollReport> {
    const scan = await scanner.scanNetwork(network);
    const { hub } = network;
    const outcome = await links.withLinkLock(network.name, hub.address, nodeId, async () => {
      const report = await callLink({
        ourAddresses: [network.address],
        link: { address: hub.address, host: hub.host, port: hub.port, password: hub.password },
        spool: network.spool(),
        system: deps.system,
        ...(options.onProgress
          ? { onProgress: (event: BinkpProgress) => options.onProgress?.(network.name, event) }
          : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      await recordSession(network.name, hub.address, report);
      return report;
    });
    // What came in this session, or any earlier one, is tossed even when the hub was busy.
    const toss = await tosser.tossInbound(network);
    return { network: network.name, scan, session: sessionSummary(hub.name, outcome), toss };
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

    async poll(name, options = {}) {
      const reports: PollReport[] = [];
      for (const network of chosen(name)) reports.push(await pollNetwork(network, options));
      return reports;
    },

    async status() {
      const queued = await store.countQueuedNetmail();
      const sessions = await links.listLinks();
      const statuses: FtnNetworkStatus[] = [];
      for (const network of networks.values()) statuses.push(await networkStatus(network, queued, sessions));
      return { networks: statuses };
    },

    async startWorkers({ onError }) {
      const workers = [...networks.values()].map((network) => startNetworkWorker(network, onError));
      const workerOf = (name: string) => workers.find((worker) => worker.network.name === name);
      const wakeAll = () => {
        for (const worker of workers) worker.requestScan();
      };
      const stopHearingAppends = deps.events.onAppend(wakeAll);
      const stopHearingNetmail = service.onNetmailQueued((name) => workerOf(name)?.requestScan());
      let stopListening: (() => Promise<void>) | null = null;
      let server: BinkpServer | null = null;
      const stop = async () => {
        stopHearingAppends();
        stopHearingNetmail();
        await server?.close();
        await stopListening?.();
        await Promise.all(workers.map((worker) => worker.stop()));
      };
      try {
        if (workers.length > 0) stopListening = await deps.database.listen(deps.events.channel, wakeAll);
        if (deps.binkp.enabled && workers.length > 0) {
          server = await startBinkpServer({
            address: deps.binkp.address,
            port: deps.binkp.port,
            ourAddresses: [...networks.values()].map((network) => network.address),
            findLink: (presented) => answeredLink(networks, presented),
            lockLink: (network, address, run) => links.withLinkLock(network, address, nodeId, run),
            onSession: (report) => {
              recordSession(report.network, report.link, report).catch(onError);
              // What it brought goes in now (and on to the other links after).
              if (report.received.length > 0) workerOf(report.network)?.requestToss();
            },
            system: deps.system,
            onError,
          });
        }
      } catch (error) {
        await stop();
        throw error;
      }
      for (const worker of workers) {
        worker.requestToss();
        worker.requestScan();
        worker.startPolling();
      }
      return { binkpPort: server?.port ?? null, stop };
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
          enqueue('scan', async () => reportFailures(await scanner.scanNetwork(network), onError));
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
      /** Polls the hub now and every `pollMinutes` (none when it is 0: the hub's calls and `baud ftn poll` only). */
      startPolling() {
        if (network.pollMinutes === 0) return;
        const poll = () =>
          enqueue('poll', async () => {
            const report = await pollNetwork(network, {});
            reportFailures(report.scan, onError);
            if (report.session.outcome === 'failed') {
              onError(
                new Error(`${network.name}: calling ${network.hub.name} failed: ${report.session.error ?? 'unknown'}`),
              );
            }
            if (report.toss.echomail > 0) worker.requestScan();
          });
        poll();
        pollTimer = setInterval(poll, network.pollMinutes * 60_000);
        pollTimer.unref();
      },
      async stop() {
        isStopped = true;
        clearTimeout(scanTimer);
        clearInterval(sweepTimer);
        clearInterval(pollTimer);
        await chain;
      },
    };
    let pollTimer: NodeJS.Timeout | undefined;
    const sweepTimer = setInterval(() => {
      worker.requestToss();
      worker.requestScan();
    }, SWEEP_INTERVAL_MS);
    sweepTimer.unref();
    return worker;
  }

  return service;
}

/** The configured link among the addresses a caller presented, in any network: its password and spool. */
function answeredLink(networks: ReadonlyMap<string, FtnNetwork>, presented: readonly FtnAddress[]) {
  for (const network of networks.values()) {
    const link = network.links.find((candidate) =>
      presented.some((address) => isSameFtnAddress(address, candidate.address)),
    );
    if (link) return { address: link.address, password: link.password, spool: network.spool(), network: network.name };
  }
  return null;
}

function sessionSummary(link: string, outcome: BinkpSessionReport | 'busy'): FtnSessionSummary {
  if (outcome === 'busy') return { link, outcome: 'busy' };
  return {
    link,
    outcome: outcome.ok ? 'ok' : 'failed',
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    sent: outcome.sent.map(({ name, size }) => ({ name, size })),
    received: outcome.received.map(({ name, size }) => ({ name, size })),
    bytesIn: outcome.bytesIn,
    bytesOut: outcome.bytesOut,
    seconds: outcome.seconds,
  };
}

/** Messages a scan passed over are the sysop's to hear of: each goes to the log as an error. */
function reportFailures(report: ScanReport, onError: (error: unknown) => void): void {
  for (const failure of report.failed) {
    onError(new Error(`${report.network}: message ${failure.messageId} was not packed: ${failure.reason}`));
  }
}
