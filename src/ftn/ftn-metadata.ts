import type { MessageNetwork } from '../messages/message-network.js';
import {
  type FtnAddress,
  formatFtnAddress,
  formatNetNodes,
  type NetNode,
  parseFtnAddress,
  parseNetNodes,
} from './ftn-address.js';
import { FtnFormatError } from './ftn-format-error.js';
import { kludgeValue, type Origin, parseMsgId, type ReadMessageBody } from './message-body.js';

/**
 * A tossed message's FTN parts as its `network` metadata (what the API shows), in the shapes a
 * message imported from ENiGMA½ already has them: `ftnTearLine` and `ftnOrigin` are the whole
 * lines, `ftnSeenBy` the `SEEN-BY:` lines, `ftnPath` the values of the PATH lines; the scanner
 * reads them back to forward the message.
 */

const SEEN_BY_PREFIX = 'SEEN-BY: ';
const ORIGIN_PREFIX = ' * Origin: ';
/** Control lines keep within 79 characters (see message-body.ts); a PATH line is `^APATH: ` and its value. */
const MAX_CONTROL_LINE = 79;
const PATH_PREFIX_LENGTH = '\u0001PATH: '.length;

/** `entries` in their short form, cut into values that fit a line after a prefix of `prefixLength`. */
function wrapNetNodes(entries: readonly NetNode[], prefixLength: number): string[] {
  const values: string[] = [];
  let chunk: NetNode[] = [];
  for (const entry of entries) {
    const candidate = [...chunk, entry];
    if (chunk.length > 0 && prefixLength + formatNetNodes(candidate).length > MAX_CONTROL_LINE) {
      values.push(formatNetNodes(chunk));
      chunk = [entry];
    } else {
      chunk = candidate;
    }
  }
  if (chunk.length > 0) values.push(formatNetNodes(chunk));
  return values;
}

/** The SEEN-BY lines of `entries`, as a message shows them. */
export function seenByLines(entries: readonly NetNode[]): string[] {
  return wrapNetNodes(entries, SEEN_BY_PREFIX.length).map((value) => `${SEEN_BY_PREFIX}${value}`);
}

/** The values of the PATH lines of `entries`. */
export function pathValues(entries: readonly NetNode[]): string[] {
  return wrapNetNodes(entries, PATH_PREFIX_LENGTH);
}

function tolerantNetNodes(values: readonly string[]): NetNode[] {
  const entries: NetNode[] = [];
  for (const value of values) {
    try {
      for (const entry of parseNetNodes(value)) entries.push(entry);
    } catch (error) {
      if (!(error instanceof FtnFormatError)) throw error;
    }
  }
  return entries;
}

/** The SEEN-BY entries kept in `network` (lines that do not read are left out). */
export function seenByOf(network: MessageNetwork): NetNode[] {
  return tolerantNetNodes(
    (network.ftnSeenBy ?? []).map((line) => (line.startsWith('SEEN-BY:') ? line.slice('SEEN-BY:'.length) : line)),
  );
}

/** The PATH entries kept in `network`. */
export function pathOf(network: MessageNetwork): NetNode[] {
  return tolerantNetNodes(network.ftnPath ?? []);
}

/** The tear line's text kept in `network` (after `--- `), or null. */
export function tearLineOf(network: MessageNetwork): string | null {
  const line = network.ftnTearLine;
  if (line === undefined || !line.startsWith('---')) return null;
  return line.slice(4);
}

/** The origin line kept in `network`, read into its text and address, or null. */
export function originOf(network: MessageNetwork): Origin | null {
  const line = network.ftnOrigin;
  if (line === undefined || !line.startsWith(ORIGIN_PREFIX)) return null;
  const rest = line.slice(ORIGIN_PREFIX.length);
  const match = /^(.*) \(([^()]*)\)\s*$/s.exec(rest);
  if (match) {
    try {
      return { text: match[1] ?? '', address: parseFtnAddress((match[2] ?? '').trim()) };
    } catch (error) {
      if (!(error instanceof FtnFormatError)) throw error;
    }
  }
  return { text: rest, address: null };
}

function originLineOf(origin: Origin): string {
  if (origin.address === null) return `${ORIGIN_PREFIX}${origin.text}`;
  return `${ORIGIN_PREFIX}${origin.text} (${formatFtnAddress(origin.address)})`;
}

/**
 * The `network` metadata of a tossed message. `ftnOrigNode` is the system that wrote it: the
 * MSGID's address, else the origin line's, else `fallback` (the packed message's origin).
 */
export function networkOfTossed(body: ReadMessageBody, fallback: FtnAddress): MessageNetwork {
  const network: MessageNetwork = {};
  const msgId = kludgeValue(body.kludges, 'MSGID');
  const replyId = kludgeValue(body.kludges, 'REPLY');
  const msgIdOrigin = msgId === null ? null : (parseMsgId(msgId)?.origin ?? null);
  network.ftnOrigNode =
    msgIdOrigin ?? (body.origin?.address ? formatFtnAddress(body.origin.address) : formatFtnAddress(fallback));
  if (body.area !== null) network.ftnArea = body.area;
  if (body.tearLine !== null) network.ftnTearLine = body.tearLine === '' ? '---' : `--- ${body.tearLine}`;
  if (msgId !== null) network.ftnMsgId = msgId;
  if (replyId !== null) network.ftnReplyId = replyId;
  if (body.origin !== null) network.ftnOrigin = originLineOf(body.origin);
  if (body.seenBy.length > 0) network.ftnSeenBy = seenByLines(body.seenBy);
  if (body.path.length > 0) network.ftnPath = pathValues(body.path);
  return network;
}
