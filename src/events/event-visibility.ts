import type { AreaAccess } from '../access/area-access.js';
import type { BoardAreas } from '../access/board-areas.js';
import { type Caller, isSysop } from '../caller.js';
import type { Config } from '../config/load-config.js';
import type { BoardEvent } from './event-log.js';

/** Whether `caller` may see `event` now (see createEventVisibility). */
export type EventVisibility = (caller: Caller, event: BoardEvent) => boolean;

/**
 * Whether a caller may see an event now — the rules of the endpoints that show the same thing:
 * a message event needs read access to its area (ACS, or the allowlist for anonymous callers;
 * blocked areas such as private mail never), a file event read access to its file area, a
 * login the last-callers list, a registration is for sysops (who approve it), and a pointer is
 * its owner's alone, as a received mail is its recipient's (sysops included: they never see
 * other people's mail).
 */
export function createEventVisibility(deps: {
  config: Config;
  areas: BoardAreas;
  access: AreaAccess;
}): EventVisibility {
  const { areas, access } = deps;
  const lastCallersArePublic = deps.config.contentServers.web.restApi.system.public['last-callers'];
  return function mayCallerSee(caller: Caller, event: BoardEvent): boolean {
    switch (event.type) {
      case 'message.created':
      case 'message.deleted': {
        const area = event.areaTag === null ? undefined : areas.messageAreas.get(event.areaTag);
        return area !== undefined && access.canReadMessageArea(caller, area);
      }
      case 'file.created':
      case 'file.deleted': {
        const area = event.areaTag === null ? undefined : areas.fileAreas.get(event.areaTag);
        return area !== undefined && access.canReadFileArea(caller, area);
      }
      case 'user.login':
        return caller.kind === 'user' || lastCallersArePublic;
      case 'user.registered':
        return isSysop(caller);
      case 'pointer.updated':
      case 'mail.received':
        return caller.kind === 'user' && caller.user.id === event.userId;
    }
  };
}
