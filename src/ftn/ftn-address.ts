import { FtnFormatError, quoteForError } from './ftn-format-error.js';

/**
 * A FidoNet-technology address, `zone:net/node[.point][@domain]` (21:1/100, 21:1/100.2@fsxnet).
 * A node has point 0; `domain` (the network's name, lower case) is null when not given: packets
 * and most kludges carry none.
 */
export interface FtnAddress {
  readonly zone: number;
  readonly net: number;
  readonly node: number;
  readonly point: number;
  readonly domain: string | null;
}

/** The 2D `net/node` of SEEN-BY and PATH lines: they list nodes of one zone, never points. */
export interface NetNode {
  readonly net: number;
  readonly node: number;
}

/**
 * Largest zone, net, node or point. Packet headers hold them in 16-bit words but use net -1
 * (0xFFFF) to mark a point's packet (FSC-0048), and nodelists number from 1 to 32767: no
 * network hands out more, so a larger number is a typo, not an address.
 */
export const MAX_ADDRESS_NUMBER = 32767;

/** Domains are at most 8 characters (5D addressing); letters, digits, `-` and `_`. */
const DOMAIN = /^[a-z0-9_-]{1,8}$/;
const ADDRESS = /^([0-9]+):([0-9]+)\/([0-9]+)(?:\.([0-9]+))?(?:@(.*))?$/;
const NET_NODE = /^([0-9]+)\/([0-9]+)$/;
const NODE_ONLY = /^[0-9]+$/;
function readNumber(digits: string, what: string, min: number, whole: string): number {
  if (digits.length > 1 && digits.startsWith('0')) {
    throw new FtnFormatError(`${quoteForError(whole)}: the ${what} ${digits} has a leading zero`);
  }
  const value = digits.length > 5 ? Number.POSITIVE_INFINITY : Number(digits);
  if (value < min || value > MAX_ADDRESS_NUMBER) {
    throw new FtnFormatError(
      `${quoteForError(whole)}: the ${what} ${digits.length > 5 ? `${digits.slice(0, 6)}…` : digits} is outside ${min}–${MAX_ADDRESS_NUMBER}`,
    );
  }
  return value;
}

/**
 * Reads `zone:net/node[.point][@domain]`. Strict: no spaces, no leading zeros, zone 1–32767,
 * net, node and point 0–32767, a domain of 1–8 letters, digits, `-` or `_` (read in lower case:
 * domains compare case-insensitively). Throws `FtnFormatError` naming what is wrong.
 *
 * @example parseFtnAddress('21:1/100.2@fsxNet') // { zone: 21, net: 1, node: 100, point: 2, domain: 'fsxnet' }
 */
export function parseFtnAddress(text: string): FtnAddress {
  const match = ADDRESS.exec(text);
  if (!match) {
    throw new FtnFormatError(`${quoteForError(text)} is not an FTN address (zone:net/node[.point][@domain])`);
  }
  const [, zone = '', net = '', node = '', point, domain] = match;
  const address: FtnAddress = {
    zone: readNumber(zone, 'zone', 1, text),
    net: readNumber(net, 'net', 0, text),
    node: readNumber(node, 'node', 0, text),
    point: point === undefined ? 0 : readNumber(point, 'point', 0, text),
    domain: null,
  };
  if (domain === undefined) return address;
  const lowerDomain = domain.toLowerCase();
  if (!DOMAIN.test(lowerDomain)) {
    throw new FtnFormatError(
      `${quoteForError(text)}: the domain ${quoteForError(domain)} is not 1–8 letters, digits, - or _`,
    );
  }
  return { ...address, domain: lowerDomain };
}

function checkNumber(value: number, what: string, min: number): void {
  if (!Number.isInteger(value) || value < min || value > MAX_ADDRESS_NUMBER) {
    throw new FtnFormatError(
      `cannot write the ${what} ${value}: it is not a whole number in ${min}–${MAX_ADDRESS_NUMBER}`,
    );
  }
}

/**
 * Throws `FtnFormatError` unless every number of `address` is in its range and its domain (if
 * any) is one `parseFtnAddress` reads: what the writers check before they write an address.
 */
export function checkFtnAddress(address: FtnAddress): void {
  checkNumber(address.zone, 'zone', 1);
  checkNumber(address.net, 'net', 0);
  checkNumber(address.node, 'node', 0);
  checkNumber(address.point, 'point', 0);
  if (address.domain !== null && !DOMAIN.test(address.domain)) {
    throw new FtnFormatError(
      `cannot write the domain ${quoteForError(address.domain)}: it is not 1–8 of a-z, 0-9, - or _`,
    );
  }
}

