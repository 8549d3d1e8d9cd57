/**
 * Progress on stderr (stdout stays the result table). On a terminal, `update` rewrites one
 * status line in place; elsewhere (CI logs, pipes) it prints at most one line every 5 s, so
 * a long step still shows life without flooding the log.
 */
export interface Progress {
  /** A line that stays. */
  log(text: string): void;
  /** The current state of a long step; replaced by the next update or log. */
  update(text: string): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  const isTerminal = stream.isTTY === true;
  let hasStatusLine = false;
  let lastPrintedAt = 0;
  const clearStatus = () => {
    if (hasStatusLine) stream.write('\r\x1b[K');
    hasStatusLine = false;
  };
  return {
    log(text) {
      clearStatus();
      stream.write(`${text}\n`);
      lastPrintedAt = 0;
    },
    update(text) {
      if (isTerminal) {
        clearStatus();
        stream.write(text.slice(0, (stream.columns ?? 120) - 1));
        hasStatusLine = true;
      } else if (Date.now() - lastPrintedAt >= 5_000) {
        stream.write(`${text}\n`);
        lastPrintedAt = Date.now();
      }
    },
  };
}
