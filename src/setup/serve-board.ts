import { buildApp } from '../app.js';
import { openBoard } from '../board.js';
import type { Config } from '../config/load-config.js';
import { API_PREFIX } from '../http/api-prefix.js';

export interface RunningBoard {
  readonly url: string;
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
  stop(): Promise<void>;
}

/** Opens the board, builds the app and listens on the configured address and port. */
export async function serveBoard(config: Config): Promise<RunningBoard> {
  const board = await openBoard(config);
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp(config, { board });
    const web = config.contentServers.web;
    await app.listen({ host: web.address, port: web.port });
  } catch (error) {
    await board.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.contentServers.web.port;
  const host = config.contentServers.web.address.includes(':')
    ? `[${config.contentServers.web.address}]`
    : config.contentServers.web.address;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}${API_PREFIX}`,
    async stop() {
      try {
        await app.close();
      } finally {
        await board.close();
      }
    },
  };
}

/**
 * Stops the board on SIGINT/SIGTERM: in-flight requests finish (new ones get 503), then the
 * database closes. A second signal, or the shutdown timeout, exits at once.
 */
export function stopOnSignals(running: RunningBoard, timeoutSeconds: number, log: (text: string) => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`${signal} received: finishing in-flight requests (at most ${timeoutSeconds}s)…`);
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
