import type { CallerTerminal } from './caller-terminal.js';
import type { Key } from './key-input.js';
import { keyPrompt } from './menu-lines.js';
import { type Menu, menuItemFor } from './menus.js';
import { type PagedContent, pageAt } from './pager.js';
import type { Line } from './styled-text.js';
import { themed } from './theme.js';

const isPagingKey = (key: Key) => key.kind === 'enter' || (key.kind === 'char' && key.char === ' ');

/**
 * Shows a document (a message, a mail, a file's details) a page at a time under the keys of
 * `menu`: Enter or Space shows the next page, and on the last page Enter is `enterAction`; a
 * menu key returns its action at once; Ctrl-C is `quit`. `status` is one line shown under
 * the first page. A resize lays the page out again.
 */
export async function readDocument<Action extends string>(
  term: CallerTerminal,
  content: PagedContent,
  menu: Menu<Action>,
  options: { readonly enterAction: Action; readonly quitAction: Action; readonly status?: Line | undefined },
): Promise<Action> {
  const { theme } = term;
  let offset = 0;
  let status = options.status;
  for (;;) {
    const reserved = status === undefined ? 1 : 2;
    const start = offset;
    term.show((size) => pageAt(content, size, start, reserved).page);
    if (status !== undefined) term.print(status);
    status = undefined;
    const position = pageAt(content, term.size(), start, reserved);
    const percent = Math.min(100, Math.floor(((position.offset + position.pageRows) * 100) / position.totalRows));
    const lead = position.hasMore ? [themed(theme, 'muted', `(${percent}%) `)] : [];
    const key = await term.readKey(
      keyPrompt(menu, theme, term.size().columns, lead),
      (typed) =>
        isPagingKey(typed) ||
        typed.kind === 'interrupt' ||
        (typed.kind === 'char' && menuItemFor(menu, typed.char) !== undefined),
    );
    if (isPagingKey(key)) {
      if (!position.hasMore) return options.enterAction;
      offset = position.offset + position.pageRows;
      continue;
    }
    if (key.kind !== 'char') return options.quitAction;
    return menuItemFor(menu, key.char)?.action ?? options.quitAction;
  }
}
