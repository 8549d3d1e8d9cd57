import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import { useBoard } from '../board-context.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { body, Loading, useLoad, useTitle } from '../ui.js';
import { nextUnread } from './next-unread.js';

/** Every area with something the caller has not read, and the key that walks through it all. */
export function UnreadView() {
  const { info, user } = useBoard();
  useTitle('Unread', info?.boardName ?? 'baud');
  const unread = useLoad(async () => body(await client.api.GET(`${API_PREFIX}/messages/unread`)), [user?.userId]);
  if (user === null) {
    return (
      <section>
        <h1>Unread messages</h1>
        <p>
          <a href={href('login', {}, { returnTo: '/unread' })}>Log in</a> to keep track of what you have read.
        </p>
      </section>
    );
  }
  return (
    <section>
      <h1>Unread messages</h1>
      <Loading state={unread}>
        {(list) =>
          list.data.length === 0 ? (
            <p>You have read everything.</p>
          ) : (
            <>
              <p>
                <button type="button" class="button" onClick={() => void nextUnread()} aria-keyshortcuts="n">
                  Read the next unread message
                </button>{' '}
                <span class="muted">(or press n anywhere)</span>
              </p>
              <ul class="plain-list">
                {list.data.map((area) => (
                  <li key={area.areaTag}>
                    <a href={href('area', { areaTag: area.areaTag }, { unread: 1 })}>{area.areaTag}</a>{' '}
                    <span class="badge">{area.unreadCount}</span> <span class="muted">in {area.confTag}</span>
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </Loading>
    </section>
  );
}
