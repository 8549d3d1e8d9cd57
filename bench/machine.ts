import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where a run happened: enough to tell two runs' figures apart. */
export interface Machine {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly node: string;
  readonly os: string;
  /** 1-minute load average when the run started: other work on the machine colours every figure. */
  readonly loadAverage: number;
  readonly commit: string;
  /** Files under src/ that differ from that commit (others may be editing while we measure). */
  readonly uncommittedSrcFiles: number;
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) return match[1].trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

function git(args: readonly string[]): string {
  try {
    return execFileSync('git', args, { cwd: path.resolve(import.meta.dirname, '..'), encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

export function describeMachine(): Machine {
  return {
    cpuModel: cpuModel(),
    cores: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    loadAverage: os.loadavg()[0] ?? 0,
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown',
    uncommittedSrcFiles: git(['status', '--porcelain', '--', 'src']).split('\n').filter(Boolean).length,
  };
}
