import type { CallerTerminal } from './caller-terminal.js';
import { promptLine, titleLines } from './menu-lines.js';
import { showPaged } from './pager.js';
import type { Line } from './styled-text.js';
import { themed } from './theme.js';

/** Characters of a tag or number typed at a pick prompt. */
const MAX_PICK_LENGTH = 64;

/** A list to pick one entry of by its number or its tag. */
export interface PickList<T> {
  readonly title: string;
  readonly items: readonly T[];
  readonly tagOf: (item: T) => string;
  /** The entry's row after its number, for a window `columns` wide. */
  readonly row: (item: T, columns: number) => Line;
  /** Shown when the list is empty (and nothing is asked). */
  readonly emptyText: string;
  readonly prompt: string;
}

/** What the caller picked: an entry of the list, or a tag the list does not show, for the service to judge. */
export type Picked<T> = { readonly item: T } | { readonly tag: string };

/** The number column of a list of `count` entries. */
export function numberLabel(index: number, count: number): string {
  return `${String(index + 1).padStart(String(count).length)}) `;
}

/**
 * Shows the list (a page at a time), then asks for an entry: its number in the list or its tag
 * (any case), and Enter. A tag the list does not show is handed back as typed, so the service
 * answers it — with its own refusal for an area the caller may not use. Enter alone (or Ctrl-C)
 * gives up: null.
 */
export async function pickFromList<T>(term: CallerTerminal, list: PickList<T>): Promise<Picked<T> | null> {
  const { theme } = term;
  const { items } = list;
  const content = (columns: number): Line[] => [
    ...titleLines(theme, list.title),
    ...items.map((item, index) => [themed(theme, 'key', numberLabel(index, items.length)), ...list.row(item, columns)]),
  ];
  if (items.length === 0) {
    term.show(() => titleLines(theme, list.title));
    term.print([themed(theme, 'muted', list.emptyText)]);
    return null;
  }
  if ((await showPaged(term, content)) === 'quit') return null;
  for (;;) {
    const typed = await term.readLine({
      prompt: promptLine(theme, list.prompt, term.size().columns),
      maxLength: MAX_PICK_LENGTH,
      inputStyle: theme.input,
    });
    const answer = typed?.trim() ?? '';
    if (answer === '') return null;
    if (/^\d+$/.test(answer)) {
      const item = items[Number(answer) - 1];
      if (item !== undefined) return { item };
      term.print([themed(theme, 'error', `There is no number ${answer} in this list.`)]);
      continue;
    }
    const item = items.find((candidate) => list.tagOf(candidate).toLowerCase() === answer.toLowerCase());
    return item === undefined ? { tag: answer } : { item };
  }
}
