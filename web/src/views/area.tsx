import { useEffect, useState } from 'preact/hooks';
import type { MessageSummary } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { type Column, DataTable } from '../data-table.js';
import { useLiveEvents } from '../live.js';
import { href } from '../router.js';
import { bbsTextToPlainText } from '../text/AnsiText.js';
import { formatDate, Loading, Pager, useLoad, useTitle } from '../ui.js';
import { areaPageAddress, areaPositionOf, loadAreaPage } from './area-pages.js';
import { useAreaPlace } from './area-place.js';

/** The list's columns; messages above `readUpTo` (the caller's pointer) are marked new. */
function messageColumns(readUpTo: number | null): readonly Column<MessageSummary>[] {
  return [
    {
      label: 'Subject',
      cell: (message) => (
        <>
          <a href={href('message', { uuid: message.uuid })}>{message.subject}</a>
          {readUpTo !== null && message.messageId > readUpTo && <span class="badge new">new</span>}
        </>
      ),
    },
    { label: 'From', cell: (message) => message.fromUserName },
    { label: 'To', class: 'wide-only', cell: (message) => message.toUserName },
    {
      label: 'Date',
      cell: (message) => <time dateTime={message.timestamp}>{formatDate(message.timestamp)}</time>,
    },
  ];
}

/**
 * An area's messages, a page at a time, the oldest at the top of each page. The area opens at
 * the caller's first unread message (logged in) or at its newest page; Older and Newer lead
 * both ways, and the address names the page (`?order=&cursor=`), so each can be bookmarked and
 * reloaded. `?unread=1` shows only what the caller has not read. On the newest page, messages
 * posted meanwhile appear as they arrive.
 */
export function AreaView({ areaTag, query, address }: { areaTag: string; query: URLSearchParams; address: string }) {
  const { info, user } = useBoard();
  const position = areaPositionOf(query, user !== null);
  const { order, cursor, onlyUnread } = position;
  const place = useAreaPlace(areaTag, user?.userId);
  const area = place.data?.area ?? null;
  const page = useLoad(async () => {
    // The area's own refusal (log in, no access) is what the list says.
    if (place.error !== null) throw place.error;
    return area === null ? null : loadAreaPage(areaTag, position, address, area);
  }, [areaTag, order, cursor, onlyUnread, area, place.error]);
  const [arrived, setArrived] = useState<MessageSummary[]>([]);
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    setArrived([]);
    setDeleted(new Set());
  }, [areaTag, order, cursor, onlyUnread]);
  const isNewestPage = page.data !== null && page.data?.newer === null;
  useLiveEvents(
    (event) => {
      if (event.type === 'reset') {
        // The stream lost events while away: what is shown may be out of date.
        setArrived([]);
        place.reload();
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
    [areaTag, isNewestPage, place.reload],
  );
  useTitle(area?.name ?? areaTag, info?.boardName ?? 'baud');

  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/">Conferences</a>
        {place.data && <a href={href('conference', { confTag: area?.confTag ?? '' })}>{place.data.conferenceName}</a>}
      </nav>
      <h1>{area?.name ?? areaTag}</h1>
      {area?.desc && <p class="muted">{area.desc}</p>}
      <p class="actions">
        {user && <a href={href('post', { areaTag })}>New message</a>}
        {user &&
          (onlyUnread ? (
            <a href={href('area', { areaTag })}>All messages</a>
          ) : (
            <a href={href('area', { areaTag }, { unread: 1 })}>
              Unread only{area?.unreadCount ? ` (${area.unreadCount})` : ''}
            </a>
          ))}
        <a href={areaPageAddress(areaTag, 'oldest', null, onlyUnread)}>Oldest</a>
        <a href={areaPageAddress(areaTag, 'newest', null, onlyUnread)}>Newest</a>
      </p>
      <Loading state={page}>
        {(shown) => {
          if (shown === null) return null;
          const messages = [
            ...shown.messages,
            ...arrived.filter((live) => !shown.messages.some((m) => m.uuid === live.uuid)),
          ].filter((message) => !deleted.has(message.uuid));
          return messages.length === 0 ? (
            <p>{onlyUnread ? 'You have read everything here.' : 'No messages yet.'}</p>
          ) : (
            <DataTable
              rows={messages}
              columns={messageColumns(shown.readUpTo)}
              rowKey={(message) => message.uuid}
              rowClass={(message) => (message.replyToMessageId === null ? '' : 'is-reply')}
              tableClass="list messages"
            />
          );
        }}
      </Loading>
      <Pager label="Message pages" older={page.data?.older ?? null} newer={page.data?.newer ?? null} />
      <p aria-live="polite" class="sr-only">
        {arrived.length > 0 ? `${arrived.length} new ${arrived.length === 1 ? 'message' : 'messages'}` : ''}
      </p>
    </section>
  );
}
