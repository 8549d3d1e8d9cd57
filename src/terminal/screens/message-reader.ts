import type { MessageDetail } from '../../messages/message-service.js';
import { readDocument } from '../document-view.js';
import { NODE_ACTIONS, READER_KEYS } from '../menus.js';
import { counted, singleLine, storedTextLines } from '../message-text.js';
import { errorLine, type ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';
import { dateTime } from '../times.js';
import { replyToMessage } from './post.js';

/** A message the reader can move from. */
export interface MessageRef {
  readonly uuid: string;
  readonly messageId: number;
}

/** The messages a reader moves through, one at a time: an area from a position, or search hits. */
export interface MessageSequence {
  first(): Promise<MessageRef | null>;
  next(current: MessageRef): Promise<MessageRef | null>;
  previous(current: MessageRef): Promise<MessageRef | null>;
  /** Told of each message once it is on screen (an area's reader moves the new-scan pointer). */
  seen?(message: MessageDetail): Promise<void>;
}

/**
 * The messages of one area in id order, from after `afterId` (0: the first), each fetched as
 * it is needed: one indexed read per step whatever the area's size. With `pointer` given (the
 * caller's new-scan pointer), reading past it moves it, as reading in any client does.
 */
export function areaSequence(
  context: ScreenContext,
  areaTag: string,
  options: { readonly afterId: number; readonly pointer?: number | null },
): MessageSequence {
  const { board } = context;
  let pointer = options.pointer;
  const step = async (afterKey: number | null, order: 'oldest' | 'newest') => {
    const page = await board.messages.listAreaMessages(await context.caller(), areaTag, { limit: 1, afterKey }, false, {
      order,
    });
    return page.items[0] ?? null;
  };
  return {
    first: () => step(options.afterId > 0 ? options.afterId : null, 'oldest'),
    next: (current) => step(current.messageId, 'oldest'),
    previous: (current) => step(current.messageId, 'newest'),
    async seen(message) {
      if (pointer === undefined || (pointer !== null && message.messageId <= pointer)) return;
      await board.messages.setPointer(await context.caller(), areaTag, message.messageId);
      pointer = message.messageId;
    },
  };
}

function headerLines(context: ScreenContext, message: MessageDetail): Line[] {
  const { theme } = context.term;
  const areaName = singleLine(context.board.areas.messageAreas.get(message.areaTag)?.name ?? message.areaTag);
  return [
    [themed(theme, 'title', areaName), themed(theme, 'muted', `  #${message.messageId}`)],
    [themed(theme, 'field', 'From: '), { text: singleLine(message.fromUserName) }],
    [themed(theme, 'field', 'To:   '), { text: singleLine(message.toUserName) }],
    [themed(theme, 'field', 'Subj: '), { text: singleLine(message.subject) }],
    [
      themed(theme, 'field', 'Date: '),
      { text: dateTime(message.timestamp) },
      ...(message.replyCount > 0
        ? [themed(theme, 'muted', `  (${counted(message.replyCount, 'reply', 'replies')})`)]
        : []),
    ],
    [],
  ];
}

/**
 * Shows the messages of `sequence` one at a time, a long one a page at a time: Enter pages
 * through a message and then goes on to the next, N goes on, B goes back, R replies, Q quits.
 * Returns `end` when the caller read past the last message, `quit` when they quit.
 */
export async function readMessages(context: ScreenContext, sequence: MessageSequence): Promise<'end' | 'quit'> {
  const { board, term } = context;
  const { theme } = term;
  let ref = await sequence.first();
  let status: Line | undefined;
  while (ref !== null) {
    context.doing(NODE_ACTIONS.readingMessages);
    const message = await board.messages.getMessage(await context.caller(), ref.uuid);
    await sequence.seen?.(message);
    const body = storedTextLines(message.body);
    const content = () => [...headerLines(context, message), ...body];
    let moveTo: MessageRef | null | 'stay' = 'stay';
    while (moveTo === 'stay') {
      const action = await readDocument(term, content, READER_KEYS, {
        enterAction: 'next',
        quitAction: 'quit',
        status,
      });
      status = undefined;
      if (action === 'quit') return 'quit';
      if (action === 'back') {
        const previous = await sequence.previous(ref);
        if (previous === null) status = [themed(theme, 'muted', 'This is the first message.')];
        else moveTo = previous;
      } else if (action === 'reply') {
        try {
          status = await replyToMessage(context, message);
        } catch (error) {
          status = errorLine(context, error);
        }
      } else {
        moveTo = await sequence.next(ref);
      }
    }
    ref = moveTo;
  }
  return 'end';
}
