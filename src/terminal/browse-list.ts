import type { Page, PageRequest } from '../page.js';
import { keyPrompt, titleLines } from './menu-lines.js';
import { type Menu, menuItemFor } from './menus.js';
import { showPaged } from './pager.js';
import { numberLabel } from './pick-from-list.js';
import { errorLine, type ScreenContext } from './screen-context.js';
import type { Line } from './styled-text.js';
import { themed } from './theme.js';

/** Characters of an answer at a list's prompt (a number or a key). */
const MAX_ANSWER_LENGTH = 16;

/** A list read a page at a time from a service, whose entries open by number (mail, files, search hits). */
export interface BrowseList<T, Action extends string> {
  readonly title: string;
  /** Entries one page asks the service for. */
  readonly pageSize: number;
  fetchPage(request: PageRequest): Promise<Page<T>>;
  /** An entry's rows; the first gets the entry's number in front. */
  entryLines(item: T, columns: number): Line[];
  readonly emptyText: string;
  /** The keys besides the numbers; `more` (next page) and `quit` are the list's own, the others end it. */
  readonly menu: Menu<Action | 'more' | 'quit'>;
  /** Opens an entry; what it returns is shown under the list when it comes back. */
  open(item: T, index: number, page: readonly T[]): Promise<Line | undefined>;
}

/**
 * Shows a service's list a page at a time, numbered, and takes a number (opens that entry),
 * the next page, quit, or one of the menu's own keys, which it returns for the screen to act
 * on. After an entry is opened the page is read again (a mail read is no longer unread).
 * Failures are shown under the list, one line each.
 */
export async function browseList<T, Action extends string>(
  context: ScreenContext,
  list: BrowseList<T, Action>,
  status: Line | undefined = undefined,
): Promise<Action | 'quit'> {
  const { term } = context;
  const { theme } = term;
  let request: PageRequest = { limit: list.pageSize, afterKey: null };
  let page = await list.fetchPage(request);
  let shownStatus = status;
  for (;;) {
    const items = page.items;
    const content = (columns: number): Line[] => [
      ...titleLines(theme, list.title),
      ...(items.length === 0 ? [[themed(theme, 'muted', list.emptyText)]] : []),
      ...items.flatMap((item, index) => {
        const [first = [], ...rest] = list.entryLines(item, columns);
        return [[themed(theme, 'key', numberLabel(index, items.length)), ...first], ...rest];
      }),
    ];
    await showPaged(term, content);
    if (shownStatus !== undefined) term.print(shownStatus);
    shownStatus = undefined;
    const typed = await term.readLine({
      prompt: keyPrompt(list.menu, theme, term.size().columns, [themed(theme, 'prompt', 'Number, or ')]),
      maxLength: MAX_ANSWER_LENGTH,
      inputStyle: theme.input,
      // The list's keys answer at once, as the main menu's do; numbers wait for Enter.
      isHotkey: (char) => !/\d/.test(char) && menuItemFor(list.menu, char) !== undefined,
    });
    const answer = typed?.trim() ?? '';
    if (answer === '') return 'quit';
    if (/^\d+$/.test(answer)) {
      const item = items[Number(answer) - 1];
      if (item === undefined) {
        shownStatus = [themed(theme, 'error', `There is no number ${answer} on this page.`)];
        continue;
      }
      try {
        shownStatus = await list.open(item, Number(answer) - 1, items);
        page = await list.fetchPage(request);
      } catch (error) {
        shownStatus = errorLine(context, error);
      }
      continue;
    }
    const action = menuItemFor(list.menu, answer)?.action;
    if (action === undefined) {
      shownStatus = [themed(theme, 'error', `"${answer}" is not a choice here.`)];
      continue;
    }
    if (action !== 'more') return action;
    if (page.nextKey === null) {
      shownStatus = [themed(theme, 'muted', 'This is the last page.')];
      continue;
    }
    request = {
      limit: list.pageSize,
      afterKey: page.nextKey,
      ...(page.bound === undefined ? {} : { bound: page.bound }),
    };
    page = await list.fetchPage(request);
  }
}
