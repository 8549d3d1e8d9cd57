import { MAX_BODY_BYTES, MAX_SUBJECT_CODE_POINTS } from '../../messages/message-rules.js';
import type { MessageDetail } from '../../messages/message-service.js';
import { cutToCodePoints } from '../../text/cut-code-points.js';
import { NODE_ACTIONS } from '../menus.js';
import { composeMessage } from '../message-editor.js';
import { plainTextLines, singleLine } from '../message-text.js';
import { errorLine, type ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';
import { pickMessageArea } from './area-picker.js';

/** A reply's quote leaves at least half the body's room for the answer. */
const MAX_QUOTE_BYTES = MAX_BODY_BYTES / 2;

/** The subject of a reply: `Re: ` once, however deep the thread, cut to the subject limit. */
export function replySubject(subject: string): string {
  const bare = singleLine(subject).replace(/^(re:\s*)+/i, '');
  return cutToCodePoints(`Re: ${bare}`, MAX_SUBJECT_CODE_POINTS);
}

/** The lines a reply starts with: the message's text as shown, each line behind `> `, as much as fits. */
export function quoteLines(body: string): string[] {
  const quoted: string[] = [];
  let bytes = 0;
  for (const line of plainTextLines(body)) {
    const quotedLine = line === '' ? '>' : `> ${line}`;
    bytes += Buffer.byteLength(quotedLine, 'utf8') + 1;
    if (bytes > MAX_QUOTE_BYTES) break;
    quoted.push(quotedLine);
  }
  return quoted.length > 0 ? [...quoted, ''] : [];
}

const aborted = (context: ScreenContext): Line => [themed(context.term.theme, 'muted', 'Aborted: nothing was posted.')];

/** `P`: picks an area the caller may post in, then writes a new message there. */
export async function postInArea(context: ScreenContext): Promise<Line | undefined> {
  const area = await pickMessageArea(context, 'post');
  if (area === null) return undefined;
  context.doing(NODE_ACTIONS.writingMessages);
  let posted = 0;
  const outcome = await composeMessage(context.term, {
    heading: `Post in ${area.name}`,
    to: 'All',
    isRecipientRequired: false,
    subject: '',
    quote: [],
    failureLine: (error) => errorLine(context, error),
    async save(draft) {
      const message = await context.board.messages.postMessage(await context.caller(), area.areaTag, {
        subject: draft.subject,
        message: draft.body,
        toUserName: draft.to,
      });
      posted = message.messageId;
    },
  });
  if (outcome === 'aborted') return aborted(context);
  return [themed(context.term.theme, 'success', `Posted as message #${posted} in ${area.name}.`)];
}

/** `R` in the reader: a reply in the message's area, to its author, quoting it. */
export async function replyToMessage(context: ScreenContext, message: MessageDetail): Promise<Line> {
  const { board } = context;
  // Asked before the editor opens: nobody types a reply the area would refuse.
  board.access.writableMessageArea(await context.caller(), message.areaTag);
  context.doing(NODE_ACTIONS.writingMessages);
  let posted = 0;
  const outcome = await composeMessage(context.term, {
    heading: `Reply to ${singleLine(message.fromUserName)}`,
    to: singleLine(message.fromUserName),
    isRecipientRequired: false,
    subject: replySubject(message.subject),
    quote: quoteLines(message.body),
    failureLine: (error) => errorLine(context, error),
    async save(draft) {
      const reply = await board.messages.postMessage(await context.caller(), message.areaTag, {
        subject: draft.subject,
        message: draft.body,
        toUserName: draft.to,
        replyToMessageId: message.messageId,
      });
      posted = reply.messageId;
    },
  });
  context.doing(NODE_ACTIONS.readingMessages);
  if (outcome === 'aborted') return aborted(context);
  return [themed(context.term.theme, 'success', `Reply posted as message #${posted}.`)];
}
