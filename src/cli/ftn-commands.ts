import type { Command } from 'commander';
import type { BinkpProgress } from '../ftn/binkp-session.js';
import type { ScanReport } from '../ftn/ftn-scanner.js';
import type { FtnNetworkStatus, FtnSessionSummary, FtnStatus, PollReport, SpoolFiles } from '../ftn/ftn-service.js';
import type { TossReport } from '../ftn/ftn-tosser.js';
import { type CommonOptions, printProgress, printResult, withBoard, withCommonOptions } from './cli-context.js';
import { createProgressBar, type ProgressBar } from './progress-bar.js';

const plural = (count: number, one: string, many = `${one}s`) =>
  `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

function describeFiles({ files, bytes }: SpoolFiles): string {
  return files === 0 ? 'none' : `${plural(files, 'file')} (${plural(bytes, 'byte')})`;
}

/** The table of `baud ftn status`: a block per network, a row per link. */
export function describeFtnStatus(status: FtnStatus): string[] {
  if (status.networks.length === 0) return ['the board is in no FTN network (ftn.networks in the configuration)'];
  const lines: string[] = [];
  for (const network of status.networks) {
    if (lines.length > 0) lines.push('');
    lines.push(describeNetwork(network), ...describeLinks(network));
    lines.push(
      `  inbound: ${describeFiles(network.inbound)} · bad: ${describeFiles(network.bad)} · netmail queued: ${network.queuedNetmail}`,
    );
    const toss = network.lastToss;
    lines.push(
      toss === null
        ? '  last toss: never'
        : `  last toss: ${toss.tossedAt} ${toss.fileName} ${toss.outcome}: ${
            toss.outcome === 'bad'
              ? toss.detail
              : `${toss.imported} imported, ${plural(toss.duplicates, 'duplicate')}, ${toss.skipped} skipped`
          }`,
    );
  }
  return lines;
}

function describeNetwork(network: FtnNetworkStatus): string {
  const polling = network.pollMinutes === 0 ? 'polled on demand' : `polled every ${network.pollMinutes} min`;
  return `${network.network} ${network.address} (${polling}, ${plural(network.areas, 'echo area')})`;
}

function describeSession(link: FtnNetworkStatus['links'][number]): string {
  const session = link.lastSession;
  const now = link.inSessionOn === null ? '' : ` (in session on ${link.inSessionOn})`;
  if (session === null) return `never${now}`;
  return `${session.at} ${session.ok ? 'ok' : `failed: ${session.error ?? 'unknown'}`}${now}`;
}

function describeLinks(network: FtnNetworkStatus): string[] {
  const rows = network.links.map((link) => [
    link.address,
    link.role,
    link.calls ?? '(calls us)',
    describeFiles(link.outbound),
    describeSession(link),
  ]);
  const header = ['LINK', 'ROLE', 'CALLED AT', 'OUTBOUND', 'LAST SESSION'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const format = (row: readonly string[]) =>
    `  ${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ')}`;
  return [format(header), ...rows.map(format)];
}

function describeToss(report: TossReport): string {
  return `${report.network}: tossed ${plural(report.files, 'file')} (${plural(report.packets, 'packet')}): ${report.echomail} echomail, ${report.netmail} netmail imported, ${plural(report.duplicates, 'duplicate')}, ${report.skipped} skipped, ${report.bad} to bad`;
}

function describeScan(report: ScanReport): string[] {
  return [
    `${report.network}: packed ${report.echomail} echomail and ${report.netmail} netmail into ${plural(report.packets, 'packet')}`,
    ...report.failed.map((failure) => `  message ${failure.messageId} not packed: ${failure.reason}`),
  ];
}

function describeSessionSummary(network: string, session: FtnSessionSummary): string {
  if (session.outcome === 'busy') {
    return `${network}: ${session.link} is in a session already (another node, or its call): nothing was sent or received now`;
  }
  const moved = (files: readonly { size: number }[]) =>
    `${plural(files.length, 'file')} (${plural(
      files.reduce((sum, file) => sum + file.size, 0),
      'byte',
    )})`;
  const what = `sent ${moved(session.sent)}, received ${moved(session.received)}`;
  return session.outcome === 'ok'
    ? `${network}: session with ${session.link} ok in ${session.seconds.toFixed(1)} s: ${what}`
    : `${network}: session with ${session.link} failed after ${session.seconds.toFixed(1)} s: ${session.error ?? 'unknown'} (${what})`;
}

