import type { Config } from '../config/load-config.js';
import { type FtnAddress, formatFtnAddress, isSameFtnAddress, parseFtnAddress } from './ftn-address.js';
import { type NetworkSpool, openNetworkSpool } from './ftn-spool.js';

/** A system this board exchanges mail with in one network: its hub, or one of its downlinks. */
export interface FtnLink {
  readonly address: FtnAddress;
  /** `zone:net/node[.point]`: how the link is named in rows, reports and logs. */
  readonly name: string;
  readonly role: 'hub' | 'downlink';
  /** The binkp session password. */
  readonly password: string;
  /** Where the hub is called; null for a downlink (it calls us). */
  readonly host: string | null;
  readonly port: number | null;
  /**
   * The password written in, and expected of, this link's packets: the session password when it
   * fits a packet's 8 printable characters, else '' (see `packetPasswordOf`).
   */
  readonly packetPassword: string;
}

/** The hub: the link this board calls. */
export interface FtnHub extends FtnLink {
  readonly role: 'hub';
  readonly host: string;
  readonly port: number;
}

/** One network of `ftn.networks`, its addresses read once. */
export interface FtnNetwork {
  readonly name: string;
  /** Ours in this network. */
  readonly address: FtnAddress;
  readonly hub: FtnHub;
  /** The hub first, then the downlinks in configuration order. */
  readonly links: readonly FtnLink[];
  readonly pollMinutes: number;
  /** The Origin line's text: `originLine`, or the board's name. */
  readonly originLine: string;
  /** Configured echoes: the echo tag (upper case) → the baud area carrying it. */
  readonly areaByEcho: ReadonlyMap<string, string>;
  /** The baud area → its echo tag as configured. */
  readonly echoByArea: ReadonlyMap<string, string>;
  /** The network's spool, its directories made on first use. */
  spool(): NetworkSpool;
  /** The link at exactly `address`, or null. */
  linkAt(address: FtnAddress): FtnLink | null;
  /**
   * The link netmail to `destination` goes out through: the downlink that is that system or its
   * boss node (points are reached through their boss), else the hub, which routes the rest.
   */
  routeFor(destination: FtnAddress): FtnLink;
}

/** Printable ASCII, 1–8 characters: what a packet header's password field holds. */
const PACKET_PASSWORD = /^[\x20-\x7e]{1,8}$/;

/**
 * The packet password of a link whose session password is `password`. Most networks (fsxNet's
 * info pack among them) give one password for both; a session password longer than a packet
 * holds cannot be that, so such a link writes and expects none.
 */
export function packetPasswordOf(password: string): string {
  return PACKET_PASSWORD.test(password) ? password : '';
}

function linkOf(
  role: FtnLink['role'],
  text: string,
  password: string,
  host: string | null,
  port: number | null,
): FtnLink {
  const address = parseFtnAddress(text);
  return {
    address,
    name: formatFtnAddress({ ...address, domain: null }),
    role,
    password,
    host,
    port,
    packetPassword: packetPasswordOf(password),
  };
}

/** The networks of `config.ftn` (already checked at load: every address parses). */
export function ftnNetworksOf(config: Config): ReadonlyMap<string, FtnNetwork> {
  const networks = new Map<string, FtnNetwork>();
  for (const [name, network] of Object.entries(config.ftn.networks)) {
    const { host, port } = network.hub;
    const hub: FtnHub = {
      ...linkOf('hub', network.hub.address, network.hub.password, host, port),
      role: 'hub',
      host,
      port,
    };
    const downlinks = network.downlinks.map((downlink) =>
      linkOf('downlink', downlink.address, downlink.password, null, null),
    );
    const links = [hub, ...downlinks];
    const areaByEcho = new Map<string, string>();
    const echoByArea = new Map<string, string>();
    for (const [areaTag, area] of Object.entries(config.ftn.areas)) {
      if (area.network !== name) continue;
      areaByEcho.set(area.echoTag.toUpperCase(), areaTag);
      echoByArea.set(areaTag, area.echoTag);
    }
    let spool: NetworkSpool | null = null;
    networks.set(name, {
      name,
      address: { ...parseFtnAddress(network.address), domain: null },
      hub,
      links,
      pollMinutes: network.pollMinutes,
      originLine: network.originLine === '' ? config.general.boardName : network.originLine,
      areaByEcho,
      echoByArea,
      spool() {
        spool ??= openNetworkSpool(config.paths.dataDir, name);
        return spool;
      },
      linkAt: (address) => links.find((link) => isSameFtnAddress(link.address, address)) ?? null,
      routeFor(destination) {
        const boss = { ...destination, point: 0 };
        return (
          downlinks.find((link) => isSameFtnAddress(link.address, destination)) ??
          downlinks.find((link) => link.address.point === 0 && isSameFtnAddress(link.address, boss)) ??
          hub
        );
      },
    });
  }
  return networks;
}
