import net from 'node:net';
import { type BinkpLimits, resolveBinkpLimits } from './binkp-frame.js';
import { type BinkpProgress, BinkpSession, type BinkpSessionReport, type BinkpSystemInfo } from './binkp-session.js';
import type { FtnAddress } from './ftn-address.js';
import type { NetworkSpool } from './ftn-spool.js';

export interface CallLinkOptions {
  /** Our addresses in the link's network, presented in M_ADR (the first is the main one). */
  readonly ourAddresses: readonly FtnAddress[];
  /** The system to call, and the session password it gave us. */
  readonly link: {
    readonly address: FtnAddress;
    readonly host: string;
    readonly port: number;
    readonly password: string;
  };
  /** The network's spool: what waits in the link's outbound is sent, what comes lands in the inbound. */
  readonly spool: NetworkSpool;
  readonly onProgress?: (event: BinkpProgress) => void;
  /** Aborting hangs up: the session ends with an error, a file being received stays in partial/. */
  readonly signal?: AbortSignal;
  readonly limits?: Partial<BinkpLimits>;
  readonly system?: BinkpSystemInfo;
}

/**
 * Calls a link over binkp and exchanges files with it: ours from its outbound, theirs into the
 * inbound. Resolves to the session's report whatever happens (refused connection, wrong password,
 * a dropped line); rejects only for options that cannot work (a limit out of range). The caller
 * holds the link's lock (ftn-link-store) around the call.
 *
 * @example const report = await callLink({ ourAddresses: [me], link: hub, spool })
 */
export async function callLink(options: CallLinkOptions): Promise<BinkpSessionReport> {
  const limits = resolveBinkpLimits(options.limits);
  const startedAt = new Date();
  const { host, port } = options.link;
  let socket: net.Socket;
  try {
    socket = await connect(host, port, limits.handshakeTimeoutSeconds, options.signal);
  } catch (error) {
    return {
      ok: false,
      error: `could not connect to ${host}:${port}: ${(error as Error).message}`,
      remoteAddresses: [],
      sent: [],
      received: [],
      skipped: [],
      bytesIn: 0,
      bytesOut: 0,
      startedAt,
      seconds: (Date.now() - startedAt.getTime()) / 1000,
    };
  }
  const hangUp = () => socket.destroy(new Error('the call was cancelled'));
  options.signal?.addEventListener('abort', hangUp, { once: true });
  try {
    const session = new BinkpSession(socket, {
      role: 'originate',
      ourAddresses: options.ourAddresses,
      limits,
      ...(options.system ? { system: options.system } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    try {
      await session.greet();
    } catch (error) {
      return await session.fail(error);
    }
    return await session.transfer({
      address: options.link.address,
      password: options.link.password,
      spool: options.spool,
    });
  } finally {
    options.signal?.removeEventListener('abort', hangUp);
  }
}

/** A connected socket, or the reason there is none (refused, unresolvable, too slow, cancelled). */
function connect(host: string, port: number, timeoutSeconds: number, signal?: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('the call was cancelled'));
      return;
    }
    const socket = net.connect({ host, port });
    const fail = (error: Error) => {
      cleanUp();
      socket.destroy();
      reject(error);
    };
    const onError = (error: Error) => fail(error);
    const onAbort = () => fail(new Error('the call was cancelled'));
    const timer = setTimeout(() => fail(new Error(`no connection within ${timeoutSeconds} s`)), timeoutSeconds * 1000);
    const cleanUp = () => {
      clearTimeout(timer);
      socket.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    socket.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      cleanUp();
      // Commands are small and answered at once (M_GET, M_GOT): no waiting to fill a segment.
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}
