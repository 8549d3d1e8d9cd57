import type { RegistrationInput } from '../../auth/registration-service.js';
import { BaudError } from '../../errors.js';
import { registrationModeOf } from '../../users/registration-mode.js';
import type { CallerTerminal } from '../caller-terminal.js';
import { promptLine, titleLines } from '../menu-lines.js';
import { singleLine } from '../message-text.js';
import { errorLine } from '../screen-context.js';
import { themed } from '../theme.js';
import type { LoginContext } from './login.js';

/** The longest name a terminal asks for: the username rules allow 32 characters. */
const MAX_USERNAME_LENGTH = 64;
/** As the API's registration body bounds them. */
const MAX_PASSWORD_LENGTH = 1024;
const MAX_PROFILE_TEXT_LENGTH = 64;
const MAX_NOTE_LENGTH = 500;
/** Tries at one question before the sign-up gives up. */
const MAX_TRIES = 3;

/** How a sign-up ended: an account to log in with now, one that waits for the sysop, or none. */
export type SignUpOutcome = 'active' | 'pending' | 'none';

async function askText(
  term: CallerTerminal,
  prompt: string,
  options: { maxLength: number; isHidden?: boolean },
): Promise<string | null> {
  const typed = await term.readLine({
    prompt: promptLine(term.theme, prompt, term.size().columns),
    maxLength: options.maxLength,
    isHidden: options.isHidden ?? false,
    inputStyle: term.theme.input,
  });
  return typed === null ? null : typed.trim();
}

/** A new password, typed twice; null when the caller gave up or could not type the same one twice. */
async function askPassword(term: CallerTerminal): Promise<string | null> {
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const password = await term.readLine({
      prompt: [themed(term.theme, 'prompt', 'Choose a password: ')],
      maxLength: MAX_PASSWORD_LENGTH,
      isHidden: true,
    });
    if (password === null || password === '') return null;
    const again = await term.readLine({
      prompt: [themed(term.theme, 'prompt', 'Type it again: ')],
      maxLength: MAX_PASSWORD_LENGTH,
      isHidden: true,
    });
    if (again === null) return null;
    if (again === password) return password;
    term.print([themed(term.theme, 'error', 'The two passwords differ.')]);
  }
  return null;
}

/**
 * The sign-up questions of a caller who typed `new` at the login prompt, answered through the
 * registration service (its rules, its per-address limit): a name (asked again when taken or
 * not allowed), a password twice, and the optional real name and location; on a board where
 * the sysop approves accounts, a note for the sysop too.
 */
export async function signUp(context: LoginContext): Promise<SignUpOutcome> {
  const { board, term } = context;
  const { theme } = term;
  const mode = registrationModeOf(board.config);
  term.show(() => [
    ...titleLines(theme, `Sign up to ${singleLine(board.config.general.boardName)}`),
    ...(mode === 'approval'
      ? [[themed(theme, 'muted', 'The sysop approves new accounts: you can log in once they have.')]]
      : []),
  ]);
  let username = await askText(term, 'Choose a user name: ', { maxLength: MAX_USERNAME_LENGTH });
  if (!username) return 'none';
  let password = await askPassword(term);
  if (password === null) return 'none';
  const realName = await askText(term, 'Real name (optional): ', { maxLength: MAX_PROFILE_TEXT_LENGTH });
  if (realName === null) return 'none';
  const location = await askText(term, 'Location (optional): ', { maxLength: MAX_PROFILE_TEXT_LENGTH });
  if (location === null) return 'none';
  const note =
    mode === 'approval' ? await askText(term, 'A note for the sysop (optional): ', { maxLength: MAX_NOTE_LENGTH }) : '';
  if (note === null) return 'none';

  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const input: RegistrationInput = { username, password, realName, location, note };
    try {
      const registration = await board.registration.register(input, context.connection.remoteAddress);
      if (registration.status === 'active') {
        term.print([themed(theme, 'success', `Your account ${registration.username} is ready: log in with it now.`)]);
        return 'active';
      }
      term.print([
        themed(
          theme,
          'success',
          `Thank you, ${registration.username}. The sysop will look at your application: you can log in once it is approved.`,
        ),
      ]);
      return 'pending';
    } catch (error) {
      term.print(errorLine(context, error));
      const code = error instanceof BaudError ? error.code : '';
      if (code === 'user.invalid-username' || code === 'user.username-taken') {
        username = await askText(term, 'Choose another user name: ', { maxLength: MAX_USERNAME_LENGTH });
        if (!username) return 'none';
      } else if (code === 'user.password-too-short') {
        password = await askPassword(term);
        if (password === null) return 'none';
      } else {
        return 'none';
      }
    }
  }
  return 'none';
}
