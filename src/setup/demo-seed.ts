import type { Board } from '../board.js';

/**
 * Demo content: messages (one with ANSI colour, one reply) and a couple of small files. Goes
 * through the same services as the operator import commands, so the demo exercises real code.
 */
export async function seedDemoContent(
  _board: Board,
  _users: { readonly sysopName: string; readonly demoUserName: string },
): Promise<void> {
  // Filled in once the message and file services land (issues 5 and 6).
}
