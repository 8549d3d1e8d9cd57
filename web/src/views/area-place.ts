import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { MessageArea } from '../api-types.js';
import { client } from '../session.js';
import { body, type Loaded, useLoad } from '../ui.js';

/** An area and the name of its conference: what breadcrumbs and headers show (tags are for machines). */
export interface AreaPlace {
  readonly area: MessageArea;
  readonly conferenceName: string;
}

/**
 * Loads an area's detail (with the caller's pointer when logged in) beside the conference
 * list, which names its conference without counting any other area's unread messages.
 * No area (not known yet): no place.
 */
export function useAreaPlace(areaTag: string | null, userId: number | undefined): Loaded<AreaPlace | null> {
  return useLoad(async () => {
    if (areaTag === null) return null;
    const [area, conferences] = await Promise.all([
      client.api.GET(`${API_PREFIX}/messages/areas/{areaTag}`, { params: { path: { areaTag } } }).then(body),
      client.api.GET(`${API_PREFIX}/messages/conferences`).then(body),
    ]);
    const conference = conferences.data.find((candidate) => candidate.confTag === area.confTag);
    return { area, conferenceName: conference?.name ?? area.confTag };
  }, [areaTag, userId]);
}
