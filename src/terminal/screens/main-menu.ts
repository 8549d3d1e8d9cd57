import { menuLines } from '../menu-lines.js';
import { MAIN_MENU, type MainAction, menuItemFor, NODE_ACTIONS } from '../menus.js';
import { errorLine, type ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';
import { lastCallers, whoIsOnline } from './board-lists.js';
import { filesScreen } from './files.js';
import { mailScreen } from './mail.js';
import { newScan } from './new-scan.js';
import { postInArea } from './post.js';
import { profileScreen } from './profile.js';
import { readArea } from './read-area.js';
import { searchMessages } from './search.js';

/** What each entry of the main menu opens; a screen hands back the line to show under the menu. */
const SCREENS: {
  readonly [Action in Exclude<MainAction, 'goodbye'>]: (context: ScreenContext) => Promise<Line | undefined>;
} = {
  newScan,
  readArea,
  post: postInArea,
  mail: mailScreen,
  files: filesScreen,
  search: searchMessages,
  whoIsOnline,
  lastCallers,
  profile: profileScreen,
};

/**
 * The main menu until the caller says goodbye: a key opens a screen; whatever the screen
 * reports (or the one line of its failure) is shown under the menu when it comes back.
 */
export async function runMainMenu(context: ScreenContext): Promise<void> {
  const { term } = context;
  const { theme } = term;
  let status: Line | undefined;
  for (;;) {
    context.doing(NODE_ACTIONS.mainMenu);
    term.show((size) => menuLines(MAIN_MENU, theme, size.columns));
    if (status !== undefined) term.print(status);
    const key = await term.readKey(
      [themed(theme, 'prompt', 'Your choice: ')],
      (typed) => typed.kind === 'char' && menuItemFor(MAIN_MENU, typed.char) !== undefined,
    );
    const action = key.kind === 'char' ? menuItemFor(MAIN_MENU, key.char)?.action : undefined;
    if (action === undefined) continue;
    if (action === 'goodbye') return;
    try {
      status = await SCREENS[action](context);
    } catch (error) {
      status = errorLine(context, error);
    }
  }
}
