import type { MessageArea } from '../api-types.js';
import { type Column, DataTable } from '../data-table.js';
import { href } from '../router.js';
import { formatDate } from '../ui.js';

const AREA_COLUMN: Column<MessageArea> = {
  label: 'Area',
  cell: (area) => (
    <>
      <a href={href('area', { areaTag: area.areaTag })}>{area.name}</a>
      {area.desc && <div class="muted small">{area.desc}</div>}
    </>
  ),
};

const UNREAD_COLUMN: Column<MessageArea> = {
  label: 'Unread',
  class: 'num',
  cell: (area) =>
    (area.unreadCount ?? 0) > 0 ? (
      <a
        class="badge"
        href={href('area', { areaTag: area.areaTag }, { unread: 1 })}
        aria-label={`${area.unreadCount} unread in ${area.name}`}
      >
        {area.unreadCount}
      </a>
    ) : (
      0
    ),
};

const MESSAGES_COLUMN: Column<MessageArea> = { label: 'Messages', class: 'num', cell: (area) => area.messageCount };
const NEWEST_COLUMN: Column<MessageArea> = {
  label: 'Newest',
  class: 'wide-only',
  cell: (area) => formatDate(area.lastMessageAt),
};

/** A conference's message areas: name, messages, newest post and, for a logged-in caller, unread. */
export function AreaTable({ areas, showUnread }: { areas: readonly MessageArea[]; showUnread: boolean }) {
  if (areas.length === 0) return <p class="muted">No area here is open to you.</p>;
  const columns = showUnread
    ? [AREA_COLUMN, MESSAGES_COLUMN, UNREAD_COLUMN, NEWEST_COLUMN]
    : [AREA_COLUMN, MESSAGES_COLUMN, NEWEST_COLUMN];
  return <DataTable rows={areas} columns={columns} rowKey={(area) => area.areaTag} />;
}
