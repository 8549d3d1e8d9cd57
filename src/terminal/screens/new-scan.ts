import { NODE_ACTIONS } from '../menus.js';
import type { ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';
import { areaSequence, readMessages } from './message-reader.js';

/**
 * `N`: the caller's unread messages, area by area in conference order, each area from its
 * new-scan pointer on; every message read moves the pointer, so a new scan cut short goes on
 * where it stopped next time.
 */
export async function newScan(context: ScreenContext): Promise<Line> {
  const { board, term } = context;
  const { theme } = term;
  context.doing(NODE_ACTIONS.readingMessages);
  const unread = await board.messages.listUnread(await context.caller());
  if (unread.length === 0) return [themed(theme, 'muted', 'No new messages.')];
  try {
    for (const area of unread) {
      context.notices.watchArea(area.areaTag);
      const pointer = area.lastReadMessageId;
      const sequence = areaSequence(context, area.areaTag, { afterId: pointer ?? 0, pointer });
      if ((await readMessages(context, sequence)) === 'quit') {
        return [themed(theme, 'muted', 'New scan stopped: it goes on from here next time.')];
      }
    }
  } finally {
    context.notices.watchArea(null);
  }
  return [themed(theme, 'success', 'No more new messages.')];
}
