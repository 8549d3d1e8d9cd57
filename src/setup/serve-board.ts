import { type BuildAppOptions, buildApp, METRICS_COUNTED_ROUTES } from '../app.js';
import { openBoard } from '../board.js';
import type { Config } from '../config/load-config.js';
import type { Dialect } from '../db/database.js';
import type { FtnWorkers } from '../ftn/ftn-service.js';
import { API_PREFIX } from '../http/api-prefix.js';
import { createBoardMetrics, listenForMetrics, type MetricsListener } from '../metrics/board-metrics.js';
import { startCallerSession } from '../terminal/caller-session.js';
import { type StartCallerSession, startTerminalServers, type TerminalServers } from '../terminal/terminal-servers.js';
import { type ConfigWarning, checkConfig } from './config-check.js';

export interface RunningBoard {
  readonly url: string;
  /** Where Prometheus scrapes this node (`metrics.enabled`), or null. */
  readonly metricsUrl: string | null;
  /** The web reader's page, or null when this node serves none. */
  readonly readerUrl: string | null;
  /** `sqlite` or `postgres` */
  readonly dialect: Dialect;
  /**
   * The migrations this node applied as it started; empty when another node (or an earlier
   * start) already had. Nodes starting together apply each one once between them.
   */
  readonly appliedMigrations: readonly string[];
  /** What the configuration does that is almost never meant; each is also logged at start-up. */
  readonly warnings: readonly ConfigWarning[];
  /** Where SSH callers dial in, and the fingerprint of the host key their client is shown; null when not serving SSH. */
  readonly ssh: TerminalServers['ssh'];
  /** Where telnet callers dial in; null when not serving telnet. */
  readonly telnet: TerminalServers['telnet'];
  /** Where the FTN networks' links call in over binkp; null when `contentServers.binkp` is off (or the board is in no network). */
  readonly binkp: { readonly address: string; readonly port: number } | null;
  /**
   * Says goodbye to the terminal callers and hangs up, then turns not-ready and keeps serving for `shutdownDrainSeconds` (a load balancer moves its
   * traffic away meanwhile), then stops accepting connections, lets in-flight requests finish
   * and closes the database.
   */
  stop(): Promise<void>;
}

export interface ServeBoardOptions extends Pick<BuildAppOptions, 'logger'> {
  /** Starts a terminal caller's session: `startCallerSession` unless a test stands in for it. */
  readonly startSession?: StartCallerSession;
}

/**
 * Opens the board, builds the app, logs the configuration's warnings and listens on the
 * configured address and port, and for terminal callers where configured (SSH, telnet).
 * `logger` replaces the configured log (as in `buildApp`).
 */
export async function serveBoard(config: Config, options: ServeBoardOptions = {}): Promise<RunningBoard> {
  const { startSession = startCallerSession, ...appOptions } = options;
  const board = await openBoard(config);
  let app: Awaited<ReturnType<typeof buildApp>>;
  let metricsListener: MetricsListener | null = null;
  let terminal: TerminalServers | null = null;
  let ftnWorkers: FtnWorkers | null = null;
  let warnings: readonly ConfigWarning[];
  try {
    warnings = checkConfig(config, board.areas);
    const metrics = config.metrics.enabled
      ? createBoardMetrics({ database: board.database, system: board.system, routes: METRICS_COUNTED_ROUTES })
      : undefined;
    app = await buildApp(config, { board, ...(metrics ? { metrics } : {}), ...appOptions });
    for (const warning of warnings) app.log.warn({ warning: warning.code }, warning.message);
    const web = config.contentServers.web;
    await app.listen({ host: web.address, port: web.port });
    if (metrics) metricsListener = await listenForMetrics(metrics, config.metrics);
    if (metrics) board.ftn.observeWith(metrics.ftn);
    ftnWorkers = await board.ftn.startWorkers({
      onError: (error) => app.log.error({ err: error }, 'ftn: a toss, scan or poll failed'),
    });
    const { ssh, telnet } = config.contentServers;
    if (ssh.enabled || telnet.enabled) {
      try {
        terminal = await startTerminalServers({ board, startSession, log: app.log });
      } catch (error) {
        // A host key that cannot be read, a port taken: the HTTP side is listening already.
        await ftnWorkers.stop();
        await app.close();
        await metricsListener?.close();
        throw error;
      }
    }
  } catch (error) {
    await board.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.contentServers.web.port;
  const host = config.contentServers.web.address.includes(':')
    ? `[${config.contentServers.web.address}]`
    : config.contentServers.web.address;
  const origin = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  return {
    url: `${origin}${API_PREFIX}`,
    metricsUrl: metricsListener?.url ?? null,
    readerUrl: app.servesReader ? `${origin}/` : null,
    dialect: board.database.dialect,
    appliedMigrations: board.appliedMigrations,
    warnings,
    ssh: terminal?.ssh ?? null,
    telnet: terminal?.telnet ?? null,
    binkp:
      ftnWorkers?.binkpPort == null
        ? null
        : { address: config.contentServers.binkp.address, port: ftnWorkers.binkpPort },
    async stop() {
      try {
        // First: a caller in a terminal is told why the line drops, rather than cut mid-screen.
        await terminal?.stop();
        app.startDraining();
        const drainMs = config.contentServers.web.shutdownDrainSeconds * 1000;
        if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
        await app.close();
        await ftnWorkers?.stop();
        await metricsListener?.close();
      } finally {
        await board.close();
      }
    },
  };
}

/**
 * Stops the board on SIGINT/SIGTERM: it drains for `shutdownDrainSeconds` (not ready, still
 * serving), in-flight requests finish (new ones get 503), then the database closes. A second
 * signal, or the drain plus the shutdown timeout, exits at once.
 */
export function stopOnSignals(
  running: RunningBoard,
  web: { readonly shutdownTimeoutSeconds: number; readonly shutdownDrainSeconds: number },
  log: (text: string) => void,
): void {
  let stopping = false;
  const timeoutSeconds = web.shutdownDrainSeconds + web.shutdownTimeoutSeconds;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    const draining = web.shutdownDrainSeconds > 0 ? `not ready; serving ${web.shutdownDrainSeconds}s more, then ` : '';
    log(`${signal} received: ${draining}finishing in-flight requests (at most ${timeoutSeconds}s in all)…`);
    const timer = setTimeout(() => {
      log('shutdown timed out; exiting');
      process.exit(1);
    }, timeoutSeconds * 1000);
    timer.unref();
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
