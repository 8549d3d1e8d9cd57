import type { FoundMessageSummary } from '../../messages/message-service.js';
import { MAX_QUERY_LENGTH } from '../../search/search-query.js';
import { browseList } from '../browse-list.js';
import { promptLine, titleLines } from '../menu-lines.js';
import { LIST_KEYS, NODE_ACTIONS } from '../menus.js';
import { singleLine } from '../message-text.js';
import type { ScreenContext } from '../screen-context.js';
import type { Line, Span } from '../styled-text.js';
import { cutToColumns, fitColumns } from '../text-width.js';
import { themed } from '../theme.js';
import { dateOnly } from '../times.js';
import { type MessageSequence, readMessages } from './message-reader.js';

const HITS_PER_PAGE = 10;

/** A search snippet with its hits (the service marks them «so») drawn as keys are, the marks left out. */
function snippetSpans(context: ScreenContext, snippet: string): Span[] {
  const { theme } = context.term;
  const spans: Span[] = [];
  let isHit = false;
  for (const part of snippet.split(/([«»])/)) {
    if (part === '«' || part === '»') isHit = part === '«';
    else if (part !== '') spans.push(themed(theme, isHit ? 'key' : 'muted', part));
  }
  return spans;
}

/** The hits of one page in the order shown, from hit `index` on. */
function hitSequence(hits: readonly FoundMessageSummary[], index: number): MessageSequence {
  const at = (position: number) => hits[position] ?? null;
  let current = index;
  return {
    first: async () => at(current),
    async next() {
      current += 1;
      return at(current);
    },
    async previous() {
      if (current === 0) return null;
      current -= 1;
      return at(current);
    },
  };
}

/**
 * `S`: searches the messages the caller may read (the service's query language: words,
 * "phrases", OR, -exclusions, prefix*), newest first, and opens a hit in the reader; the
 * reader's N and B move through the hits of the page.
 */
export async function searchMessages(context: ScreenContext): Promise<Line | undefined> {
  const { board, term } = context;
  const { theme } = term;
  context.doing(NODE_ACTIONS.readingMessages);
  term.show(() => titleLines(theme, 'Search messages'));
  const typed = await term.readLine({
    prompt: promptLine(theme, 'Search for (Enter: back): ', term.size().columns),
    maxLength: MAX_QUERY_LENGTH,
    inputStyle: theme.input,
  });
  const q = typed?.trim() ?? '';
  if (q === '') return undefined;
  await browseList(context, {
    title: `Messages matching "${q}"`,
    pageSize: HITS_PER_PAGE,
    fetchPage: async (request) => board.messages.searchMessages(await context.caller(), { q }, request),
    entryLines: (hit, columns) => {
      const area = singleLine(board.areas.messageAreas.get(hit.areaTag)?.name ?? hit.areaTag);
      return [
        [
          themed(theme, 'label', fitColumns(singleLine(hit.subject), Math.max(10, columns - 40))),
          themed(theme, 'muted', ` ${fitColumns(area, 12)} ${fitColumns(singleLine(hit.fromUserName), 10)}`),
          themed(theme, 'muted', ` ${dateOnly(hit.timestamp)}`),
        ],
        [{ text: '    ' }, ...snippetSpans(context, cutToColumns(singleLine(hit.snippet), Math.max(10, columns - 5)))],
      ];
    },
    emptyText: 'Nothing matches.',
    menu: LIST_KEYS,
    open: async (_hit, index, hits) => {
      await readMessages(context, hitSequence(hits, index));
      return undefined;
    },
  });
  return undefined;
}
