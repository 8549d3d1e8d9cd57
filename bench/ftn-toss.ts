import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatBundleName, writeBundle } from '../src/ftn/bundle.js';
import { type FtnAddress, type NetNode, parseFtnAddress } from '../src/ftn/ftn-address.js';
import { ftnDateTimeOf } from '../src/ftn/ftn-date.js';
import { packEchomail } from '../src/ftn/ftn-message.js';
import type { TossReport } from '../src/ftn/ftn-tosser.js';
import { formatMsgId } from '../src/ftn/message-body.js';
import { formatPacketFileName, type PackedMessage, writePacket } from '../src/ftn/packet.js';
import { type BaudInstallation, runBaudCommand } from './baud-process.js';
import type { FtnTossResult } from './bench-results.js';
import { peakResidentBytes } from './process-memory.js';
import type { Progress } from './progress.js';

/**
 * The bench board's FTN network, and the toss of issue 35's generated packet set: echomail as a
 * hub sends it (bundles of packets, written with baud's own writers) dropped into the network's
 * inbound and tossed by `baud ftn toss` as an operator runs it, timed, its peak RSS read.
 */

/** The network the bench board is in. Its hub never answers: `pollMinutes` 0, nobody calls it. */
export const FTN_NETWORK = 'benchnet';
const OUR_ADDRESS = '21:1/999';
const HUB_ADDRESS = '21:1/100';
const HUB_PASSWORD = 'benchpw';

/** The echoes the board carries: area tag → echo tag. The toss spreads its messages over all four. */
export const ECHO_AREAS: Readonly<Record<string, string>> = Object.freeze({
  net_gen: 'BENCH_GEN',
  net_bbs: 'BENCH_BBS',
  net_tech: 'BENCH_TECH',
  net_ads: 'BENCH_ADS',
});

/** The echomail area the export scenario posts into. */
export const POSTED_ECHO_AREA = 'net_gen';

/** The conference holding the echo areas, and `ftn` (a network and its areas), for the board's configuration. */
export function ftnBoardConfig() {
  return {
    conference: {
      name: 'Echomail',
      areas: Object.fromEntries(Object.keys(ECHO_AREAS).map((areaTag) => [areaTag, { name: areaTag }])),
    },
    ftn: {
      networks: {
        [FTN_NETWORK]: {
          address: OUR_ADDRESS,
          // Port 9 (discard) on loopback: no poll is ever made (pollMinutes 0), and were one made, nothing answers.
          hub: { address: HUB_ADDRESS, host: '127.0.0.1', port: 9, password: HUB_PASSWORD },
          pollMinutes: 0,
        },
      },
      areas: Object.fromEntries(
        Object.entries(ECHO_AREAS).map(([areaTag, echoTag]) => [areaTag, { network: FTN_NETWORK, echoTag }]),
      ),
    },
  };
}

/** Where the network's spool lies under the board's data directory (see src/ftn/ftn-spool.ts). */
export function ftnSpool(dataDir: string) {
  const root = path.join(dataDir, 'ftn', FTN_NETWORK);
  const hub = parseFtnAddress(HUB_ADDRESS);
  return {
    inbound: path.join(root, 'inbound'),
    bad: path.join(root, 'bad'),
    hubOutbound: path.join(root, 'outbound', `${hub.zone}.${hub.net}.${hub.node}.${hub.point}`),
  };
}

/** The generated packet set, written once per run and copied into each board's inbound. */
export interface TossFixture {
  readonly directory: string;
  /** The bundles, in the order a hub would have sent them. */
  readonly files: readonly string[];
  readonly packets: number;
  readonly messages: number;
  readonly bytes: number;
}

/**
 * A hub closes a packet at a few hundred KiB and bundles a few packets together (see
 * DEFAULT_BUNDLE_LIMITS in src/ftn/bundle.ts): ~400 messages a packet, ~1 MiB a bundle here.
 */
const PACKET_BYTES = 256 * 1024;
const PACKETS_PER_BUNDLE = 4;
/** Systems behind the hub whose users wrote the messages (net 2, nodes 1..60). */
const WRITING_NODES = 60;
/** Every tenth message replies to the one of its echo this many messages earlier. */
const REPLY_DISTANCE = 28;
const FIRST_WRITTEN_AT = Date.parse('2026-11-01T00:00:00Z');
const PARAGRAPH =
  'Echomail from the other side of the net: the hub bundles it, the mailer brings it, and the tosser files it. ';
