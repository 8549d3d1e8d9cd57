import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Dialect } from '../../src/db/database.js';
import { readBundle } from '../../src/ftn/bundle.js';
import { type FtnAddress, parseFtnAddress } from '../../src/ftn/ftn-address.js';
import type { FtnDateTime } from '../../src/ftn/ftn-date.js';
import {
  type EchomailDraft,
  type NetmailDraft,
  packEchomail,
  packNetmail,
  type UnpackedMessage,
  unpackMessage,
} from '../../src/ftn/ftn-message.js';
import type { FtnNetwork } from '../../src/ftn/ftn-networks.js';
import { type PackedMessage, type PacketHeader, readPacket, writePacket } from '../../src/ftn/packet.js';
import { createTestBoard, deepMerge, type TestBoard, type TestBoardOptions } from '../support/test-board.js';

export const API = '/_baud/api/v1';
export const HUB = '21:1/100';
export const OURS = '21:1/999';
export const DOWNLINK = '21:1/1000';
export const HUB_PASSWORD = 'SeCrEt';
export const DOWNLINK_PASSWORD = 'dlpass';

/** fsxNet as a board of ours joins it: two echoes carried, the hub, pollMinutes 0 (tests poll themselves). */
export function ftnConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return deepMerge(
    {
      general: { boardName: 'Test Board', sysopName: 'sysop' },
      messageConferences: {
        fsx: {
          name: 'fsxNet',
          areas: { fsx_gen: { name: 'General' }, fsx_bbs: { name: 'BBS talk' }, local: { name: 'Local' } },
        },
      },
      ftn: {
        networks: {
          fsxnet: {
            address: OURS,
            hub: { address: HUB, host: '127.0.0.1', port: 24554, password: HUB_PASSWORD },
            pollMinutes: 0,
            originLine: 'The Test Board',
          },
        },
        areas: {
          fsx_gen: { network: 'fsxnet', echoTag: 'FSX_GEN' },
          fsx_bbs: { network: 'fsxnet', echoTag: 'FSX_BBS' },
        },
      },
    },
    overrides,
  );
}

export interface FtnTestBoard extends TestBoard {
  readonly network: FtnNetwork;
  readonly alice: { userId: number; auth: { authorization: string } };
  readonly sysop: { userId: number; auth: { authorization: string } };
}

export async function createFtnTestBoard(
  dialect: Dialect,
  options: TestBoardOptions & { readonly ftn?: Record<string, unknown> } = {},
): Promise<FtnTestBoard> {
  const board = await createTestBoard(dialect, {
    ...options,
    config: ftnConfig(options.ftn ?? {}),
  });
  const network = board.board.ftn.networks.get('fsxnet');
  if (!network) throw new Error('fsxnet is configured');
  const alice = await board.userWithToken('alice');
  const sysop = await board.userWithToken('sysop', { groups: ['sysops'] });
  return Object.assign(board, { network, alice, sysop });
}

export const at = (text: string): FtnAddress => parseFtnAddress(text);

export const WRITTEN_AT: FtnDateTime = { year: 2026, month: 11, day: 20, hour: 10, minute: 30, second: 0 };

/** An echomail as the hub sends it to us: written at 21:1/5 (a node behind the hub), seen by the hub and us. */
export function hubEchomail(overrides: Partial<EchomailDraft> = {}): PackedMessage {
  return packEchomail({
    area: 'FSX_GEN',
    fromName: 'Nancy Node',
    toName: 'All',
    subject: 'Hello fsxNet',
    text: 'First line.\nSecond line, CP437: café ░▒▓.',
    writtenAt: WRITTEN_AT,
    utcOffsetMinutes: 120,
    msgIdSerial: 0x1000,
    replyTo: null,
    pid: 'Mystic 1.12',
    tearLine: 'Mystic BBS v1.12',
    origin: at('21:1/5'),
    destination: at(OURS),
    originLine: 'Nodes Place',
    seenBy: [
      { net: 1, node: 5 },
      { net: 1, node: 100 },
      { net: 1, node: 999 },
    ],
    path: [
      { net: 1, node: 5 },
      { net: 1, node: 100 },
    ],
    ...overrides,
  });
}

/** A netmail from someone at the hub to `toName` here. */
export function hubNetmail(overrides: Partial<NetmailDraft> = {}): PackedMessage {
  return packNetmail({
    fromName: 'Hub Sysop',
    toName: 'alice',
    subject: 'Welcome',
    text: 'Your node number is 21:1/999.',
    writtenAt: WRITTEN_AT,
    utcOffsetMinutes: 0,
    msgIdSerial: 0x2000,
    replyTo: null,
    pid: null,
    tearLine: 'binkd',
    origin: at(HUB),
    destination: at(OURS),
    originLine: null,
    ...overrides,
  });
}

/** A type 2+ packet from `from` to us. */
export function packetFrom(
  messages: readonly PackedMessage[],
  options: { from?: string; to?: string; password?: string } = {},
): Buffer {
  return writePacket(
    {
      origin: at(options.from ?? HUB),
      destination: at(options.to ?? OURS),
      createdAt: WRITTEN_AT,
      password: options.password ?? HUB_PASSWORD,
    },
    messages,
  );
}

/** Puts a file into the network's inbound, as the mailer does once it is whole. */
export function dropInbound(board: FtnTestBoard, name: string, bytes: Buffer): void {
  writeFileSync(path.join(board.network.spool().inbound, name), bytes);
}

export function filesIn(directory: string): string[] {
  return readdirSync(directory).sort();
}

/** The packet in an outbound bundle (baud writes one per bundle), read back: header and unpacked messages. */
export function bundledPacket(bundle: Buffer): {
  header: PacketHeader;
  messages: UnpackedMessage[];
  packed: PackedMessage[];
} {
  const entries = readBundle(bundle);
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined) throw new Error(`a bundle of ${entries.length} entries, not one`);
  const packet = readPacket(entry.data);
  const packed = [...packet.messages];
  return { header: packet.header, messages: packed.map(unpackMessage), packed };
}

/** The bundles waiting in a link's outbound, each with its packet read back. */
export function outboundPackets(
  board: FtnTestBoard,
  link: string,
): { name: string; header: PacketHeader; messages: UnpackedMessage[]; packed: PackedMessage[] }[] {
  const directory = board.network.spool().outboundFor(at(link));
  return filesIn(directory)
    .filter((name) => !name.startsWith('.'))
    .map((name) => ({ name, ...bundledPacket(readFileSync(path.join(directory, name))) }));
}
