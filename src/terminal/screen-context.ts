import type { Board } from '../board.js';
import type { UserCaller } from '../caller.js';
import { CallerGoneError, type CallerTerminal } from './caller-terminal.js';
import type { NodeAction } from './menus.js';
import type { Notices } from './notices.js';
import { serviceErrorText, UNEXPECTED_ERROR_TEXT } from './service-errors.js';
import { SessionEndedError } from './session-credentials.js';
import type { Line } from './styled-text.js';
import { themed } from './theme.js';

/** Where the terminal reports what no caller should see: pino's `error` fits. */
export interface TerminalLog {
  error(details: object, message: string): void;
}

/** What every screen of a logged-in caller works with. */
export interface ScreenContext {
  readonly board: Board;
  readonly term: CallerTerminal;
  readonly notices: Notices;
  /** The caller now: resolved (and its token refreshed) as needed; throws SessionEndedError when over. */
  caller(): Promise<UserCaller>;
  /** Tells the node list what the caller is doing now. */
  doing(action: NodeAction): void;
  readonly log: TerminalLog;
}

/** True for the errors that end the whole session rather than one step of it. */
function endsSession(error: unknown): boolean {
  return error instanceof CallerGoneError || error instanceof SessionEndedError;
}

/**
 * A failed step as one line for the caller: a service's refusal in its own words, anything else
 * logged and told as "something went wrong". The errors that end the session are thrown on.
 */
export function errorLine(context: Pick<ScreenContext, 'term' | 'log'>, error: unknown): Line {
  if (endsSession(error)) throw error;
  const text = serviceErrorText(error);
  if (text === null) context.log.error({ err: error }, 'a terminal screen failed');
  return [themed(context.term.theme, 'error', text ?? UNEXPECTED_ERROR_TEXT)];
}
