import { BadRequestError } from '../errors.js';

/**
 * FTN metadata of a message (`network` in the API). Member names follow ENiGMA½
 * (decisions.md "Element shapes"); a local message has none of them.
 */
export interface MessageNetwork {
  ftnOrigNode?: string;
  ftnArea?: string;
  ftnTearLine?: string;
  ftnMsgId?: string;
  ftnReplyId?: string;
  ftnOrigin?: string;
  ftnSeenBy?: string[];
  ftnPath?: string[];
}

const STRING_MEMBERS = ['ftnOrigNode', 'ftnArea', 'ftnTearLine', 'ftnMsgId', 'ftnReplyId', 'ftnOrigin'] as const;
const LIST_MEMBERS = ['ftnSeenBy', 'ftnPath'] as const;
const KNOWN_MEMBERS: ReadonlySet<string> = new Set([...STRING_MEMBERS, ...LIST_MEMBERS]);

/** Validates an imported `ftn` object: only the known members, strings and arrays of strings. */
export function checkNetwork(value: unknown, pointer: string): MessageNetwork {
  const fail = (message: string, at = pointer) =>
    new BadRequestError('request.invalid-body', `${at.slice(1)} ${message}`, [{ pointer: at, message }]);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail('must be an object');
  const source = value as Record<string, unknown>;
  for (const member of Object.keys(source)) {
    if (!KNOWN_MEMBERS.has(member)) throw fail('is not a known FTN member', `${pointer}/${member}`);
  }
  const network: MessageNetwork = {};
  for (const member of STRING_MEMBERS) {
    const item = source[member];
    if (item === undefined) continue;
    if (typeof item !== 'string') throw fail('must be a string', `${pointer}/${member}`);
    network[member] = item;
  }
  for (const member of LIST_MEMBERS) {
    const item = source[member];
    if (item === undefined) continue;
    if (!Array.isArray(item) || !item.every((entry) => typeof entry === 'string')) {
      throw fail('must be an array of strings', `${pointer}/${member}`);
    }
    network[member] = item as string[];
  }
  return network;
}

/** Reads the stored JSON back; anything unreadable is shown as no metadata rather than failing the read. */
export function parseStoredNetwork(json: string): MessageNetwork {
  try {
    return checkNetwork(JSON.parse(json), '/network');
  } catch {
    return {};
  }
}
