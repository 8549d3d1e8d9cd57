import { useBoard } from '../board-context.js';
import { client } from '../session.js';
import { Loading, useLoad, useTitle } from '../ui.js';
import { AreaTable } from './area-table.js';

export function ConferenceView({ confTag }: { confTag: string }) {
  const { info, user } = useBoard();
  const conference = useLoad(async () => {
    const { data } = await client.api.GET('/_baud/api/v1/messages/conferences/{confTag}', {
      params: { path: { confTag } },
    });
    return data ?? null;
  }, [confTag, user?.userId]);
  useTitle(conference.data?.name ?? confTag, info?.boardName ?? 'baud');
  return (
    <Loading state={conference}>
      {(detail) =>
        detail && (
          <section>
            <nav class="crumbs" aria-label="Breadcrumb">
              <a href="/">Conferences</a>
            </nav>
            <h1>{detail.name}</h1>
            {detail.desc && <p class="muted">{detail.desc}</p>}
            <AreaTable areas={detail.areas} showUnread={user !== null} />
          </section>
        )
      }
    </Loading>
  );
}
