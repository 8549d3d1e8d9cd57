import type { Menu } from './menus.js';
import { type Line, lineColumns, type Span } from './styled-text.js';
import { fitColumns, textColumns } from './text-width.js';
import { type Theme, themed } from './theme.js';

/** Columns one entry of a menu takes when the screen is wide enough for two side by side. */
const MENU_COLUMN_WIDTH = 30;

/** Columns a prompt leaves for the answer before its hint makes way. */
const ANSWER_COLUMNS = 20;

/**
 * A prompt for a window `columns` wide. Its hint in parentheses, `(number or tag, Enter:
 * back)`, is left out when it would leave less than ANSWER_COLUMNS for the answer: on a narrow
 * window the answer needs the room more than the reminder.
 */
export function promptLine(theme: Theme, text: string, columns: number): Line {
  const fitted = textColumns(text) > columns - ANSWER_COLUMNS ? text.replace(/ \([^)]*\)/, '') : text;
  return [themed(theme, 'prompt', fitted)];
}

/** A screen's heading. */
export function titleLines(theme: Theme, title: string): Line[] {
  return [[themed(theme, 'title', title)], []];
}

function entry<Action extends string>(theme: Theme, item: Menu<Action>['items'][number]): Span[] {
  return [
    themed(theme, 'muted', '['),
    themed(theme, 'key', item.key),
    themed(theme, 'muted', '] '),
    themed(theme, 'label', item.label),
  ];
}

/** A menu as a screen draws it: its title, then its entries, two to a row when `columns` allows. */
export function menuLines<Action extends string>(menu: Menu<Action>, theme: Theme, columns: number): Line[] {
  const lines = titleLines(theme, menu.title);
  const perRow = columns >= 2 * MENU_COLUMN_WIDTH ? 2 : 1;
  for (let index = 0; index < menu.items.length; index += perRow) {
    const row: Span[] = [];
    menu.items.slice(index, index + perRow).forEach((item, column) => {
      const spans = entry(theme, item);
      if (column < perRow - 1) {
        // Pads the entry's label so the next one starts in its own column.
        const used = lineColumns(spans);
        const last = spans.pop() as Span;
        spans.push({
          ...last,
          text: fitColumns(last.text, Math.max(1, MENU_COLUMN_WIDTH - used + lineColumns([last]))),
        });
      }
      row.push(...spans);
    });
    lines.push(row);
  }
  return lines;
}

/**
 * The keys of `menu` as one prompt line, `[N] Next  [B] Back …: `, or just the keys
 * (`[N/B/R/Q]: `) when the full line does not fit in `columns`. `lead` goes first (a position,
 * "more below"), unless even the short form would not fit with it.
 */
export function keyPrompt<Action extends string>(
  menu: Menu<Action>,
  theme: Theme,
  columns: number,
  lead: readonly Span[] = [],
): Line {
  const full: Span[] = [...lead];
  menu.items.forEach((item, index) => {
    if (index > 0) full.push({ text: '  ' });
    full.push(...entry(theme, item));
  });
  full.push(themed(theme, 'prompt', ': '));
  if (lineColumns(full) < columns) return full;
  const keys = menu.items.map((item) => item.key).join('/');
  const short = [
    themed(theme, 'muted', '['),
    themed(theme, 'key', keys),
    themed(theme, 'muted', ']'),
    themed(theme, 'prompt', ': '),
  ];
  // The lead goes first to go: the keys are what the caller needs to see.
  return lineColumns([...lead, ...short]) < columns ? [...lead, ...short] : short;
}
