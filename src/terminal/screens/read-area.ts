import { NODE_ACTIONS } from '../menus.js';
import type { ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';
import { pickMessageArea } from './area-picker.js';
import { areaSequence, readMessages } from './message-reader.js';

/**
 * `R`: picks an area, then reads it from the caller's first unread message (from the first
 * message when nothing is unread), moving the new-scan pointer past what is read.
 */
export async function readArea(context: ScreenContext): Promise<Line | undefined> {
  const { board, term } = context;
  const { theme } = term;
  const picked = await pickMessageArea(context, 'read');
  if (picked === null) return undefined;
  context.doing(NODE_ACTIONS.readingMessages);
  const area = await board.messages.getArea(await context.caller(), picked.areaTag);
  if (area.messageCount === 0) return [themed(theme, 'muted', `There are no messages in ${picked.name} yet.`)];
  const pointer = area.lastReadMessageId ?? null;
  const afterId = pointer !== null && (area.unreadCount ?? 0) > 0 ? pointer : 0;
  context.notices.watchArea(picked.areaTag);
  try {
    const outcome = await readMessages(context, areaSequence(context, picked.areaTag, { afterId, pointer }));
    return outcome === 'end' ? [themed(theme, 'muted', `No more messages in ${picked.name}.`)] : undefined;
  } finally {
    context.notices.watchArea(null);
  }
}