/**
 * `zone:net/node`, then `.point` when the point is not 0, then `@domain` when there is one: the
 * form `parseFtnAddress` reads back to the same address.
 *
 * @example formatFtnAddress({ zone: 21, net: 1, node: 100, point: 0, domain: null }) // '21:1/100'
 */
export function formatFtnAddress(address: FtnAddress): string {
  checkFtnAddress(address);
  const point = address.point === 0 ? '' : `.${address.point}`;
  const domain = address.domain === null ? '' : `@${address.domain}`;
  return `${address.zone}:${address.net}/${address.node}${point}${domain}`;
}

/** The 3D `zone:net/node` that INTL kludges write (points go in FMPT and TOPT). */
export function formatZoneNetNode(address: Pick<FtnAddress, 'zone' | 'net' | 'node'>): string {
  checkFtnAddress({ ...address, point: 0, domain: null });
  return `${address.zone}:${address.net}/${address.node}`;
}

/**
 * Orders addresses by zone, net, node, point, then domain (none first): a total order, for
 * sorting and for keys.
 */
export function compareFtnAddresses(a: FtnAddress, b: FtnAddress): number {
  const byNumbers = a.zone - b.zone || a.net - b.net || a.node - b.node || a.point - b.point;
  if (byNumbers !== 0) return byNumbers;
  if (a.domain === b.domain) return 0;
  if (a.domain === null) return -1;
  if (b.domain === null) return 1;
  return a.domain < b.domain ? -1 : 1;
}

/**
 * Whether two addresses name the same system: the same zone, net, node and point, and the same
 * domain unless one of them has none (a packet's addresses never carry one).
 */
export function isSameFtnAddress(a: FtnAddress, b: FtnAddress): boolean {
  const isSameNumbers = a.zone === b.zone && a.net === b.net && a.node === b.node && a.point === b.point;
  return isSameNumbers && (a.domain === null || b.domain === null || a.domain === b.domain);
}

/** Orders 2D addresses by net, then node: the order SEEN-BY lines are kept in. */
export function compareNetNodes(a: NetNode, b: NetNode): number {
  return a.net - b.net || a.node - b.node;
}

/**
 * Reads a SEEN-BY or PATH list: `net/node` entries apart by spaces, where an entry of a node
 * alone keeps the net of the entry before it (`1/100 200 2/5` is 1/100, 1/200, 2/5). `what` names
 * the list in errors ("SEEN-BY"). Throws `FtnFormatError` for an entry that is neither, a node
 * with no net before it, or a number outside 0–32767.
 *
 * @example parseNetNodes('1/100 200 2/5') // [{ net: 1, node: 100 }, { net: 1, node: 200 }, { net: 2, node: 5 }]
 */
export function parseNetNodes(text: string, what = 'net/node list'): NetNode[] {
  const entries: NetNode[] = [];
  let net: number | null = null;
  for (const token of text.split(' ')) {
    if (token === '') continue;
    const full = NET_NODE.exec(token);
    if (full) {
      net = readNumber(full[1] ?? '', 'net', 0, token);
      entries.push({ net, node: readNumber(full[2] ?? '', 'node', 0, token) });
    } else if (NODE_ONLY.test(token)) {
      if (net === null) {
        throw new FtnFormatError(`${what} entry ${quoteForError(token)} is a node with no net before it`);
      }
      entries.push({ net, node: readNumber(token, 'node', 0, token) });
    } else {
      throw new FtnFormatError(`${what} entry ${quoteForError(token)} is not net/node nor a node`);
    }
  }
  return entries;
}

/**
 * Writes a SEEN-BY or PATH list in its short form: an entry in the same net as the one before it
 * is its node alone. The reverse of `parseNetNodes`.
 *
 * @example formatNetNodes([{ net: 1, node: 100 }, { net: 1, node: 200 }, { net: 2, node: 5 }]) // '1/100 200 2/5'
 */
export function formatNetNodes(entries: readonly NetNode[]): string {
  let previousNet: number | null = null;
  const parts: string[] = [];
  for (const { net, node } of entries) {
    checkNumber(net, 'net', 0);
    checkNumber(node, 'node', 0);
    parts.push(net === previousNet ? String(node) : `${net}/${node}`);
    previousNet = net;
  }
  return parts.join(' ');
}
