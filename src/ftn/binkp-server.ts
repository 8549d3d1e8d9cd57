import net from 'node:net';
import { BinkpCommand, type BinkpLimits, encodeCommandFrame, resolveBinkpLimits } from './binkp-frame.js';
import { BinkpSession, type BinkpSessionReport, type BinkpSystemInfo } from './binkp-session.js';
import { type FtnAddress, formatFtnAddress } from './ftn-address.js';
import type { NetworkSpool } from './ftn-spool.js';

/** A configured link that called us: its password, its network's spool. */
export interface AnsweredLink {
  readonly address: FtnAddress;
  readonly password: string;
  readonly spool: NetworkSpool;
  readonly network: string;
}

export interface BinkpServerOptions {
  readonly address: string;
  /** 0 picks a free port (tests); the port taken is in the result. */
  readonly port: number;
  /** Our addresses, presented to every caller (M_ADR) before it says who it is. */
  readonly ourAddresses: readonly FtnAddress[];
  /** Which configured link presented these addresses: its password and spool; null → refused. */
  findLink(presented: readonly FtnAddress[]): AnsweredLink | null;
  /** One session per link across nodes: wraps the session in the database lock (ftn-link-store). */
  lockLink(
    network: string,
    address: FtnAddress,
    run: () => Promise<BinkpSessionReport>,
  ): Promise<BinkpSessionReport | 'busy'>;
  /** Every session with a configured link that got as far as its lock, ok or not (a wrong password too). */
  onSession(report: BinkpSessionReport & { network: string; link: FtnAddress }): void;
  limits?: Partial<BinkpLimits>;
  system?: BinkpSystemInfo;
  /** What `findLink`, `lockLink` or `onSession` threw; by default a process warning. */
  onError?: (error: unknown) => void;
  /** Most sessions at once; callers past it hear M_BSY. */
  maxSessions?: number;
}

export interface BinkpServer {
  readonly port: number;
  /** Stops listening and hangs up every session (files being received stay in partial/). */
  close(): Promise<void>;
}

/**
 * A board answers a handful of links; 32 at once is far past that, and bounds what a crowd of
 * callers (each holding a socket, a file and a database lease) can take.
 */
const DEFAULT_MAX_SESSIONS = 32;

/**
 * Answers binkp calls (`contentServers.binkp`): greets, reads who calls, finds that link,
 * takes its lock and runs the session in it. An unknown caller hears M_ERR, a link whose lock
 * another session holds (on any node) M_BSY.
 */
export async function startBinkpServer(options: BinkpServerOptions): Promise<BinkpServer> {
  const limits = resolveBinkpLimits(options.limits);
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const onError = options.onError ?? ((error: unknown) => process.emitWarning(error as Error));
  const sockets = new Set<net.Socket>();
  const sessions = new Set<Promise<void>>();

  const answer = async (socket: net.Socket): Promise<void> => {
    const session = new BinkpSession(socket, {
      role: 'answer',
      ourAddresses: options.ourAddresses,
      limits,
      ...(options.system ? { system: options.system } : {}),
    });
    let presented: readonly FtnAddress[];
    try {
      presented = await session.greet();
    } catch (error) {
      await session.fail(error);
      return;
    }
    let link: AnsweredLink | null;
    try {
      link = options.findLink(presented);
    } catch (error) {
      onError(error);
      await session.fail(error);
      return;
    }
    if (!link) {
      await session.refuse('error', `No link configured for ${presented.map(formatFtnAddress).join(' ')}`);
      return;
    }
    const found = link;
    let report: BinkpSessionReport | null = null;
    let outcome: BinkpSessionReport | 'busy';
    try {
      outcome = await options.lockLink(found.network, found.address, async () => {
        report = await session.transfer(found);
        return report;
      });
    } catch (error) {
      onError(error);
      outcome = report ?? (await session.fail(error));
    }
    if (outcome === 'busy') {
      await session.refuse('busy', `A session with ${formatFtnAddress(found.address)} is running already`);
      return;
    }
    try {
      options.onSession({ ...outcome, network: found.network, link: found.address });
    } catch (error) {
      onError(error);
    }
  };

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    if (sessions.size >= maxSessions) {
      socket.on('error', () => {});
      socket.end(encodeCommandFrame(BinkpCommand.M_BSY, 'Too many sessions, call again later'));
      return;
    }
    sockets.add(socket);
    const session = answer(socket)
      .catch(onError)
      .finally(() => {
        sockets.delete(socket);
        sessions.delete(session);
      });
    sessions.add(session);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', onError);
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : options.port;

  return {
    port,
    async close() {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await Promise.all([stopped, ...sessions]);
    },
  };
}
