import { useState } from 'preact/hooks';
import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { ThreadMessage } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { body, formatDate, Loading, Pager, useLoad, useTitle } from '../ui.js';

const PAGE_SIZE = 100;

/** The messages still shown: those outside every collapsed message's subtree (the list is depth-first). */
function visibleMessages(messages: readonly ThreadMessage[], collapsed: ReadonlySet<string>): ThreadMessage[] {
  const shown: ThreadMessage[] = [];
  let hiddenBelowDepth: number | null = null;
  for (const message of messages) {
    if (hiddenBelowDepth !== null && message.depth > hiddenBelowDepth) continue;
    hiddenBelowDepth = collapsed.has(message.uuid) ? message.depth : null;
    shown.push(message);
  }
  return shown;
}

function ThreadRow({
  message,
  isCurrent,
  isCollapsed,
  onToggle,
}: {
  message: ThreadMessage;
  isCurrent: boolean;
  isCollapsed: boolean;
  onToggle: () => void;
}) {
  // Indentation stops growing at 12 levels so a deep thread stays readable on a phone.
  const depthClass = `depth-${Math.min(message.depth, 12)}`;
  return (
    <li class={`thread-row ${depthClass}${isCurrent ? ' current' : ''}`}>
      {message.replyCount > 0 ? (
        <button
          type="button"
          class="twisty"
          aria-expanded={!isCollapsed}
          aria-label={`${isCollapsed ? 'Expand' : 'Collapse'} ${message.replyCount} ${message.replyCount === 1 ? 'reply' : 'replies'} to ${message.subject}`}
          onClick={onToggle}
        >
          {isCollapsed ? '▸' : '▾'}
        </button>
      ) : (
        <span class="twisty" aria-hidden="true">
          ·
        </span>
      )}
      <a href={href('message', { uuid: message.uuid })} aria-current={isCurrent ? 'page' : undefined}>
        {message.subject}
      </a>
      <span class="muted">
        {' '}
        {message.fromUserName} · {formatDate(message.timestamp)}
      </span>
    </li>
  );
}

/** A message's whole thread as an indented tree; any message with replies can be folded. */
export function ThreadView({ uuid, query }: { uuid: string; query: URLSearchParams }) {
  const { info, user } = useBoard();
  const cursor = query.get('cursor');
  const listName = `thread:${uuid}`;
  const page = useLoad(async () => {
    const answer = body(
      await client.api.GET(`${API_PREFIX}/messages/{uuid}/thread`, {
        params: { path: { uuid }, query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      }),
    );
    if (answer.meta.nextCursor !== null) rememberStep(listName, cursor, answer.meta.nextCursor);
    return answer;
  }, [uuid, cursor, user?.userId]);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const root = page.data?.data[0];
  useTitle(root ? `Thread: ${root.subject}` : 'Thread', info?.boardName ?? 'baud');
  const next = page.data?.meta.nextCursor ?? null;
  const back = stepBack(listName, cursor);
  const pageHref = (to: string | null) => href('thread', { uuid }, { cursor: to || undefined });
  const toggle = (id: string) =>
    setCollapsed((previous) => {
      const changed = new Set(previous);
      if (!changed.delete(id)) changed.add(id);
      return changed;
    });

  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/">Conferences</a>
        {root && <a href={href('area', { areaTag: root.areaTag })}>{root.areaTag}</a>}
      </nav>
      <h1>{root ? `Thread: ${root.subject}` : 'Thread'}</h1>
      <Loading state={page}>
        {(list) => (
          <ul class="thread" aria-label="Messages of the thread">
            {visibleMessages(list.data, collapsed).map((message) => (
              <ThreadRow
                key={message.uuid}
                message={message}
                isCurrent={message.uuid === uuid}
                isCollapsed={collapsed.has(message.uuid)}
                onToggle={() => toggle(message.uuid)}
              />
            ))}
          </ul>
        )}
      </Loading>
      <Pager label="Thread pages" older={back === null ? null : pageHref(back)} newer={next ? pageHref(next) : null} />
    </section>
  );
}
