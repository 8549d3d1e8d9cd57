import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FtnAddress } from './ftn-address.js';

/**
 * Where one network's mail waits on disk, under `<dataDir>/ftn/<network>/`. The mailer and the
 * tosser/scanner meet only here:
 * - `outbound/<z.n.n.p>/`: files for one link (bundles, packets). The scanner writes each under
 *   a name starting with `.` and renames it into place when whole, so the mailer never sends half a
 *   file; the mailer deletes a file once the link confirmed it (M_GOT).
 * - `inbound/`: files received whole, waiting to be tossed; the mailer renames them in from
 *   `partial/` after the last byte, so the tosser never reads half a file.
 * - `partial/`: files being received; what a dropped session leaves to resume from (FTS-1028).
 * - `bad/`: files the tosser could not take, each beside a `<name>.reason.txt` saying why.
 * The directories are shared by every node of the board (a shared data directory), and the link
 * lock in the database keeps two nodes from talking to one link at once.
 */
export interface NetworkSpool {
  readonly root: string;
  readonly inbound: string;
  readonly partial: string;
  readonly bad: string;
  /** The outbound directory of the link at `address`. */
  outboundFor(address: FtnAddress): string;
}

/** The spool of `network` under `dataDir`, its directories made when missing. */
export function openNetworkSpool(dataDir: string, network: string): NetworkSpool {
  const root = path.join(dataDir, 'ftn', network);
  const inbound = path.join(root, 'inbound');
  const partial = path.join(root, 'partial');
  const bad = path.join(root, 'bad');
  for (const directory of [inbound, partial, bad]) mkdirSync(directory, { recursive: true });
  return {
    root,
    inbound,
    partial,
    bad,
    outboundFor(address) {
      const directory = path.join(root, 'outbound', `${address.zone}.${address.net}.${address.node}.${address.point}`);
      mkdirSync(directory, { recursive: true });
      return directory;
    },
  };
}
