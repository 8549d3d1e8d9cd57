import { useEffect } from 'preact/hooks';
import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { MessageDetail } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { href, navigate } from '../router.js';
import { client, mayDelete } from '../session.js';
import { AnsiText } from '../text/AnsiText.js';
import { TextModeToggle, useTextMode } from '../text/text-mode.js';
import { body, ConfirmedDelete, formatDate, Loading, useLoad, useTitle } from '../ui.js';
import { type AreaPlace, useAreaPlace } from './area-place.js';
import { markRead, nextUnread } from './next-unread.js';

function DeleteButton({ message }: { message: MessageDetail }) {
  return (
    <ConfirmedDelete
      question="Delete this message for everyone?"
      remove={async () => {
        await client.api.DELETE(`${API_PREFIX}/messages/{uuid}`, { params: { path: { uuid: message.uuid } } });
        navigate(href('area', { areaTag: message.areaTag }), { replace: true });
      }}
    />
  );
}

function MessageHeader({ message, place }: { message: MessageDetail; place: AreaPlace | null }) {
  return (
    <dl class="message-header">
      <dt>From</dt>
      <dd>
        <a href={href('user', { username: message.fromUserName })}>{message.fromUserName}</a>
      </dd>
      <dt>To</dt>
      <dd>{message.toUserName}</dd>
      <dt>Date</dt>
      <dd>
        <time dateTime={message.timestamp}>{formatDate(message.timestamp)}</time>
      </dd>
      <dt>Area</dt>
      <dd>
        <a href={href('area', { areaTag: message.areaTag })}>{place?.area.name ?? message.areaTag}</a>
        {place && (
          <>
            {' in '}
            <a href={href('conference', { confTag: place.area.confTag })}>{place.conferenceName}</a>
          </>
        )}
      </dd>
      {message.network.ftnOrigin && (
        <>
          <dt>Origin</dt>
          <dd>{message.network.ftnOrigin}</dd>
        </>
      )}
    </dl>
  );
}

/** One message, with its text as drawn (ANSI colours) or plain, and what the caller may do with it. */
export function MessageView({ uuid }: { uuid: string }) {
  const { info, user } = useBoard();
  const [mode, setMode] = useTextMode();
  const message = useLoad(
    async () =>
      body(
        await client.api.GET(`${API_PREFIX}/messages/{uuid}`, {
          params: { path: { uuid }, query: { stripAnsi: 'false' } },
        }),
      ),
    [uuid, user?.userId],
  );
  useTitle(message.data?.subject ?? null, info?.boardName ?? 'baud');
  const read = message.data;
  const place = useAreaPlace(read?.areaTag ?? null, user?.userId).data;
  useEffect(() => {
    if (user !== null && read !== null) void markRead(read.areaTag, read.messageId).catch(() => {});
  }, [user, read]);

  return (
    <Loading state={message}>
      {(detail) => (
        <article class="message">
          <nav class="crumbs" aria-label="Breadcrumb">
            <a href="/">Conferences</a>
            {place && <a href={href('conference', { confTag: place.area.confTag })}>{place.conferenceName}</a>}
            <a href={href('area', { areaTag: detail.areaTag })}>{place?.area.name ?? detail.areaTag}</a>
          </nav>
          <h1>{detail.subject}</h1>
          <MessageHeader message={detail} place={place} />
          <div class="toolbar">
            <TextModeToggle mode={mode} onChange={setMode} />
            {(detail.replyCount > 0 || detail.replyToMessageId !== null) && (
              <a href={href('thread', { uuid: detail.uuid })}>
                Thread ({detail.replyCount} {detail.replyCount === 1 ? 'reply' : 'replies'})
              </a>
            )}
          </div>
          <AnsiText text={detail.body} mode={mode} />
          <div class="actions">
            {user && (
              <a class="button" href={href('reply', { uuid: detail.uuid })}>
                Reply
              </a>
            )}
            {user && (
              <button type="button" class="button" onClick={() => void nextUnread()} aria-keyshortcuts="n">
                Next unread
              </button>
            )}
            {mayDelete(user, detail.fromUserName) && <DeleteButton message={detail} />}
          </div>
        </article>
      )}
    </Loading>
  );
}
