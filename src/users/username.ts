import { BadRequestError } from '../errors.js';

export const USERNAME_MIN_LENGTH = 2;
export const USERNAME_MAX_LENGTH = 32;

/** The case-insensitive key usernames are unique and looked up by. */
export function usernameKey(username: string): string {
  return username.normalize('NFC').toLowerCase();
}

function usernameProblem(username: string): string | null {
  const length = [...username].length;
  if (length < USERNAME_MIN_LENGTH || length > USERNAME_MAX_LENGTH) {
    return `must be ${USERNAME_MIN_LENGTH} to ${USERNAME_MAX_LENGTH} characters`;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f]/.test(username)) return 'must not contain control characters';
  // Bidirectional controls and zero-width characters make one name look like another
  // ("admin" with a right-to-left override, or a zero-width space inside).
  if (/[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2069\ufeff]/.test(username)) {
    return 'must not contain invisible or text-direction characters';
  }
  if (username.trim() !== username) return 'must not start or end with a space';
  if (/^\d+$/.test(username)) return 'must not be all digits';
  return null;
}

/** Throws `BadRequestError` unless `username` follows the board's rules (decisions.md, Users). */
export function assertValidUsername(username: string): void {
  const problem = usernameProblem(username);
  if (problem)
    throw new BadRequestError('user.invalid-username', `username ${problem}`, [
      { pointer: '/username', message: problem },
    ]);
}
