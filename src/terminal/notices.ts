import type { UserCaller } from '../caller.js';
import type { EventHub } from '../events/event-hub.js';
import type { BoardEvent } from '../events/event-log.js';
import type { EventVisibility } from '../events/event-visibility.js';
import { singleLine } from './message-text.js';

/** The one-line notices of one caller (see `startNotices`). */
export interface Notices {
  /** The message area the caller is reading now (null: none): new messages there are told. */
  watchArea(areaTag: string | null): void;
  /** Stops listening. */
  stop(): void;
}

const textOf = (value: unknown) => (typeof value === 'string' ? singleLine(value) : '');

/**
 * Listens to the node's event hub for one caller and tells them, in one line each, of a new
 * message in the area they are reading (not their own) and of mail that reached them. Every
 * event passes `mayCallerSee` first, as for the event streams, so a notice never shows what the
 * caller could not read. A batch of many events (an import) makes one line per kind, not a flood.
 */
export function startNotices(deps: {
  hub: Pick<EventHub, 'subscribe'>;
  mayCallerSee: EventVisibility;
  /** The caller as last resolved (visibility is decided as they are now). */
  caller: () => UserCaller;
  /** The name an area is shown by. */
  areaName: (areaTag: string) => string;
  tell: (text: string) => void;
}): Notices {
  let watchedArea: string | null = null;

  const unsubscribe = deps.hub.subscribe((events) => {
    const caller = deps.caller();
    const messages: BoardEvent[] = [];
    const mails: BoardEvent[] = [];
    for (const event of events) {
      if (event.type === 'message.created') {
        if (event.areaTag !== watchedArea || event.areaTag === null) continue;
        if (textOf(event.data.fromUserName) === caller.user.username) continue;
        if (deps.mayCallerSee(caller, event)) messages.push(event);
      } else if (event.type === 'mail.received' && event.userId === caller.user.id) {
        if (deps.mayCallerSee(caller, event)) mails.push(event);
      }
    }
    const [message] = messages;
    if (message?.areaTag) {
      const area = deps.areaName(message.areaTag);
      deps.tell(
        messages.length === 1
          ? `New message in ${area} from ${textOf(message.data.fromUserName)}: ${textOf(message.data.subject)}`
          : `${messages.length} new messages in ${area}.`,
      );
    }
    const [mail] = mails;
    if (mail) {
      deps.tell(
        mails.length === 1
          ? `New mail from ${textOf(mail.data.from)}: ${textOf(mail.data.subject)}`
          : `${mails.length} new mails.`,
      );
    }
  });

  return {
    watchArea(areaTag) {
      watchedArea = areaTag;
    },
    stop: unsubscribe,
  };
}
