/**
 * Progress of long CLI work on stderr (stdout stays for the result and `--json`). On a terminal
 * one line is redrawn in place: a bar, done/total, the rate and the time left; elsewhere (a log,
 * CI) a plain line at most every few seconds, so a log is not flooded.
 */
export interface ProgressBar {
  update(done: number, total: number): void;
  /** Ends the current line (the bar stays on screen with its final figures). */
  finish(): void;
}

const BAR_WIDTH = 24;
const PLAIN_EVERY_MS = 5000;
const REDRAW_EVERY_MS = 100;

function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
}

export function createProgressBar(
  label: string,
  unit: string,
  stream: NodeJS.WriteStream = process.stderr,
  now: () => number = () => performance.now(),
): ProgressBar {
  const started = now();
  let lastDrawn = Number.NEGATIVE_INFINITY;
  let lastLine = '';
  const isTerminal = stream.isTTY === true;

  const line = (done: number, total: number) => {
    const seconds = (now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(share * BAR_WIDTH);
    const left = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
    return `${label} ${bar} ${formatCount(done)}/${formatCount(total)} ${unit}, ${formatCount(Math.round(rate))}/s${
      done < total ? `, ${formatDuration(left)} left` : ''
    }`;
  };

  return {
    update(done, total) {
      const at = now();
      const isLast = done >= total;
      if (!isLast && at - lastDrawn < (isTerminal ? REDRAW_EVERY_MS : PLAIN_EVERY_MS)) return;
      lastDrawn = at;
      lastLine = line(done, total);
      stream.write(isTerminal ? `\r\u001b[2K${lastLine}` : `${lastLine}\n`);
    },
    finish() {
      if (isTerminal && lastLine !== '') stream.write('\n');
      lastLine = '';
    },
  };
}