/** SEEN-BY of every message: what a real echo's grows to after a few hops. */
const SEEN_BY_BASE: readonly NetNode[] = [
  ...Array.from({ length: 12 }, (_, index) => ({ net: 1, node: index + 1 })),
  { net: 1, node: 100 },
  { net: 1, node: 999 },
  ...Array.from({ length: 8 }, (_, index) => ({ net: 2, node: index + 1 })),
];

function writerOf(index: number): FtnAddress {
  return { zone: 21, net: 2, node: (index % WRITING_NODES) + 1, point: 0, domain: null };
}

/** Message `index` (0-based): its echo (they take turns), writer, MSGID serial, and the message it replies to. */
function generatedMessage(index: number, echoTags: readonly string[]): PackedMessage {
  const origin = writerOf(index);
  const replyTo = index % 10 === 9 && index >= REPLY_DISTANCE ? index - REPLY_DISTANCE : null;
  return packEchomail({
    area: echoTags[index % echoTags.length] ?? 'BENCH_GEN',
    fromName: `Node User ${index % 211}`,
    toName: index % 5 === 0 ? `Node User ${index % 13}` : 'All',
    subject: `Echo message ${index + 1} about things`,
    // ~400 bytes of text, as the message import's fixture.
    text: `${PARAGRAPH.repeat(3)}\n\nSee you on the next hop, message ${index + 1}.`,
    writtenAt: ftnDateTimeOf(new Date(FIRST_WRITTEN_AT + index * 10_000), 0),
    utcOffsetMinutes: 0,
    msgIdSerial: index + 1,
    replyTo: replyTo === null ? null : formatMsgId(writerOf(replyTo), replyTo + 1),
    pid: 'benchgen 1.0',
    tearLine: 'benchgen',
    origin,
    destination: parseFtnAddress(OUR_ADDRESS),
    originLine: `Bench node ${origin.node}`,
    seenBy: [...SEEN_BY_BASE, { net: 2, node: origin.node }].sort((a, b) => a.net - b.net || a.node - b.node),
    path: [
      { net: 2, node: origin.node },
      { net: 1, node: 100 },
    ],
  });
}

/**
 * Writes `messageCount` echomail messages into `directory` as the hub would send them to this
 * board: type 2+ packets from the hub with its password, closed at PACKET_BYTES, zipped
 * PACKETS_PER_BUNDLE to a bundle. Every message has MSGID, PID, TZUTC, a ~400-byte text, an
 * origin line, SEEN-BY and PATH; every tenth a REPLY to an earlier message of its echo.
 */
export async function writeTossFixture(
  directory: string,
  messageCount: number,
  progress: Progress,
): Promise<TossFixture> {
  await mkdir(directory, { recursive: true });
  const echoTags = Object.values(ECHO_AREAS);
  const header = {
    origin: parseFtnAddress(HUB_ADDRESS),
    destination: parseFtnAddress(OUR_ADDRESS),
    createdAt: ftnDateTimeOf(new Date(FIRST_WRITTEN_AT), 0),
    password: HUB_PASSWORD,
  };
  const files: string[] = [];
  let bytes = 0;
  let packetCount = 0;
  let bundleEntries: { name: string; data: Buffer }[] = [];
  let packed: PackedMessage[] = [];
  let packedBytes = 0;
  const closeBundle = async () => {
    if (bundleEntries.length === 0) return;
    const name = formatBundleName(files.length + 1, 1, 0);
    const bundle = writeBundle(bundleEntries, { modifiedAt: new Date(FIRST_WRITTEN_AT) });
    await writeFile(path.join(directory, name), bundle);
    files.push(name);
    bytes += bundle.length;
    bundleEntries = [];
  };
  const closePacket = async () => {
    if (packed.length === 0) return;
    packetCount += 1;
    bundleEntries.push({ name: formatPacketFileName(packetCount), data: writePacket(header, packed) });
    packed = [];
    packedBytes = 0;
    if (bundleEntries.length === PACKETS_PER_BUNDLE) await closeBundle();
  };
  for (let index = 0; index < messageCount; index += 1) {
    const message = generatedMessage(index, echoTags);
    packed.push(message);
    // The body and, about, the packed header's 14 bytes, the date's 20 and the names and subject.
    packedBytes += message.body.length + 60;
    if (packedBytes >= PACKET_BYTES) await closePacket();
    if (index % 10_000 === 0) progress.update(`  packing echomail: ${index.toLocaleString('en-US')} messages`);
  }
  await closePacket();
  await closeBundle();
  return { directory, files, packets: packetCount, messages: messageCount, bytes };
}