function describePoll(report: PollReport): string[] {
  return [
    ...describeScan(report.scan),
    describeSessionSummary(report.network, report.session),
    describeToss(report.toss),
  ];
}

/** A bar per file moving in a session, on stderr (see createProgressBar). */
function fileProgress(): (network: string, event: BinkpProgress) => void {
  const bars = new Map<string, ProgressBar>();
  return (network, event) => {
    const key = `${network} ${event.direction} ${event.name}`;
    if (event.type === 'file-started') {
      const arrow = event.direction === 'in' ? '<-' : '->';
      const bar = createProgressBar(`${network} ${arrow} ${event.name}`, 'bytes');
      bars.set(key, bar);
      bar.update(event.offset, event.size);
      return;
    }
    const bar = bars.get(key);
    if (event.type === 'file-progress') {
      bar?.update(event.bytes, event.size);
    } else if (event.type === 'file-done') {
      bar?.update(event.size, event.size);
      bar?.finish();
      bars.delete(key);
    } else {
      bar?.finish();
      bars.delete(key);
      printProgress(`${network}: ${event.name} skipped: ${event.reason}`);
    }
  };
}

/** `baud ftn …`: the operator's view of the board's FTN networks. */
export function registerFtnCommands(program: Command): void {
  const ftn = program.command('ftn').description('FTN networks (FidoNet technology): echomail and netmail over binkp');

  withCommonOptions(
    ftn
      .command('status')
      .description(
        'per network: our address, each link and what waits in its outbound, the inbound, files in bad, queued netmail, the last toss',
      ),
  ).action(async (options: CommonOptions) => {
    const status = await withBoard(options, (board) => board.ftn.status());
    printResult(options, status, describeFtnStatus(status));
  });

  withCommonOptions(
    ftn
      .command('poll [network]')
      .description(
        'call the hub now (of one network, or of each): pack what waits, send and receive over binkp, toss what came; progress on stderr, a summary on stdout',
      ),
  ).action(async (network: string | undefined, options: CommonOptions) => {
    const reports = await withBoard(options, async (board) => {
      const names = network === undefined ? [...board.ftn.networks.keys()] : [network];
      const done: PollReport[] = [];
      const onProgress = fileProgress();
      for (const name of names) {
        const hub = board.ftn.networks.get(name)?.hub;
        if (hub) printProgress(`${name}: calling ${hub.name} at ${hub.host}:${hub.port} …`);
        done.push(...(await board.ftn.poll(name, { onProgress })));
      }
      return done;
    });
    printResult(
      options,
      reports,
      reports.length === 0
        ? ['the board is in no FTN network (ftn.networks in the configuration)']
        : reports.flatMap(describePoll),
    );
    // A failed call is a failed command (for cron and scripts); a busy hub is not: the other session carries the mail.
    if (reports.some((report) => report.session.outcome === 'failed')) process.exitCode = 1;
  });

  withCommonOptions(
    ftn
      .command('toss [network]')
      .description(
        'toss what waits in the inbound (of one network, or of all): echomail into its areas, netmail into inboxes; bad files go to bad/ with a reason',
      ),
  ).action(async (network: string | undefined, options: CommonOptions) => {
    const reports = await withBoard(options, (board) => board.ftn.toss(network));
    printResult(options, reports, reports.map(describeToss));
  });

  withCommonOptions(
    ftn
      .command('scan [network]')
      .description(
        'pack what was posted in echomail areas, and netmail sent, into the outbounds (of one network, or of all)',
      ),
  ).action(async (network: string | undefined, options: CommonOptions) => {
    const reports = await withBoard(options, (board) => board.ftn.scan(network));
    printResult(options, reports, reports.flatMap(describeScan));
  });
}
