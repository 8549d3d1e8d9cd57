import type { SessionTokens } from '../../auth/auth-service.js';
import type { Board } from '../../board.js';
import { BaudError, UnauthorizedError } from '../../errors.js';
import { registrationModeOf } from '../../users/registration-mode.js';
import type { CallerTerminal } from '../caller-terminal.js';
import { titleLines } from '../menu-lines.js';
import { singleLine } from '../message-text.js';
import { errorLine, type TerminalLog } from '../screen-context.js';
import type { TerminalConnection } from '../terminal-connection.js';
import { themed } from '../theme.js';
import { signUp } from './sign-up.js';

/** What the login prompt works with: no caller yet. */
export interface LoginContext {
  readonly board: Board;
  readonly term: CallerTerminal;
  readonly connection: Pick<TerminalConnection, 'remoteAddress' | 'isSecure'>;
  readonly log: TerminalLog;
}

/** Failed logins after which the line is hung up (the throttle counts them across connections too). */
export const MAX_LOGIN_FAILURES = 3;
/** The user name that starts the sign-up questions instead of a login. */
export const NEW_USER_NAME = 'new';
/** As the API's login body bounds them. */
const MAX_USERNAME_LENGTH = 256;
const MAX_PASSWORD_LENGTH = 1024;
const MAX_CODE_LENGTH = 64;

type Attempt =
  | { readonly kind: 'in'; readonly tokens: SessionTokens }
  | { readonly kind: 'failed' }
  /** The line will be hung up: gave up, throttled, an account waiting for approval. */
  | { readonly kind: 'over' };

/** One login, asking for the two-factor code when the account wants it. */
async function attemptLogin(context: LoginContext, username: string, password: string): Promise<Attempt> {
  const { board, term, connection } = context;
  const { theme } = term;
  const login = (otp?: string) =>
    board.auth.login({
      username,
      password,
      otp,
      clientAddress: connection.remoteAddress,
      isSecure: connection.isSecure,
      via: 'terminal',
    });
  try {
    try {
      return { kind: 'in', tokens: await login() };
    } catch (error) {
      if (!(error instanceof UnauthorizedError && error.members.otpRequired)) throw error;
    }
    const code = await term.readLine({
      prompt: [themed(theme, 'prompt', 'Code: ')],
      maxLength: MAX_CODE_LENGTH,
      isHidden: true,
    });
    if (code === null) return { kind: 'over' };
    return { kind: 'in', tokens: await login(code.trim()) };
  } catch (error) {
    if (error instanceof UnauthorizedError) {
      term.print([themed(theme, 'error', error.code === 'auth.invalid-otp' ? 'Wrong code.' : 'Login incorrect.')]);
      return { kind: 'failed' };
    }
    term.print(errorLine(context, error));
    // Throttled, or an application the sysop has not approved: another try here cannot succeed.
    return error instanceof BaudError ? { kind: 'over' } : { kind: 'failed' };
  }
}

/**
 * The telnet login prompt: `Username:`, `Password:` (not echoed), and `Code:` for an account
 * with two-factor login, through the same login as the API (its throttle, its session, with
 * `via: 'terminal'`). The user name `new` starts the sign-up unless registration is closed;
 * `startWithSignUp` starts there at once (an SSH caller who came as `new`).
 * Returns the tokens of the new session, or null when the line is to be hung up: after
 * MAX_LOGIN_FAILURES failed tries, when throttled (said with when to try again), or when the
 * caller gave up (Ctrl-C) or signed up for an account that waits for the sysop.
 */
export async function promptLogin(
  context: LoginContext,
  options: { readonly startWithSignUp?: boolean } = {},
): Promise<SessionTokens | null> {
  const { board, term } = context;
  const { theme } = term;
  const isOpen = registrationModeOf(board.config) !== 'closed';
  term.show(() => [
    ...titleLines(theme, singleLine(board.config.general.boardName)),
    ...(isOpen ? [[themed(theme, 'muted', `New here? Type ${NEW_USER_NAME} as your user name to sign up.`)]] : []),
    [],
  ]);
  let failures = 0;
  let isSignUpAsked = options.startWithSignUp === true;
  while (failures < MAX_LOGIN_FAILURES) {
    const typed = isSignUpAsked
      ? NEW_USER_NAME
      : await term.readLine({
          prompt: [themed(theme, 'prompt', 'Username: ')],
          maxLength: MAX_USERNAME_LENGTH,
          inputStyle: theme.input,
        });
    isSignUpAsked = false;
    if (typed === null) return null;
    const username = typed.trim();
    if (username === '') continue;
    if (username.toLowerCase() === NEW_USER_NAME) {
      if (!isOpen) {
        term.print([themed(theme, 'error', 'This board takes no new users: ask the sysop for an account.')]);
        continue;
      }
      if ((await signUp(context)) === 'pending') return null;
      continue;
    }
    const password = await term.readLine({
      prompt: [themed(theme, 'prompt', 'Password: ')],
      maxLength: MAX_PASSWORD_LENGTH,
      isHidden: true,
    });
    if (password === null) return null;
    const attempt = await attemptLogin(context, username, password);
    if (attempt.kind === 'in') return attempt.tokens;
    if (attempt.kind === 'over') return null;
    failures += 1;
  }
  term.print([themed(theme, 'error', 'Too many failed tries.')]);
  return null;
}
