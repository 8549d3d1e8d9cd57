import { readFileSync } from 'node:fs';

export const MiB = 1024 * 1024;

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (!match?.[1]) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Resident set size of process `pid` now, in bytes (`VmRSS` of /proc/<pid>/status). */
export function residentBytes(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/** The highest resident set size process `pid` ever had, in bytes (`VmHWM`). */
export function peakResidentBytes(pid: number): number {
  return statusField(pid, 'VmHWM');
}

/**
 * Samples the RSS of `pid` every `intervalMs` until `stop()`, which returns the highest
 * sample (the sampler reads /proc, so the sampled process does no work for it).
 */
export function sampleResident(pid: number, intervalMs = 20): { stop(): number } {
  let peak = residentBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, residentBytes(pid));
    } catch {
      // The process is gone; the peak so far stands.
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, residentBytes(pid));
      } catch {
        // As above.
      }
      return peak;
    },
  };
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** CPU seconds process `pid` has used so far, user and system (/proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields from the ")" that ends it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The whole machine's CPU time so far, busy and total, in seconds (the first line of /proc/stat). */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  // idle and iowait
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}
