import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type {
  BenchRun,
  DatabaseKind,
  DatabaseRun,
  EchomailPostingResult,
  EventFanoutResult,
  FtnTossResult,
  TerminalCallersResult,
  TransferResult,
} from './bench-results.js';
import { MiB } from './process-memory.js';
import type { TargetReport } from './targets.js';

type Style = 'text' | 'markdown';

const DATABASE_NAMES: Record<DatabaseKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
export const DOC_START = '<!-- bench:start -->';
export const DOC_END = '<!-- bench:end -->';

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${Number(value.toFixed(2))} ms`;
const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
const mibPerSec = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB/s`;

/** Column alignment: numbers right, words left. */
type Align = 'left' | 'right';

function table(
  style: Style,
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly Align[] = [],
): string {
  if (style === 'markdown') {
    const line = (cells: readonly string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
    const rule = headers.map((_, column) => (align[column] === 'right' ? '---:' : '---'));
    return [line(headers), line(rule), ...rows.map(line)].join('\n');
  }
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        align[column] === 'right' ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((width) => '─'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

function scenarioTable(style: Style, run: DatabaseRun): string {
  const rows = run.scenarios.map((result) => [
    result.title,
    String(result.connections),
    count(result.ceiling.reqPerSec),
    `${ms(result.ceiling.p50Ms)} / ${ms(result.ceiling.p99Ms)}`,
    count(result.baud.reqPerSec),
    `${ms(result.baud.p50Ms)} / ${ms(result.baud.p99Ms)}`,
    result.problem ? 'FAILED (below)' : percent(result.ratio),
  ]);
  return table(
    style,
    ['scenario', 'conns', 'ceiling req/s', 'ceiling p50 / p99', 'baud req/s', 'baud p50 / p99', 'baud / ceiling'],
    rows,
    ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
}

function transferRow(title: string, reference: string, transfer: TransferResult | null): string[] {
  if (!transfer) return [title, '—', reference, '—', '—', '—'];
  return [
    `${title} (${(transfer.bytes / MiB).toFixed(0)} MiB)`,
    mibPerSec(transfer.baudBytesPerSec),
    `${reference}: ${mibPerSec(transfer.referenceBytesPerSec)}`,
    transfer.problem ? 'FAILED (below)' : percent(transfer.ratio),
    `+${mib(transfer.rssGrowthBytes)}`,
    Object.entries(transfer.alsoMeasured)
      .map(([name, rate]) => `${name}: ${mibPerSec(rate)}`)
      .join(', ') || '—',
  ];
}

function eventFanoutTable(style: Style, fanout: EventFanoutResult | null): string {
  const headers = [
    'event fan-out',
    'delivered',
    'delay p50 / p99 / max',
    'server RSS before → with streams',
    'per idle stream',
  ];
  const align: Align[] = ['left', 'right', 'right', 'right', 'right'];
  if (!fanout) return table(style, headers, [['not measured (below)', '—', '—', '—', '—']], align);
  const early = fanout.earlyDeliveries > 0 ? ` (${count(fanout.earlyDeliveries)} before the 201, counted as 0)` : '';
  return table(
    style,
    headers,
    [
      [
        `${count(fanout.streams)} streams on a fresh node (opened in ${fanout.openSeconds.toFixed(1)} s), ${count(fanout.posts)} posts at ${fanout.postsPerSecond}/s`,
        `${count(fanout.deliveries)} / ${count(fanout.expectedDeliveries)}${fanout.problem ? ' FAILED (below)' : ''}`,
        `${ms(fanout.p50Ms)} / ${ms(fanout.p99Ms)} / ${ms(fanout.maxMs)}${early}`,
        `${mib(fanout.rssBeforeBytes)} → ${mib(fanout.rssWithStreamsBytes)} (${mib(fanout.rssAfterPostsBytes)} after the posts)`,
        `${(fanout.bytesPerStream / 1024).toFixed(1)} KiB`,
      ],
    ],
    align,
  );
}

/**
 * Issue 35: `baud ftn toss` of the generated bundles, and the post scenario with and without an
 * echomail area (p50s timed to the microsecond by the bench itself, not autocannon).
 */
function ftnTables(style: Style, toss: FtnTossResult | null, posting: EchomailPostingResult | null): string {
  const tossRow = toss
    ? [
        `${count(toss.messages)} echomail messages in ${count(toss.bundles)} bundles (${count(toss.packets)} packets, ${mib(toss.bytes)} zipped)`,
        `${count(toss.tossed)}${toss.problem ? ' FAILED (below)' : ''}`,
        `${toss.seconds.toFixed(1)} s`,
        `${count(toss.messagesPerSec)} messages/s`,
        mib(toss.peakRssBytes),
      ]
    : ['not measured (below)', '—', '—', '—', '—'];
  const tossTable = table(
    style,
    ['`baud ftn toss` as its own process, start-up included', 'tossed', 'time', 'rate', 'peak RSS (VmHWM)'],
    [tossRow],
    ['left', 'right', 'right', 'right', 'right'],
  );
  const headers = ['posting, one node, its scanner exporting', 'posts', 'posts/s', 'p50', 'p99'];
  const align: Align[] = ['left', 'right', 'right', 'right', 'right'];
  if (!posting)
    return `${tossTable}

${table(style, headers, [['not measured (below)', '—', '—', '—', '—']], align)}`;
  const row = (title: string, times: EchomailPostingResult['plain']) => [
    `${title} (\`${times.areaTag}\`)`,
    count(times.posts),
    count(times.reqPerSec),
    ms(times.p50Ms),
    ms(times.p99Ms),
  ];
  const postingTable = table(
    style,
    headers,
    [
      row('into an area of no network', posting.plain),
      row('into an echomail area, exported', posting.echomail),
      [
        `echomail p50 ÷ plain p50, ${posting.rounds} rounds of ${posting.roundSeconds} s each, ${posting.connections} connections`,
        '',
        '',
        `×${posting.ratio.toFixed(3)}`,
        '',
      ],
      [
        `exported to the hub's outbound${posting.problem ? ' — FAILED (below)' : ''}`,
        `${count(posting.exported)} / ${count(posting.echomailPosted)}`,
        `${count(posting.packets)} packets`,
        `caught up ≤ ${posting.exportLagSeconds.toFixed(2)} s after a round`,
        '',
      ],
    ],
    align,
  );
  return `${tossTable}

${postingTable}`;
}

/** Idle SSH callers on their own node, then login → main menu one caller at a time (with a key, with a password). */
function terminalTables(style: Style, terminal: TerminalCallersResult | null): string {
  const idleHeaders = [
    'idle SSH callers at the main menu',
    'held',
    'server RSS before → with callers',
    'per caller',
    'after they hung up',
  ];
  const idleAlign: Align[] = ['left', 'right', 'right', 'right', 'right'];
  if (!terminal) return table(style, idleHeaders, [['not measured (below)', '—', '—', '—', '—']], idleAlign);
  const ended =
    terminal.sessionsEndedMs === null
      ? 'sessions NOT ended (below)'
      : `every session ended ${ms(terminal.sessionsEndedMs)} after the last hang-up`;
  const idle = table(
    style,
    idleHeaders,
    [
      [
        `${count(terminal.callers)} callers of ${terminal.accounts} accounts on a fresh node (dialled in ${terminal.openSeconds.toFixed(1)} s)`,
        `${count(terminal.held)} / ${count(terminal.callers)}${terminal.problem ? ' FAILED (below)' : ''}`,
        `${mib(terminal.rssBeforeBytes)} → ${mib(terminal.rssWithCallersBytes)}`,
        `${(terminal.bytesPerCaller / 1024).toFixed(1)} KiB`,
        `${mib(terminal.rssAfterCloseBytes)}; ${ended}`,
      ],
    ],
    idleAlign,
  );
  const spread = ({ p50Ms, p99Ms, maxMs }: { p50Ms: number; p99Ms: number; maxMs: number }) =>
    `${ms(p50Ms)} / ${ms(p99Ms)} / ${ms(maxMs)}`;
  const logins = table(
    style,
    [
      'login → main menu, one caller at a time',
      'logins',
      'ready → menu p50 / p99 / max',
      'dial → menu p50 / p99 / max',
    ],
    terminal.logins.map((times) => [
      times.method === 'key'
        ? 'with a registered ed25519 key'
        : 'with the password (dial → menu includes one argon2 verification)',
      `${count(times.logins)}${times.failures > 0 ? ` (${times.failures} FAILED, below)` : ''}`,
      spread(times.readyToMenu),
      spread(times.connectToMenu),
    ]),
    ['left', 'right', 'right', 'right'],
  );
  return `${idle}\n\n${logins}`;
}

function otherFigures(style: Style, run: DatabaseRun): string {
  const transfers = table(
    style,
    ['transfer', 'baud', 'reference', 'baud / reference', 'server RSS growth', 'also measured'],
    [
      transferRow('upload', 'stream copy', run.upload),
      transferRow('download', 'bare createReadStream server', run.download),
    ],
    ['left', 'right', 'left', 'right', 'right', 'left'],
  );
  const twoFactor = run.login?.twoFactor
    ? `; a login with a TOTP code took ${run.login.twoFactor.totpLoginMs.toFixed(1)} ms against ${run.login.twoFactor.plainLoginMs.toFixed(1)} ms without (median of ${run.login.twoFactor.rounds} each, one at a time): ×${run.login.twoFactor.ratio.toFixed(2)}`
    : '';
  const login = run.login
    ? `${run.login.argon2Ms.toFixed(1)} ms per argon2 verification (${run.login.argon2Parameters}, alone) → at most ${count(run.login.argon2BoundReqPerSec)} logins/s on these cores; the login scenario reached ${percent(run.login.ratioToArgon2Bound)} of that${twoFactor}`
    : 'not measured';
  const facts = [
    ['idle RSS (started, seeded, before any request)', mib(run.idleRssBytes)],
    ['peak RSS over the whole run (VmHWM)', mib(run.peakRssBytes)],
    [
      'memory after a crawl: RSS after start → one walk of the area → a second walk',
      `${mib(run.crawlMemory.afterStartBytes)} → ${mib(run.crawlMemory.afterWalkBytes)} → ${mib(run.crawlMemory.afterSecondWalkBytes)}`,
    ],
    [
      'seeding: `baud message import` (start-up included)',
      `${count(run.messageCount)} messages in ${run.seeding.seconds.toFixed(1)} s = ${count(run.seeding.messagesPerSec)} messages/s`,
    ],
    [
      'the same import without the search index (a build whose `indexMessages` writes nothing, just before)',
      run.importWithoutIndex === null
        ? 'not measured'
        : `${run.importWithoutIndex.seconds.toFixed(1)} s = ${count(run.importWithoutIndex.messagesPerSec)} messages/s`,
    ],
    [
      'walking the area, 100 a page, for the deep cursor',
      `${count(run.walk.pages)} pages, ${count(run.walk.messagesSeen)} messages in ${run.walk.seconds.toFixed(1)} s`,
    ],
    ['login cost', login],
  ];
  if (run.statistics) {
    const { autovacuum, analyzeSeconds, firstPageMs, cursorPageMs } = run.statistics;
    facts.push([
      'PostgreSQL page times before → after ANALYZE (one request at a time)',
      `page 1 ${ms(firstPageMs.before)} → ${ms(firstPageMs.after)}, page 2 ${ms(cursorPageMs.before)} → ${ms(cursorPageMs.after)}; ANALYZE ${analyzeSeconds.toFixed(1)} s (autovacuum ${autovacuum} on this server)`,
    ]);
  }
  const problems =
    run.problems.length > 0 ? `\n\nFailures:\n${run.problems.map((problem) => `- ${problem}`).join('\n')}` : '';
  return `${transfers}\n\n${eventFanoutTable(style, run.eventFanout)}\n\n${terminalTables(style, run.terminalCallers)}\n\n${ftnTables(style, run.ftnToss, run.echomailPosting)}\n\n${table(style, ['figure', 'value'], facts)}${problems}`;
}

function targetTable(style: Style, report: TargetReport, runs: readonly DatabaseRun[]): string {
  const verdict = (isMet: boolean | null, binds: boolean, isAim: boolean) => {
    const word = isMet === null ? 'NOT MEASURED' : isMet ? 'met' : 'NOT MET';
    const shown = style === 'markdown' && isMet !== true ? `**${word}**` : word;
    return isAim ? `${shown} (aim)` : binds ? shown : `${shown} (reported beside)`;
  };
  const rows = report.map(({ target, outcomes }) => [
    target.text,
    ...outcomes.map(
      (outcome) =>
        `${verdict(outcome.isMet, target.bindsOn.includes(outcome.database), target.isAim)}: ${outcome.measured}`,
    ),
  ]);
  return table(style, ['target (issue 16)', ...runs.map((run) => DATABASE_NAMES[run.database])], rows);
}

function runSummary(run: BenchRun): string[] {
  const { settings, machine } = run;
  return [
    `Run: ${settings.quick ? '--quick' : 'full'} — ${count(settings.messageCount)} messages in one area, ${mib(settings.transferBytes)} upload/download, ${count(settings.ftnTossMessages)} echomail messages to toss; autocannon in its own process, ${settings.readConnections} connections (${settings.writeConnections} for posting and login), ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per figure; baud's request log at \`${settings.logLevel}\` into a file.`,
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${(machine.memoryBytes / 1024 / MiB).toFixed(0)} GiB RAM, Node ${machine.node}, ${machine.os}; 1-minute load average ${machine.loadAverage.toFixed(2)} at start.`,
    `Code: ${run.build.source === 'head' ? `commit ${machine.commit}` : `the working tree on commit ${machine.commit} with ${machine.uncommittedSrcFiles} uncommitted file(s) under src/`}, compiled with tsc in ${run.build.seconds.toFixed(1)} s${run.build.typeErrors.length > 0 ? ` (${run.build.typeErrors.length} type errors reported, code emitted anyway)` : ''}.`,
  ];
}

/** Item 4 of issue 16: what checking each kind of credential costs in CPU, apart from the database. */
function credentialTable(style: Style, run: BenchRun): string {
  const { credentials } = run;
  const micros = (value: number) => `${value.toFixed(2)} µs`;
  return table(
    style,
    ['credential check (this process, compiled build)', 'CPU per check'],
    [
      ['access token, jose with the secret as bytes (WebCrypto import each time)', micros(credentials.joseWithBytesUs)],
      ['access token, first use: jose with a KeyObject', micros(credentials.firstVerificationUs)],
      ['access token, every later use: verified-token cache', micros(credentials.repeatVerificationUs)],
      ['API key: SHA-256 of the presented key (then one indexed lookup)', micros(credentials.apiKeyHashUs)],
    ],
    ['left', 'right'],
  );
}

/** The whole report as text for the terminal. */
export function renderText(run: BenchRun, report: TargetReport): string {
  const parts = [...runSummary(run), ''];
  for (const databaseRun of run.runs) {
    parts.push(`== ${DATABASE_NAMES[databaseRun.database]}`, scenarioTable('text', databaseRun), '');
    parts.push(otherFigures('text', databaseRun), '');
  }
  parts.push('== Credentials', credentialTable('text', run), '');
  parts.push('== Targets', targetTable('text', report, run.runs));
  return parts.join('\n');
}

/** The generated part of docs/PERFORMANCE.md (between the markers). */
export function renderMarkdown(run: BenchRun, report: TargetReport, resultsFile: string): string {
  const parts = [
    `_Generated by \`npm run bench${run.settings.quick ? ' -- --quick' : ''}\` on ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC (raw figures: \`${resultsFile}\`, not committed). Everything between the bench markers is rewritten by each run._`,
    '',
    ...runSummary(run).map((line) => `- ${line}`),
    '',
    '### Targets',
    '',
    targetTable('markdown', report, run.runs),
  ];
  for (const databaseRun of run.runs) {
    parts.push('', `### ${DATABASE_NAMES[databaseRun.database]}`, '', scenarioTable('markdown', databaseRun));
    parts.push('', otherFigures('markdown', databaseRun));
  }
  parts.push('', '### Credentials', '', credentialTable('markdown', run));
  return parts.join('\n');
}

/** Writes the run (and the target verdicts) as JSON under bench/results/; returns the path. */
export function writeResultsJson(directory: string, run: BenchRun, report: TargetReport): string {
  mkdirSync(directory, { recursive: true });
  const file = path.join(directory, `${run.startedAt.replace(/[:.]/g, '-')}.json`);
  const targets = report.map(({ target, outcomes }) => ({
    id: target.id,
    text: target.text,
    bindsOn: target.bindsOn,
    isAim: target.isAim,
    outcomes,
  }));
  writeFileSync(file, `${JSON.stringify({ ...run, targets }, null, 2)}\n`);
  return file;
}

/**
 * Replaces what lies between the bench markers of `docFile` with `generated`, keeping every
 * hand-written line outside them. A document without the markers gets them appended.
 */
export function updateGeneratedSection(docFile: string, generated: string): void {
  const text = readFileSync(docFile, 'utf8');
  const start = text.indexOf(DOC_START);
  const end = text.indexOf(DOC_END);
  const block = `${DOC_START}\n${generated}\n${DOC_END}`;
  const updated =
    start !== -1 && end > start
      ? `${text.slice(0, start)}${block}${text.slice(end + DOC_END.length)}`
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(docFile, updated);
}
