import type { Config } from '../config/load-config.js';

export type ConnectionLimitSettings = Pick<
  Config['contentServers']['terminal'],
  'maxConnectionsPerNode' | 'maxConnectionsPerAddress' | 'maxUnauthenticatedPerAddress'
>;

/** A connection's place under the limits, held from accept until it closes. */
export interface ConnectionPlace {
  /** The caller logged in: the place no longer counts as unauthenticated. Only the first call counts. */
  loggedIn(): void;
  /** The connection closed: its place is freed. Only the first call counts. */
  release(): void;
}

export type Admission =
  | { readonly isAdmitted: true; readonly place: ConnectionPlace }
  /** `reason`: one line for the caller (telnet writes it before hanging up). */
  | { readonly isAdmitted: false; readonly reason: string };

/** The terminal connections of one node, SSH and telnet together. */
export interface ConnectionLimits {
  /** Takes a place for a connection from `address`, or says why there is none. */
  admit(address: string): Admission;
  /** Connections holding a place now. */
  readonly openCount: number;
  /** Connections from `address` holding a place now, and how many of them have not logged in. */
  countsOf(address: string): { readonly open: number; readonly unauthenticated: number };
}

interface AddressCounts {
  open: number;
  unauthenticated: number;
}

/**
 * Caps the node's terminal connections in memory, per node and per caller address; the
 * unauthenticated cap is lower, so someone holding login prompts open (or guessing passwords on
 * many connections at once) cannot take every place their address has.
 */
export function createConnectionLimits(settings: ConnectionLimitSettings): ConnectionLimits {
  const byAddress = new Map<string, AddressCounts>();
  let openCount = 0;

  return {
    admit(address) {
      const counts = byAddress.get(address) ?? { open: 0, unauthenticated: 0 };
      if (openCount >= settings.maxConnectionsPerNode) {
        return { isAdmitted: false, reason: 'The board is full right now; please call again later.' };
      }
      if (counts.open >= settings.maxConnectionsPerAddress) {
        return {
          isAdmitted: false,
          reason: 'Too many connections from your address; hang up one of them and call again.',
        };
      }
      if (counts.unauthenticated >= settings.maxUnauthenticatedPerAddress) {
        return {
          isAdmitted: false,
          reason: 'Too many connections from your address are still logging in; finish one and call again.',
        };
      }
      counts.open += 1;
      counts.unauthenticated += 1;
      openCount += 1;
      byAddress.set(address, counts);

      let isLoggedIn = false;
      let isReleased = false;
      return {
        isAdmitted: true,
        place: {
          loggedIn() {
            if (isLoggedIn || isReleased) return;
            isLoggedIn = true;
            counts.unauthenticated -= 1;
          },
          release() {
            if (isReleased) return;
            isReleased = true;
            if (!isLoggedIn) counts.unauthenticated -= 1;
            counts.open -= 1;
            openCount -= 1;
            if (counts.open === 0) byAddress.delete(address);
          },
        },
      };
    },

    get openCount() {
      return openCount;
    },

    countsOf(address) {
      const counts = byAddress.get(address);
      return { open: counts?.open ?? 0, unauthenticated: counts?.unauthenticated ?? 0 };
    },
  };
}
