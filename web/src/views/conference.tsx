import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import { useBoard } from '../board-context.js';
import { client } from '../session.js';
import { body, Loading, useLoad, useTitle } from '../ui.js';
import { AreaTable } from './area-table.js';

/** One conference and its areas (with unread counts for a logged-in caller). */
export function ConferenceView({ confTag }: { confTag: string }) {
  const { info, user } = useBoard();
  const conference = useLoad(
    async () =>
      body(
        await client.api.GET(`${API_PREFIX}/messages/conferences/{confTag}`, {
          params: { path: { confTag } },
        }),
      ),
    [confTag, user?.userId],
  );
  useTitle(conference.data?.name ?? confTag, info?.boardName ?? 'baud');
  return (
    <Loading state={conference}>
      {(detail) => (
        <section>
          <nav class="crumbs" aria-label="Breadcrumb">
            <a href="/">Conferences</a>
          </nav>
          <h1>{detail.name}</h1>
          {detail.desc && <p class="muted">{detail.desc}</p>}
          <AreaTable areas={detail.areas} showUnread={user !== null} />
        </section>
      )}
    </Loading>
  );
}
