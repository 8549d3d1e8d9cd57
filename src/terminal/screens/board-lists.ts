import { readDocument } from '../document-view.js';
import { titleLines } from '../menu-lines.js';
import { BACK_KEYS, NODE_ACTIONS } from '../menus.js';
import { singleLine } from '../message-text.js';
import type { ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { fitColumns } from '../text-width.js';
import { themed } from '../theme.js';
import { dateTime } from '../times.js';

/** Rows the last-callers screen lists. */
const LAST_CALLERS_SHOWN = 20;

/** `W`: the board's nodes — every caller active in the last minutes, terminal or API — and what they do. */
export async function whoIsOnline(context: ScreenContext): Promise<undefined> {
  const { board, term } = context;
  const { theme } = term;
  context.doing(NODE_ACTIONS.boardInformation);
  const me = (await context.caller()).user.id;
  const nodes = await board.system.listNodes();
  const content = (columns: number): Line[] => {
    const nameColumns = Math.min(16, Math.max(6, columns - 40));
    const doingColumns = Math.min(26, Math.max(8, columns - 34));
    return [
      ...titleLines(theme, "Who's online"),
      [themed(theme, 'muted', `Node ${fitColumns('User', nameColumns)} ${fitColumns('Doing', doingColumns)} On`)],
      ...nodes.map(
        (node): Line => [
          themed(theme, 'key', String(node.node).padStart(4)),
          themed(theme, 'label', ` ${fitColumns(singleLine(node.username), nameColumns)}`),
          { text: ` ${fitColumns(singleLine(node.action), doingColumns)}` },
          themed(theme, 'muted', ` ${node.timeOnMinutes}m`),
          ...(node.userId === me ? [themed(theme, 'success', ' (you)')] : []),
        ],
      ),
    ];
  };
  await readDocument(term, content, BACK_KEYS, { enterAction: 'quit', quitAction: 'quit' });
  return undefined;
}

/** `L`: the most recent logins, newest first, from the terminal and the API alike. */
export async function lastCallers(context: ScreenContext): Promise<undefined> {
  const { board, term } = context;
  const { theme } = term;
  context.doing(NODE_ACTIONS.boardInformation);
  const callers = await board.system.listLastCallers(LAST_CALLERS_SHOWN);
  const content = (columns: number): Line[] => {
    const nameColumns = Math.min(16, Math.max(6, columns - 40));
    return [
      ...titleLines(theme, 'Last callers'),
      ...callers.map(
        (entry): Line => [
          themed(theme, 'muted', `${dateTime(entry.timestamp)} `),
          themed(theme, 'label', fitColumns(singleLine(entry.username), nameColumns)),
          { text: ` ${singleLine(entry.location)}` },
        ],
      ),
      ...(callers.length === 0 ? [[themed(theme, 'muted', 'Nobody has called yet.')]] : []),
    ];
  };
  await readDocument(term, content, BACK_KEYS, { enterAction: 'quit', quitAction: 'quit' });
  return undefined;
}
