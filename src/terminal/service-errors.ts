import { BaudError } from '../errors.js';

/** What a caller reads when something failed that no rule explains: the error itself goes to the log. */
export const UNEXPECTED_ERROR_TEXT = 'Something went wrong; please try again.';

/** A wait in words: "40 seconds", "1 minute", "12 minutes". */
export function formatWait(seconds: number): string {
  if (seconds < 90) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/** Seconds until a refused request may be tried again, from its Retry-After (a 429 or 503), if it has one. */
function retryAfterSecondsOf(error: BaudError): number | undefined {
  const header = error.headers['retry-after'];
  const seconds = header === undefined ? Number.NaN : Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/**
 * A service's refusal as one line for the caller: the error's own detail (written for people:
 * "You may not post in message area "news"."), sentence-cased, and when to try again for a
 * throttled request. Null for an error no service raised on purpose: a bug or an outage, which
 * the caller hears about only as UNEXPECTED_ERROR_TEXT.
 */
export function serviceErrorText(error: unknown): string | null {
  if (!(error instanceof BaudError)) return null;
  let text = error.detail.trim();
  text = text.charAt(0).toUpperCase() + text.slice(1);
  if (!/[.!?:]$/.test(text)) text += '.';
  const retryAfter = retryAfterSecondsOf(error);
  if (error.status === 429 && retryAfter !== undefined) {
    const when = `in ${formatWait(retryAfter)}`;
    text = /try again later\.$/i.test(text) ? text.replace(/later\.$/i, `${when}.`) : `${text} Try again ${when}.`;
  }
  return text;
}
