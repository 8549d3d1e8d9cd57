import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { BaudError } from '../errors.js';

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
export class WebhookTargetError extends BaudError<'webhook.target-not-allowed'> {
  override readonly name = 'WebhookTargetError';

  constructor(readonly reason: string) {
    super('webhook.target-not-allowed', `Webhook URL refused: ${reason}.`);
  }
}

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

/**
 * The address with its family, or a refusal. The family is read from the address, not trusted
 * from DNS. Unless private targets are allowed, the address returned is the one classified,
 * written out by the same parser (`::8.8.8.8` is read as `::ffff:8.8.8.8`), so the connection
 * goes exactly where the check looked.
 */
function vetAddress(address: string, allowPrivateTargets: boolean): WebhookAddress {
  // A link-local answer can carry a zone (fe80::1%eth0); the address is what precedes it.
  const bare = address.split('%', 1)[0] ?? '';
  // Node's strict reading first: ipaddr.js also takes forms such as 0x7f.1 that DNS never answers.
  const family = isIP(bare);
  if (family !== 4 && family !== 6) throw new WebhookTargetError(TARGET_NOT_ALLOWED);
  if (allowPrivateTargets) return { address, family };
  const parsed = ipaddr.parse(address);
  if (!isGlobalAddress(parsed)) throw new WebhookTargetError(TARGET_NOT_ALLOWED);
  return { address: parsed.toString(), family };
}

/** The global unicast space (RFC 4291 §2.4): every IPv6 address handed out for the Internet is in it. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
/** NAT64's well-known prefix (RFC 6052); its local-use neighbour 64:ff9b:1::/48 (RFC 8215) is private. */
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];

/**
 * Whether `address` is on the public Internet: ipaddr.js's `unicast` class, which is everything
 * outside its table of special-purpose ranges (private, loopback, link-local, CGNAT, documentation,
 * benchmarking, multicast, reserved …). An IPv6 form that carries an IPv4 address (IPv4-mapped,
 * IPv4-translated, NAT64, 6to4, Teredo) is judged by the IPv4 address it reaches. Other IPv6
 * addresses must also be global unicast (2000::/3): ipaddr.js calls unassigned space such as the
 * deprecated IPv4-compatible ::a.b.c.d `unicast` too.
 */
function isGlobalAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const ipv6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(ipv6);
  if (embedded !== null) return embedded.length > 0 && embedded.every((ipv4) => ipv4.range() === 'unicast');
  return ipv6.range() === 'unicast' && ipv6.match(GLOBAL_UNICAST);
}

/**
 * The IPv4 addresses a connection to an IPv6 address of a translating range ends at, or null for
 * a range that carries none; an empty list refuses the address (local-use NAT64, whose prefix
 * length, and so where the IPv4 address sits, only its network knows).
 */
function embeddedIpv4(ipv6: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const { parts } = ipv6;
  const ipv4Of = (high = 0, low = 0) =>
    ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]) as ipaddr.IPv4;
  switch (ipv6.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4Of(parts[6], parts[7])];
    case 'rfc6052':
      return ipv6.match(WELL_KNOWN_NAT64) ? [ipv4Of(parts[6], parts[7])] : [];
    case '6to4':
      return [ipv4Of(parts[1], parts[2])];
    case 'teredo':
      // The Teredo server, and the client's public address, stored inverted (RFC 4380 §4).
      return [ipv4Of(parts[2], parts[3]), ipv4Of((parts[6] ?? 0) ^ 0xffff, (parts[7] ?? 0) ^ 0xffff)];
    default:
      return null;
  }
}