/** VmHWM of `pid` every this often while the toss runs: its last reading is the process's peak. */
const PEAK_SAMPLE_MS = 20;

/**
 * Copies the fixture's bundles into the board's inbound (in order: the tosser takes the oldest
 * first), runs `baud ftn toss` as its own process, as an operator or cron does, and times it from
 * spawn to exit (start-up included, as the import's figure). The toss's peak RSS is its VmHWM,
 * read every PEAK_SAMPLE_MS until it exits (`/usr/bin/time -v` is not on every machine).
 * No `baud serve` may run on the board meanwhile: a serving node tosses the inbound too.
 */
export async function measureFtnToss(options: {
  readonly baud: BaudInstallation;
  readonly dataDir: string;
  readonly fixture: TossFixture;
  readonly progress: Progress;
}): Promise<FtnTossResult> {
  const { fixture, progress } = options;
  const spool = ftnSpool(options.dataDir);
  await mkdir(spool.inbound, { recursive: true });
  for (const name of fixture.files) await copyFile(path.join(fixture.directory, name), path.join(spool.inbound, name));
  progress.log(
    `  tossing ${fixture.messages.toLocaleString('en-US')} echomail messages (${fixture.files.length} bundles, ${fixture.packets} packets, ${(fixture.bytes / 2 ** 20).toFixed(1)} MiB) with baud ftn toss …`,
  );
  let peakRssBytes = 0;
  let sampler: NodeJS.Timeout | undefined;
  const started = performance.now();
  let reports: TossReport[];
  try {
    reports = await runBaudCommand<TossReport[]>(options.baud, ['ftn', 'toss', FTN_NETWORK], {
      onSpawn(pid) {
        const sample = () => {
          try {
            peakRssBytes = Math.max(peakRssBytes, peakResidentBytes(pid));
          } catch {
            // Gone: the last reading stands.
          }
        };
        sample();
        sampler = setInterval(sample, PEAK_SAMPLE_MS);
      },
    });
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const report = reports.find((entry) => entry.network === FTN_NETWORK);
  const left = (await readdir(spool.inbound)).length;
  const bad = (await readdir(spool.bad)).length;
  const problems: string[] = [];
  if (!report) problems.push(`baud ftn toss reported no ${FTN_NETWORK}`);
  else {
    if (report.echomail !== fixture.messages)
      problems.push(`tossed ${report.echomail} echomail of ${fixture.messages} generated`);
    if (report.packets !== fixture.packets) problems.push(`tossed ${report.packets} packets of ${fixture.packets}`);
    if (report.duplicates + report.skipped + report.bad + report.netmail > 0) {
      problems.push(
        `${report.duplicates} duplicates, ${report.skipped} skipped, ${report.bad} bad, ${report.netmail} netmail`,
      );
    }
  }
  if (left > 0) problems.push(`${left} files left in the inbound`);
  if (bad > 0) problems.push(`${bad} files in bad/`);
  const result: FtnTossResult = {
    messages: fixture.messages,
    bundles: fixture.files.length,
    packets: fixture.packets,
    bytes: fixture.bytes,
    tossed: report?.echomail ?? 0,
    seconds,
    messagesPerSec: (report?.echomail ?? 0) / seconds,
    peakRssBytes,
    problem: problems.length > 0 ? `FTN toss: ${problems.join('; ')}` : null,
  };
  progress.log(
    `  tossed ${result.tossed.toLocaleString('en-US')} messages in ${seconds.toFixed(1)} s = ${Math.round(result.messagesPerSec).toLocaleString('en-US')} messages/s, peak RSS ${(peakRssBytes / 2 ** 20).toFixed(1)} MiB${result.problem ? `  ! ${result.problem}` : ''}`,
  );
  return result;
}
