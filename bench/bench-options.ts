import { parseArgs } from 'node:util';
import type { BenchSettings } from './bench-results.js';
import { DEFAULT_POSTGRES_URL } from './postgres-schema.js';
import { MiB } from './process-memory.js';
import type { BuildSource } from './server-build.js';

export interface BenchOptions {
  readonly settings: BenchSettings;
  /** Also measure on PostgreSQL (a fresh schema, dropped afterwards). */
  readonly postgresUrl: string | null;
  /** Measure src/ as it is on disk instead of the committed HEAD. */
  readonly buildSource: BuildSource;
  readonly writeDocs: boolean;
  /** Exit 1 when a target is missed, not only when a scenario fails. */
  readonly strict: boolean;
}

export const USAGE = `npm run bench [-- options]

Starts a real baud server (compiled from the committed HEAD), seeds one area through \`baud message import\`,
and measures every scenario of issue 16 against a bare node:http server returning the same
bytes, in the same run. Prints a table, writes bench/results/<time>.json and regenerates the
generated part of docs/PERFORMANCE.md.

  --quick              100,000 messages, 64 MiB transfers, 20,000 echomail to toss, 1 s warm-up + 3 s per figure
  --pg                 also run on PostgreSQL (${DEFAULT_POSTGRES_URL}, fresh schema, dropped after)
  --pg-url <url>       PostgreSQL server to use with --pg
  --messages <n>       messages in the area (default 1,000,000; --quick 100,000)
  --ftn-messages <n>   echomail messages in the packet set baud ftn toss takes (default 100,000; --quick 20,000)
  --duration <s>       measured seconds per figure (default 10; --quick 3)
  --warmup <s>         warm-up seconds before each figure (default 3; --quick 1)
  --connections <n>    connections for the read scenarios (default 50)
  --worktree           measure src/ as it is on disk (uncommitted edits included), not HEAD
  --log-level <level>  baud's logging.level (default info, the shipped default)
  --no-docs            leave docs/PERFORMANCE.md alone
  --strict             exit 1 when a target of the issue is missed (always: when a scenario fails)
  --help               this text`;

function positiveInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, not "${text}"`);
  return value;
}

/** Reads the command line; returns null when only `--help` was asked for. */
export function parseBenchOptions(argv: readonly string[]): BenchOptions | null {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      pg: { type: 'boolean', default: false },
      'pg-url': { type: 'string' },
      messages: { type: 'string' },
      'ftn-messages': { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      worktree: { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'info' },
      'no-docs': { type: 'boolean', default: false },
      strict: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const quick = values.quick === true;
  const warmupText = values.warmup;
  return {
    settings: {
      quick,
      messageCount: positiveInteger('messages', values.messages, quick ? 100_000 : 1_000_000),
      ftnTossMessages: positiveInteger('ftn-messages', values['ftn-messages'], quick ? 20_000 : 100_000),
      transferBytes: (quick ? 64 : 512) * MiB,
      durationSeconds: positiveInteger('duration', values.duration, quick ? 3 : 10),
      warmupSeconds: warmupText === '0' ? 0 : positiveInteger('warmup', warmupText, quick ? 1 : 3),
      readConnections: positiveInteger('connections', values.connections, 50),
      writeConnections: 10,
      logLevel: values['log-level'] ?? 'info',
    },
    postgresUrl: values.pg || values['pg-url'] ? (values['pg-url'] ?? DEFAULT_POSTGRES_URL) : null,
    buildSource: values.worktree ? 'worktree' : 'head',
    writeDocs: values['no-docs'] !== true,
    strict: values.strict === true,
  };
}
