import type { MailDetail, MailSummary } from '../../mail/mail-service.js';
import type { MailBox } from '../../mail/mail-store.js';
import { browseList } from '../browse-list.js';
import { readDocument } from '../document-view.js';
import { MAIL_MENU, MAIL_READER_KEYS, type MailAction, NODE_ACTIONS } from '../menus.js';
import { composeMessage } from '../message-editor.js';
import { singleLine, storedTextLines } from '../message-text.js';
import { errorLine, type ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { fitColumns } from '../text-width.js';
import { themed } from '../theme.js';
import { dateOnly, dateTime } from '../times.js';
import { quoteLines, replySubject } from './post.js';

const MAILS_PER_PAGE = 15;

/** A mail to write: empty for a new one, filled in for a reply. */
interface MailDraft {
  readonly to: string;
  readonly subject: string;
  readonly quote: readonly string[];
  readonly replyToUuid?: string;
}

/** Writes a mail and sends it at `/s` (one service call); the recipient is checked once typed. */
async function writeMail(context: ScreenContext, draft: MailDraft): Promise<Line> {
  const { board, term } = context;
  const { theme } = term;
  context.doing(NODE_ACTIONS.writingMail);
  const outcome = await composeMessage(term, {
    heading: draft.replyToUuid === undefined ? 'New mail' : `Reply to ${draft.to}`,
    to: draft.to,
    isRecipientRequired: true,
    // Whether the name is someone's, before the caller types a whole mail to nobody.
    checkRecipient: async (to) => {
      await board.profiles.getPublicProfile(await context.caller(), to);
    },
    subject: draft.subject,
    quote: draft.quote,
    failureLine: (error) => errorLine(context, error),
    async save({ to, subject, body }) {
      await board.mail.sendMail(await context.caller(), { to, subject, body, replyToUuid: draft.replyToUuid });
    },
  });
  context.doing(NODE_ACTIONS.readingMail);
  return outcome === 'saved'
    ? [themed(theme, 'success', 'Mail sent.')]
    : [themed(theme, 'muted', 'Aborted: nothing was sent.')];
}

function mailHeader(context: ScreenContext, mail: MailDetail): Line[] {
  const { theme } = context.term;
  return [
    [themed(theme, 'field', 'From: '), { text: singleLine(mail.from) }],
    [themed(theme, 'field', 'To:   '), { text: singleLine(mail.to) }],
    [themed(theme, 'field', 'Subj: '), { text: singleLine(mail.subject) }],
    [themed(theme, 'field', 'Date: '), { text: dateTime(mail.timestamp) }],
    [],
  ];
}

/** Opens one mail (an inbox mail is marked read by opening it): R replies, D deletes, Q goes back. */
async function readMail(context: ScreenContext, summary: MailSummary, box: MailBox): Promise<Line | undefined> {
  const { board, term } = context;
  const caller = await context.caller();
  const mail =
    box === 'inbox'
      ? await board.mail.setRead(caller, summary.uuid, true)
      : await board.mail.getMail(caller, summary.uuid);
  const body = storedTextLines(mail.body);
  const action = await readDocument(term, () => [...mailHeader(context, mail), ...body], MAIL_READER_KEYS, {
    enterAction: 'quit',
    quitAction: 'quit',
  });
  if (action === 'delete') {
    await board.mail.deleteMail(await context.caller(), mail.uuid);
    return [themed(term.theme, 'success', 'Mail deleted.')];
  }
  if (action === 'reply') {
    return writeMail(context, {
      to: singleLine(box === 'inbox' ? mail.from : mail.to),
      subject: replySubject(mail.subject),
      quote: quoteLines(mail.body),
      replyToUuid: mail.uuid,
    });
  }
  return undefined;
}

/** `M`: the inbox (newest first, unread marked), the sent box, reading, replying and writing mail. */
export async function mailScreen(context: ScreenContext): Promise<undefined> {
  const { board, term } = context;
  const { theme } = term;
  let box: MailBox = 'inbox';
  let status: Line | undefined;
  for (;;) {
    context.doing(NODE_ACTIONS.readingMail);
    const unread: number = box === 'inbox' ? await board.mail.unreadCount(await context.caller()) : 0;
    const shownBox: MailBox = box;
    const action: MailAction | 'quit' = await browseList(
      context,
      {
        title: shownBox === 'inbox' ? `Inbox (${unread} unread)` : 'Sent mail',
        pageSize: MAILS_PER_PAGE,
        fetchPage: async (request) => board.mail.listBox(await context.caller(), shownBox, false, request),
        entryLines: (mail, columns) => [
          [
            themed(theme, mail.read ? 'muted' : 'key', mail.read ? '  ' : '* '),
            themed(theme, 'label', fitColumns(singleLine(shownBox === 'inbox' ? mail.from : mail.to), 12)),
            { text: ` ${fitColumns(singleLine(mail.subject), Math.max(8, columns - 32))}` },
            themed(theme, 'muted', ` ${dateOnly(mail.timestamp)}`),
          ],
        ],
        emptyText: shownBox === 'inbox' ? 'No mail.' : 'You have sent no mail.',
        menu: MAIL_MENU,
        open: (mail) => readMail(context, mail, shownBox),
      },
      status,
    );
    status = undefined;
    if (action === 'quit') return undefined;
    if (action === 'inbox' || action === 'sent') box = action;
    else status = await writeMail(context, { to: '', subject: '', quote: [] });
  }
}
