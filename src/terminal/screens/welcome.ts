import { titleLines } from '../menu-lines.js';
import { singleLine } from '../message-text.js';
import type { ScreenContext } from '../screen-context.js';
import type { SessionTimers } from '../session-timers.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';

/**
 * The welcome screen: the board's name, a greeting, the caller's unread mail. With a pause
 * configured it stays that long (a key cuts it short); without one the main menu follows at once.
 */
export async function showWelcome(
  context: ScreenContext,
  options: { readonly pauseSeconds: number; readonly timers: SessionTimers },
): Promise<void> {
  const { board, term } = context;
  const { theme } = term;
  const caller = await context.caller();
  const unread = await board.mail.unreadCount(caller);
  const lines: Line[] = [
    ...titleLines(theme, singleLine(board.config.general.boardName)),
    [{ text: 'Welcome, ' }, themed(theme, 'label', caller.user.username), { text: '!' }],
  ];
  if (unread > 0)
    lines.push([
      themed(theme, 'notice', unread === 1 ? 'You have 1 unread mail.' : `You have ${unread} unread mails.`),
    ]);
  term.show(() => lines);
  if (options.pauseSeconds <= 0) return;
  const cancel = options.timers.after(options.pauseSeconds * 1000, () => term.endInput(null));
  try {
    await term.runInput({
      onKey: () => true,
      render: () => term.writer.spans([themed(theme, 'muted', 'Press a key to go on.')]),
    });
  } finally {
    cancel();
  }
}
