import { useEffect, useState } from 'preact/hooks';
import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { MessageSummary } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { type Column, DataTable } from '../data-table.js';
import { useLiveEvents } from '../live.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { bbsTextToPlainText } from '../text/AnsiText.js';
import { body, formatDate, Loading, Pager, useLoad, useTitle } from '../ui.js';

const PAGE_SIZE = 25;

const MESSAGE_COLUMNS: readonly Column<MessageSummary>[] = [
  { label: 'Subject', cell: (message) => <a href={href('message', { uuid: message.uuid })}>{message.subject}</a> },
  { label: 'From', cell: (message) => message.fromUserName },
  { label: 'To', class: 'wide-only', cell: (message) => message.toUserName },
  {
    label: 'Date',
    cell: (message) => <time dateTime={message.timestamp}>{formatDate(message.timestamp)}</time>,
  },
];

/**
 * An area's messages, oldest first, a page at a time (`?cursor=` in the address, so each page
 * can be bookmarked); `?unread=1` shows only what the caller has not read. On the newest page,
 * messages posted meanwhile appear as they arrive.
 */
export function AreaView({ areaTag, query }: { areaTag: string; query: URLSearchParams }) {
  const { info, user } = useBoard();
  const cursor = query.get('cursor');
  const onlyUnread = query.get('unread') === '1' && user !== null;
  const listName = `${areaTag}${onlyUnread ? ':unread' : ''}`;
  const area = useLoad(
    async () => body(await client.api.GET(`${API_PREFIX}/messages/areas/{areaTag}`, { params: { path: { areaTag } } })),
    [areaTag, user?.userId],
  );
  const page = useLoad(async () => {
    const answer = body(
      await client.api.GET(`${API_PREFIX}/messages/areas/{areaTag}/messages`, {
        params: {
          path: { areaTag },
          query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}), ...(onlyUnread ? { unread: 'true' } : {}) },
        },
      }),
    );
    // Recorded with the answer it belongs to: the next page's way back is this page.
    if (answer.meta.nextCursor !== null) rememberStep(listName, cursor, answer.meta.nextCursor);
    return answer;
  }, [areaTag, cursor, onlyUnread, user?.userId]);
  const [arrived, setArrived] = useState<MessageSummary[]>([]);
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    setArrived([]);
    setDeleted(new Set());
  }, [areaTag, cursor, onlyUnread]);
  const isNewestPage = page.data !== null && page.data.meta.nextCursor === null;
  useLiveEvents(
    (event) => {
      if (event.type === 'reset') {
        // The stream lost events while away: what is shown may be out of date.
        setArrived([]);
        page.reload();
        area.reload();
        return;
      }
      const message = event.data as MessageSummary;
      if (message.areaTag !== areaTag) return;
      if (event.type === 'message.deleted') {
        setDeleted((gone) => new Set(gone).add(message.uuid));
        return;
      }
      if (event.type !== 'message.created' || !isNewestPage) return;
      // The event carries the subject as written, pipe and ANSI codes included; the list shows it plain.
      const arrival = { ...message, subject: bbsTextToPlainText(message.subject) };
      setArrived((list) => (list.some((known) => known.uuid === message.uuid) ? list : [...list, arrival]));
    },
    [areaTag, isNewestPage, page.reload, area.reload],
  );
  useTitle(area.data?.name ?? areaTag, info?.boardName ?? 'baud');

  const back = stepBack(listName, cursor);
  const pageHref = (to: string | null) =>
    href('area', { areaTag }, { cursor: to || undefined, unread: onlyUnread ? 1 : undefined });
  const next = page.data?.meta.nextCursor ?? null;

  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/">Conferences</a>
        {area.data && <a href={href('conference', { confTag: area.data.confTag })}>{area.data.confTag}</a>}
      </nav>
      <h1>{area.data?.name ?? areaTag}</h1>
      {area.data?.desc && <p class="muted">{area.data.desc}</p>}
      <p class="actions">
        {user && <a href={href('post', { areaTag })}>New message</a>}
        {user &&
          (onlyUnread ? (
            <a href={href('area', { areaTag })}>All messages</a>
          ) : (
            <a href={href('area', { areaTag }, { unread: 1 })}>
              Unread only{area.data?.unreadCount ? ` (${area.data.unreadCount})` : ''}
            </a>
          ))}
      </p>
      <Loading state={page}>
        {(list) => {
          const messages = [
            ...list.data,
            ...arrived.filter((live) => !list.data.some((m) => m.uuid === live.uuid)),
          ].filter((message) => !deleted.has(message.uuid));
          return messages.length === 0 ? (
            <p>{onlyUnread ? 'You have read everything here.' : 'No messages yet.'}</p>
          ) : (
            <DataTable
              rows={messages}
              columns={MESSAGE_COLUMNS}
              rowKey={(message) => message.uuid}
              rowClass={(message) => (message.replyToMessageId === null ? '' : 'is-reply')}
              tableClass="list messages"
            />
          );
        }}
      </Loading>
      <Pager label="Message pages" older={back === null ? null : pageHref(back)} newer={next ? pageHref(next) : null} />
      <p aria-live="polite" class="sr-only">
        {arrived.length > 0 ? `${arrived.length} new ${arrived.length === 1 ? 'message' : 'messages'}` : ''}
      </p>
    </section>
  );
}
