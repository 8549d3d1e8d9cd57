import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { LastCaller, MessageArea } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { useLiveEvents } from '../live.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { formatDate, Loading, useLoad, useTitle } from '../ui.js';
import { AreaTable } from './area-table.js';

/** Every conference the caller can see, each with its areas (the areas carry the unread counts). */
async function loadConferences() {
  const { data } = await client.api.GET(`${API_PREFIX}/messages/conferences`);
  const conferences = data?.data ?? [];
  return Promise.all(
    conferences.map(async (conference) => {
      const detail = await client.api.GET(`${API_PREFIX}/messages/conferences/{confTag}`, {
        params: { path: { confTag: conference.confTag } },
      });
      return detail.data ?? { ...conference, areas: [] as MessageArea[] };
    }),
  );
}

/** The last callers, or none when the board does not show them to this caller. */
async function loadLastCallers(): Promise<readonly LastCaller[]> {
  try {
    const { data } = await client.api.GET(`${API_PREFIX}/system/last-callers`, { params: { query: { limit: 10 } } });
    return data?.data ?? [];
  } catch {
    return [];
  }
}

function LastCallers({ callers }: { callers: readonly LastCaller[] }) {
  if (callers.length === 0) return null;
  return (
    <section aria-labelledby="last-callers">
      <h2 id="last-callers">Last callers</h2>
      <ul class="plain-list">
        {callers.map((caller) => (
          <li key={`${caller.userId}-${caller.timestamp}`}>
            <a href={href('user', { username: caller.username })}>{caller.username}</a>
            {caller.location && <span class="muted"> · {caller.location}</span>}
            <span class="muted"> · {formatDate(caller.timestamp)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function HomeView() {
  const { info, user } = useBoard();
  useTitle(null, info?.boardName ?? 'baud');
  const conferences = useLoad(loadConferences, [user?.userId]);
  const callers = useLoad(loadLastCallers, [user?.userId]);
  // New messages change counts and unread numbers: show them as they come.
  useLiveEvents(
    (event) => {
      // `reset`: the stream missed events while away, so the counts may be out of date.
      if (event.type === 'message.created' || event.type === 'message.deleted' || event.type === 'reset') {
        conferences.reload();
      }
    },
    [conferences.reload],
  );
  return (
    <>
      <section aria-labelledby="board">
        <h1 id="board">{info?.boardName ?? 'baud'}</h1>
        {info && (
          <p class="muted">
            {info.sysopName ? `Sysop: ${info.sysopName} · ` : ''}
            {info.nodeCount} {info.nodeCount === 1 ? 'caller' : 'callers'} online
            {info.closedSystem ? ' · closed system' : ''}
          </p>
        )}
        {!user && (
          <p>
            You are reading as a guest. <a href="/login">Log in</a> to post, keep track of what you have read and see
            members' areas.
            {info && info.registration !== 'closed' && (
              <>
                {' '}
                New here? <a href="/register">Sign up</a>.
              </>
            )}
          </p>
        )}
      </section>
      <Loading state={conferences}>
        {(list) =>
          list.length === 0 ? (
            <p>No conference is open to you.</p>
          ) : (
            list.map((conference) => (
              <section key={conference.confTag} aria-labelledby={`conf-${conference.confTag}`}>
                <h2 id={`conf-${conference.confTag}`}>
                  <a href={href('conference', { confTag: conference.confTag })}>{conference.name}</a>
                </h2>
                {conference.desc && <p class="muted">{conference.desc}</p>}
                <AreaTable areas={conference.areas} showUnread={user !== null} />
              </section>
            ))
          )
        }
      </Loading>
      {callers.data && <LastCallers callers={callers.data} />}
    </>
  );
}
