import { callLink } from '../../../src/ftn/binkp-client.js';
import type { BinkpLimits } from '../../../src/ftn/binkp-frame.js';
import { type BinkpServer, type BinkpServerOptions, startBinkpServer } from '../../../src/ftn/binkp-server.js';
import type { BinkpProgress, BinkpSessionReport } from '../../../src/ftn/binkp-session.js';
import type { FtnAddress } from '../../../src/ftn/ftn-address.js';
import type { NetworkSpool } from '../../../src/ftn/ftn-spool.js';
import { HUB, NODE } from './binkp-fixtures.js';

export const PASSWORD = 'sesame';

export type ServerSession = BinkpSessionReport & { network: string; link: FtnAddress };

/**
 * Our binkp server as the hub (21:1/100) with one downlink, the node 21:1/999, whose password is
 * `PASSWORD`: what every session it ran reported, in `sessions`.
 */
export async function startHubServer(
  spool: NetworkSpool,
  options: {
    limits?: Partial<BinkpLimits>;
    lockLink?: BinkpServerOptions['lockLink'];
    findLink?: BinkpServerOptions['findLink'];
    maxSessions?: number;
  } = {},
): Promise<{ server: BinkpServer; sessions: ServerSession[] }> {
  const sessions: ServerSession[] = [];
  const server = await startBinkpServer({
    address: '127.0.0.1',
    port: 0,
    ourAddresses: [HUB],
    findLink:
      options.findLink ??
      ((presented) =>
        presented.some((address) => address.node === NODE.node)
          ? { address: NODE, password: PASSWORD, spool, network: 'fsxnet' }
          : null),
    lockLink: options.lockLink ?? ((_network, _address, run) => run()),
    onSession: (report) => sessions.push(report),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
  });
  return { server, sessions };
}

/** The node (21:1/999) calling the hub at `port`. */
export function callHub(
  spool: NetworkSpool,
  port: number,
  options: {
    password?: string;
    onProgress?: (event: BinkpProgress) => void;
    signal?: AbortSignal;
    limits?: Partial<BinkpLimits>;
    hub?: FtnAddress;
  } = {},
): Promise<BinkpSessionReport> {
  return callLink({
    ourAddresses: [NODE],
    link: { address: options.hub ?? HUB, host: '127.0.0.1', port, password: options.password ?? PASSWORD },
    spool,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
}
