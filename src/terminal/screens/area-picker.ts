import type { AreaDetail, ConferenceSummary } from '../../messages/message-service.js';
import { singleLine } from '../message-text.js';
import { pickFromList } from '../pick-from-list.js';
import type { ScreenContext } from '../screen-context.js';
import { fitColumns } from '../text-width.js';
import { themed } from '../theme.js';

/** A message area the caller picked, checked by the services for what they mean to do there. */
export interface PickedArea {
  readonly areaTag: string;
  readonly name: string;
}

/**
 * Lets the caller pick a message area: a conference first (skipped when they may read only
 * one), then one of its areas, each by its number in the list or its tag. An area's tag typed
 * at the conference prompt picks that area at once: a caller who knows where they go needs no
 * detour. A tag the lists do not show goes to the service, so an area the caller may not read —
 * or, to post, write — is refused in the service's words (thrown: the menu shows it). Null when
 * the caller gave up.
 */
export async function pickMessageArea(context: ScreenContext, purpose: 'read' | 'post'): Promise<PickedArea | null> {
  const { board, term } = context;
  const { theme } = term;
  const conferences = board.messages.listConferences(await context.caller());
  let confTag: string;
  const [only] = conferences;
  if (conferences.length === 1 && only !== undefined) {
    confTag = only.confTag;
  } else {
    const picked = await pickFromList<ConferenceSummary>(term, {
      title: 'Conferences',
      items: conferences,
      tagOf: (conference) => conference.confTag,
      row: (conference, columns) => [
        themed(theme, 'label', fitColumns(singleLine(conference.name), Math.min(30, Math.max(8, columns - 20)))),
        themed(theme, 'muted', ` ${conference.confTag}`),
      ],
      emptyText: 'There are no message areas you may read.',
      prompt: 'Conference or area (number or tag, Enter: back): ',
    });
    if (picked === null) return null;
    const typed = 'tag' in picked ? picked.tag.toLowerCase() : null;
    const areaTag = typed && [...board.areas.messageAreas.keys()].find((tag) => tag.toLowerCase() === typed);
    if (areaTag) return checkedArea(context, purpose, await board.messages.getArea(await context.caller(), areaTag));
    confTag = 'item' in picked ? picked.item.confTag : picked.tag;
  }
  const conference = await board.messages.getConference(await context.caller(), confTag);
  const picked = await pickFromList<AreaDetail>(term, {
    title: singleLine(conference.name),
    items: conference.areas,
    tagOf: (area) => area.areaTag,
    row: (area, columns) => [
      themed(theme, 'label', fitColumns(singleLine(area.name), Math.min(30, Math.max(8, columns - 26)))),
      themed(theme, 'muted', ` ${fitColumns(area.areaTag, 12)}`),
      ...(area.unreadCount ? [themed(theme, 'key', ` ${area.unreadCount} new`)] : []),
    ],
    emptyText: 'There are no areas here you may read.',
    prompt: purpose === 'post' ? 'Post in (number or tag, Enter: back): ' : 'Area (number or tag, Enter: back): ',
  });
  if (picked === null) return null;
  const area = 'item' in picked ? picked.item : await board.messages.getArea(await context.caller(), picked.tag);
  return checkedArea(context, purpose, area);
}

async function checkedArea(context: ScreenContext, purpose: 'read' | 'post', area: AreaDetail): Promise<PickedArea> {
  // Asked before the editor opens: nobody types a message the area would refuse.
  if (purpose === 'post') context.board.access.writableMessageArea(await context.caller(), area.areaTag);
  return { areaTag: area.areaTag, name: singleLine(area.name) };
}
