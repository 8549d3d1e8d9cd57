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
