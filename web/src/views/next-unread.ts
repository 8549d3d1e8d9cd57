import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import { href, navigate } from '../router.js';
import { client } from '../session.js';
import { body } from '../ui.js';

/**
 * Walks the new-scan: opens the oldest unread message of the first area (in the board's order)
 * that has one. Reading it moves the pointer (see `markRead`), so the next call finds the next.
 * With nothing left unread it shows the unread page, which says so.
 */
export async function nextUnread(): Promise<void> {
  const areas = body(await client.api.GET(`${API_PREFIX}/messages/unread`));
  for (const area of areas.data) {
    const page = body(
      await client.api.GET(`${API_PREFIX}/messages/areas/{areaTag}/messages`, {
        params: { path: { areaTag: area.areaTag }, query: { unread: 'true', limit: 1 } },
      }),
    );
    const first = page.data[0];
    if (first) {
      navigate(href('message', { uuid: first.uuid }));
      return;
    }
  }
  navigate(href('unread'));
}

/** Moves the caller's pointer in the area up to this message (never back: re-reading is not un-reading). */
export async function markRead(areaTag: string, messageId: number): Promise<void> {
  const area = body(await client.api.GET(`${API_PREFIX}/messages/areas/{areaTag}`, { params: { path: { areaTag } } }));
  if ((area.lastReadMessageId ?? 0) >= messageId) return;
  await client.api.PUT(`${API_PREFIX}/messages/areas/{areaTag}/pointer`, {
    params: { path: { areaTag } },
    body: { lastReadMessageId: messageId },
  });
}
