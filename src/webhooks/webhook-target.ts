import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Longer URLs are refused when a webhook is created; no receiver needs one. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** A resolved address of a webhook's host, the one the delivery connects to. */
export interface WebhookAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Every address a host name resolves to; `dns.promises.lookup` unless a test brings its own. */
export type WebhookLookup = (hostname: string) => Promise<readonly WebhookAddress[]>;

export interface WebhookTargetOptions {
  /** The operator's choice to deliver inside their own network (a receiver on the same host or LAN). */
  readonly allowPrivateTargets: boolean;
  readonly lookup?: WebhookLookup;
}

/**
 * The one reason given for a target whose address is not public, whatever the address and its kind:
 * naming what a host name resolved to would let anyone read the board's internal DNS through
 * webhook answers and delivery logs.
 */
export const TARGET_NOT_ALLOWED = 'not an allowed target';

/** A webhook URL that may not be delivered to; `reason` is short enough for a delivery log. */
export class WebhookTargetError extends Error {
  override readonly name = 'WebhookTargetError';

  constructor(readonly reason: string) {
    super(`Webhook URL refused: ${reason}.`);
  }
}

/**
 * Addresses a webhook may not reach unless private targets are allowed, by the word a delivery log
 * uses for them. The metadata services of cloud hosts are among them: 169.254.169.254 is
 * link-local and fd00:ec2::254 is a unique local (private) address.
 */
const NON_PUBLIC_RANGES: readonly { readonly kind: string; readonly cidrs: readonly string[] }[] = [
  // Connecting to 0.0.0.0 or :: reaches the local host on Linux.
  { kind: 'non-routable', cidrs: ['0.0.0.0/8', '::/128'] },
  { kind: 'loopback', cidrs: ['127.0.0.0/8', '::1/128'] },
  { kind: 'private', cidrs: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'] },
  { kind: 'link-local', cidrs: ['169.254.0.0/16', 'fe80::/10'] },
  { kind: 'shared (CGNAT)', cidrs: ['100.64.0.0/10'] },
  { kind: 'documentation', cidrs: ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'] },
  { kind: 'multicast', cidrs: ['224.0.0.0/4', 'ff00::/8'] },
  // 240.0.0.0/4 includes the broadcast address 255.255.255.255.
  { kind: 'reserved', cidrs: ['192.0.0.0/24', '198.18.0.0/15', '240.0.0.0/4'] },
];

const NON_PUBLIC_LISTS = NON_PUBLIC_RANGES.map(({ kind, cidrs }) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = '', prefix = ''] = cidr.split('/');
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return { kind, list };
});

/**
 * The URL of a webhook being created, parsed, if it is one baud may deliver to as written: an
 * absolute http or https URL with a host and no credentials in it. Where the host resolves to is
 * checked on every delivery, by `resolveWebhookTarget`, because DNS answers change.
 */
export function checkWebhookUrl(url: string): URL {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    throw new WebhookTargetError(`longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  if (!URL.canParse(url)) throw new WebhookTargetError('not an absolute URL');
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new WebhookTargetError('https or http only');
  // Credentials would be sent to the receiver and shown wherever the URL is listed.
  if (parsed.username !== '' || parsed.password !== '') throw new WebhookTargetError('has a user name or password');
  if (parsed.hostname === '') throw new WebhookTargetError('has no host name');
  return parsed;
}

/**
 * The address a delivery to `url` connects to: its IP literal, or the first address its host name
 * resolves to. Refused when any address the host resolves to is not public (unless
 * `allowPrivateTargets`), so that a name with one public and one private answer cannot be used to
 * reach the private one. The caller must connect to exactly the returned address: resolving again
 * would let a DNS answer that changed in between (rebinding) reach a private host.
 */
export async function resolveWebhookTarget(url: URL, options: WebhookTargetOptions): Promise<WebhookAddress> {
  // The URL parser writes IPv6 literals in brackets and normalises IPv4 ones (0x7f.1 is 127.0.0.1).
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const answers = isIP(hostname) ? [{ address: hostname }] : await lookupHost(hostname, options.lookup ?? lookupAll);

  const vetted = answers.map(({ address }) => vetAddress(address, options.allowPrivateTargets));
  const [first] = vetted;
  if (!first) throw new WebhookTargetError('does not resolve');
  return first;
}

async function lookupHost(hostname: string, lookup: WebhookLookup): Promise<readonly { address: string }[]> {
  try {
    return await lookup(hostname);
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'lookup failed';
    throw new WebhookTargetError(`does not resolve (${code})`);
  }
}

async function lookupAll(hostname: string): Promise<WebhookAddress[]> {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/** The address with its family, or a refusal. The family is read from the address, not trusted from DNS. */
function vetAddress(address: string, allowPrivateTargets: boolean): WebhookAddress {
  // A link-local answer can carry a zone (fe80::1%eth0); BlockList says "not listed" for it.
  const bare = address.split('%', 1)[0] ?? '';
  const family = isIP(bare);
  if (family !== 4 && family !== 6) throw new WebhookTargetError(TARGET_NOT_ALLOWED);
  if (!allowPrivateTargets && nonPublicKind(bare, family) !== null) throw new WebhookTargetError(TARGET_NOT_ALLOWED);
  return { address, family };
}

function nonPublicKind(address: string, family: 4 | 6): string | null {
  const ipv4 = family === 6 ? embeddedIpv4(address) : null;
  if (ipv4) return nonPublicKind(ipv4, 4);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  return NON_PUBLIC_LISTS.find(({ list }) => list.check(address, type))?.kind ?? null;
}

/**
 * The IPv4 address carried in the last 32 bits of an IPv4-mapped (::ffff:0:0/96) or NAT64
 * (64:ff9b::/96) address: a connection to one of those ends at that IPv4 address.
 */
function embeddedIpv4(ipv6: string): string | null {
  const groups = ipv6Groups(ipv6);
  const prefix = groups.slice(0, 6).join(':');
  if (prefix !== '0:0:0:0:0:ffff' && prefix !== '64:ff9b:0:0:0:0') return null;
  const [high = 0, low = 0] = groups.slice(6).map((group) => Number.parseInt(group, 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight groups of a valid IPv6 address in lower-case hex without leading zeros, `::` expanded. */
function ipv6Groups(ipv6: string): string[] {
  const toGroups = (part: string): string[] =>
    part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? dottedToGroups(group) : [group]));
  const [head = '', tail] = ipv6.toLowerCase().split('::');
  const front = toGroups(head);
  const back = tail === undefined ? [] : toGroups(tail);
  const zeros = Array.from({ length: 8 - front.length - back.length }, () => '0');
  return [...front, ...zeros, ...back].map((group) => Number.parseInt(group, 16).toString(16));
}

/** `127.0.0.1` as the two IPv6 groups `7f00` and `1`. */
function dottedToGroups(dotted: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
