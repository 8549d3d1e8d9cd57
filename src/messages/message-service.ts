import type { AreaAccess } from '../access/area-access.js';
import { checkAreaGlobs, compileAreaGlobs } from '../access/area-glob.js';
import type { BoardAreas, MessageAreaDef, MessageConferenceDef } from '../access/board-areas.js';
import { type Caller, isSysop, type UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import { createDerivedMemo } from '../derived-memo.js';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import { mapPage, type Page, type PageRequest } from '../page.js';
import type { SearchBudget } from '../search/search-budget.js';
import { parseQueryParameter, type SearchOrder, type SearchQuery } from '../search/search-query.js';
import { searchSnippet } from '../search/snippet.js';
import { presentText, stripAnsi } from '../text/strip-ansi.js';
import type { UserStore } from '../users/user-store.js';
import { type MessageNetwork, parseStoredNetwork } from './message-network.js';
import type { AreaCounters, MessageDetailRow, MessageSummary, ThreadMessage } from './message-reads.js';
import {
  checkBody,
  checkSubject,
  checkUserName,
  DEFAULT_TO_USER_NAME,
  MAX_MESSAGE_ID,
  type MessageOrder,
} from './message-rules.js';
import type { SearchHit } from './message-search-store.js';
import type { MessageStore } from './message-store.js';
import { threadPlaceOf } from './message-thread.js';
import { messageUuid } from './message-uuid.js';

export interface ConferenceSummary {
  readonly confTag: string;
  readonly name: string;
  readonly desc: string;
  /** Areas of the conference the caller may read. */
  readonly areaCount: number;
}

export interface AreaDetail {
  readonly areaTag: string;
  readonly name: string;
  readonly desc: string;
  readonly confTag: string;
  readonly messageCount: number;
  readonly lastMessageAt: string | null;
  /** New-scan, for an authenticated caller only: the last message read (null: none yet). */
  readonly lastReadMessageId?: number | null;
  /** New-scan, for an authenticated caller only: live messages after `lastReadMessageId`. */
  readonly unreadCount?: number;
}

/** Where a caller stands in one area (new-scan). */
export interface AreaPointer {
  readonly areaTag: string;
  readonly lastReadMessageId: number | null;
  readonly unreadCount: number;
}

export interface UnreadArea extends AreaPointer {
  readonly confTag: string;
}

export interface ConferenceDetail {
  readonly confTag: string;
  readonly name: string;
  readonly desc: string;
  readonly areas: AreaDetail[];
}

export type { MessageSummary, ThreadMessage };

export interface MessageDetail extends MessageSummary {
  readonly body: string;
  readonly network: MessageNetwork;
  readonly replyCount: number;
  readonly threadRootId: number;
}

/** A message a search found: its summary and ≤ 200 characters of its text around the first hit. */
export interface FoundMessageSummary extends MessageSummary {
  readonly snippet: string;
}

/** The filters of `GET /messages/search`. */
export interface MessageSearchRequest {
  readonly q: string;
  readonly confTag?: string | undefined;
  /** A glob on area tags (`pub_*`). */
  readonly areaTag?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  /** RFC 3339 */
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  /** Newest first unless `relevance`. */
  readonly sort?: SearchOrder | undefined;
}

export interface NewPost {
  readonly subject: string;
  readonly message: string;
  readonly toUserName?: string | undefined;
  readonly replyToMessageId?: number | undefined;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The cursor list id of a search: a cursor of one search is refused by any other. */
export function messageSearchListId(search: MessageSearchRequest): string {
  const { q, confTag, areaTag, from, to, since, until, sort = 'newest' } = search;
  return `messages-search:${JSON.stringify([q, confTag, areaTag, from, to, since, until, sort])}`;
}

/** The cursor list id of the thread of message `uuid`: a cursor of another thread's pages is refused. */
export function threadListId(uuid: string): string {
  return `thread:${uuid.toLowerCase()}`;
}

/**
 * The cursor list id of an area's message list in one order: a cursor from another area's list,
 * or from the other order's, is refused. The oldest order keeps v1's id, so its cursors are
 * the very strings v1 made.
 */
export function areaMessageListId(areaTag: string, order: MessageOrder = 'oldest'): string {
  return order === 'oldest' ? `messages:${areaTag}` : `messages-newest:${areaTag}`;
}

/** How an area's messages are listed: in which order, and whether only the caller's unread ones. */
export interface AreaListing {
  /** `oldest` unless given. */
  readonly order?: MessageOrder | undefined;
  /** Only the messages after the caller's new-scan pointer (listing never moves it). */
  readonly unreadOnly?: boolean | undefined;
}

const NO_MESSAGES: AreaCounters = { messageCount: 0, lastMessageAt: null };

/**
 * The message base: conferences and areas (from configuration, filtered by `access`),
 * listing, reading, posting and deleting messages. Every decision about who may see or use
 * an area is `access`'s; this service adds the message rules (decisions.md "Messages").
 *
 * `shouldStrip` is `?stripAnsi`: text fields (descriptions, subjects, bodies) come back
 * ANSI-stripped when it is true and exactly as stored when it is false or left out (the CLI and
 * the demo seed). Messages are always stored as posted.
 */
export interface MessageService {
  /**
   * Conferences in which the caller may read at least one area (for anonymous callers: at
   * least one allowlisted area). A conference whose areas are all hidden is left out, the
   * same rule that makes its detail 401/403.
   */
  listConferences(caller: Caller, shouldStrip?: boolean): ConferenceSummary[];
  /** A conference with the areas the caller may read; unknown → 404, nothing visible → 401 / 403. */
  getConference(caller: Caller, confTag: string, shouldStrip?: boolean): Promise<ConferenceDetail>;
  getArea(caller: Caller, areaTag: string, shouldStrip?: boolean): Promise<AreaDetail>;
  /**
   * One page of an area's live messages, oldest or newest first (keyset on messageId either
   * way); `unreadOnly` keeps to the messages after the caller's new-scan pointer.
   */
  listAreaMessages(
    caller: Caller,
    areaTag: string,
    request: PageRequest,
    shouldStrip?: boolean,
    listing?: AreaListing,
  ): Promise<Page<MessageSummary>>;
  /**
   * Moves the caller's pointer in an area (backwards too), clamped to the id of the area's
   * newest live message. Needs read access; anonymous callers have no pointers (401).
   */
  setPointer(caller: Caller, areaTag: string, lastReadMessageId: number): Promise<AreaPointer>;
  /** Every area the caller may read that has unread messages, in conference then area order. */
  listUnread(caller: Caller): Promise<UnreadArea[]>;
  /**
   * Live messages that match a search, newest first, in the areas the caller may read (ACS, or
   * the allowlist for anonymous callers) and the filters name. A bad query is a 400.
   */
  searchMessages(
    caller: Caller,
    search: MessageSearchRequest,
    request: PageRequest,
    shouldStrip?: boolean,
  ): Promise<Page<FoundMessageSummary>>;
  /** The same search over every configured area whatever its ACS (the operator's CLI); blocked areas stay out. */
  searchAsOperator(search: MessageSearchRequest, request: PageRequest): Promise<Page<FoundMessageSummary>>;
  /** Empties the search index and indexes every live message again, in one transaction. */
  rebuildSearchIndex(onProgress: (indexed: number, total: number) => void): Promise<number>;
  getMessage(caller: Caller, uuid: string, shouldStrip?: boolean): Promise<MessageDetail>;
  /** A page of the whole thread that holds message `uuid`, depth-first; 404 / 401 / 403 as for the message. */
  getThread(caller: Caller, uuid: string, request: PageRequest, shouldStrip?: boolean): Promise<Page<ThreadMessage>>;
  /**
   * Posts a message as the caller. In one transaction: the reply target is checked (a live
   * message in the same area), the poster's autoSignature appended after a blank line, the
   * message inserted, the area's counters and the poster's postCount incremented.
   */
  postMessage(caller: Caller, areaTag: string, post: NewPost, shouldStrip?: boolean): Promise<MessageSummary>;
  /** Deletes a message (owner or sysop); its area's counters follow in the same transaction. */
  deleteMessage(caller: Caller, uuid: string): Promise<void>;
  /** Live messages on the whole board (the board's statistics). */
  countMessages(): Promise<number>;
}

function presentSummary<T extends MessageSummary>(message: T, shouldStrip: boolean): T {
  return { ...message, subject: presentText(message.subject, shouldStrip) };
}

function presentDetail(row: MessageDetailRow, shouldStrip: boolean): MessageDetail {
  const { fromUserId: _internal, network, ...message } = row;
  return {
    ...presentSummary(message, shouldStrip),
    body: presentText(message.body, shouldStrip),
    network: parseStoredNetwork(network),
  };
}

/**
 * Pages and messages as callers see them, made once per remembered read (the store hands out
 * the same page or row while it is fresh), so a busy page is not stripped of ANSI again for
 * every request — and the HTTP layer can keep its serialised answer beside it.
 */
/** A page of search hits as answered: summaries and snippets. */
function presentFoundPage(page: Page<SearchHit>, query: SearchQuery, shouldStrip: boolean): Page<FoundMessageSummary> {
  return mapPage(page, ({ body, ...summary }) => ({
    ...presentSummary(summary, shouldStrip),
    snippet: searchSnippet(stripAnsi(body), query),
  }));
}

const presented = {
  strippedPage: createDerivedMemo((page: Page<MessageSummary>) =>
    mapPage(page, (message) => presentSummary(message, true)),
  ),
  // A remembered search page is only ever handed out for the search it was read for: the query is its own.
  foundPage: createDerivedMemo((page: Page<SearchHit>, query: SearchQuery) => presentFoundPage(page, query, false)),
  strippedFoundPage: createDerivedMemo((page: Page<SearchHit>, query: SearchQuery) =>
    presentFoundPage(page, query, true),
  ),
  detail: createDerivedMemo((row: MessageDetailRow) => presentDetail(row, false)),
  strippedDetail: createDerivedMemo((row: MessageDetailRow) => presentDetail(row, true)),
};

export function createMessageService(deps: {
  store: MessageStore;
  /** Posting reads the poster's autoSignature and counts the post, in the post's transaction. */
  users: UserStore;
  clock: Clock;
  areas: BoardAreas;
  access: AreaAccess;
  /** Posts, deletions and pointer moves are events, recorded in their own transactions. */
  events: EventLog;
  /** How many searches the node runs at once (a remembered search page needs none). */
  searchBudget: SearchBudget;
}): MessageService {
  const { store, users, clock, areas, access, events, searchBudget } = deps;

  /**
   * The caller's pointer and unread count in each area, in the order given. No pointer: every
   * live message is unread (the area's counter); else the area's live counts after it (one
   * statement for all the areas, a few lookups each at any area size: message-live-counts.ts).
   */
  async function pointersIn(
    user: UserCaller['user'],
    areaTags: readonly string[],
    counters: ReadonlyMap<string, AreaCounters>,
  ): Promise<AreaPointer[]> {
    const pointers = await store.pointersWithUnread(user.id, areaTags);
    return areaTags.map((areaTag) => ({
      areaTag,
      ...(pointers.get(areaTag) ?? {
        lastReadMessageId: null,
        unreadCount: (counters.get(areaTag) ?? NO_MESSAGES).messageCount,
      }),
    }));
  }

  async function areaDetails(
    caller: Caller,
    defs: readonly MessageAreaDef[],
    shouldStrip: boolean,
  ): Promise<AreaDetail[]> {
    const areaTags = defs.map((area) => area.areaTag);
    const counters = await store.areaCounters(areaTags);
    const pointers = caller.kind === 'user' ? await pointersIn(caller.user, areaTags, counters) : null;
    return defs.map((area, index) => {
      const { messageCount, lastMessageAt } = counters.get(area.areaTag) ?? NO_MESSAGES;
      const pointer = pointers?.[index];
      return {
        areaTag: area.areaTag,
        name: area.name,
        desc: presentText(area.desc, shouldStrip),
        confTag: area.confTag,
        messageCount,
        lastMessageAt,
        ...(pointer ? { lastReadMessageId: pointer.lastReadMessageId, unreadCount: pointer.unreadCount } : {}),
      };
    });
  }

  function userOf(caller: Caller, what: string): UserCaller {
    if (caller.kind !== 'user')
      throw new UnauthorizedError('auth.required', `Log in to ${what}: anonymous callers have no pointers.`);
    return caller;
  }

  /** A live message whose area the caller may read; 404 / 401 / 403 otherwise. */
  async function readableMessage(caller: Caller, uuid: string): Promise<MessageDetailRow> {
    const key = uuid.toLowerCase();
    if (!UUID_PATTERN.test(key)) {
      throw new BadRequestError('request.invalid-path', 'uuid must be a UUID', [
        { pointer: '/path/uuid', message: 'must be a UUID' },
      ]);
    }
    const row = await store.findLiveMessage(key);
    // A message of a hidden or unconfigured area (private mail) must look exactly like an
    // unknown uuid: naming its area would confirm that the message exists.
    if (!row || !areas.messageAreas.has(row.areaTag))
      throw new NotFoundError('message.not-found', `No message ${uuid}.`);
    access.readableMessageArea(caller, row.areaTag);
    return row;
  }

  /**
   * A search in the areas `searchable` gives per conference, narrowed by the filters. With no
   * area left the database is not asked at all, so nothing about other areas can show.
   */
  async function searchIn(
    searchable: (conference: MessageConferenceDef) => readonly MessageAreaDef[],
    search: MessageSearchRequest,
    request: PageRequest,
    shouldStrip: boolean,
  ): Promise<Page<FoundMessageSummary>> {
    const query = parseQueryParameter(search.q);
    const conferences = search.confTag === undefined ? [...areas.conferences.values()] : [conferenceOf(search.confTag)];
    let areaTags = conferences.flatMap((conference) => searchable(conference).map((area) => area.areaTag));
    if (search.areaTag !== undefined) {
      const matches = compileAreaGlobs(checkAreaGlobs([search.areaTag], '/query/areaTag'));
      areaTags = areaTags.filter(matches);
    }
    if (areaTags.length === 0) return { items: [], nextKey: null };
    const filters = {
      query,
      areaTags,
      from: search.from ?? null,
      to: search.to ?? null,
      since: search.since === undefined ? null : new Date(search.since).toISOString(),
      until: search.until === undefined ? null : new Date(search.until).toISOString(),
    };
    const page = await store.searchMessages({ ...filters, sort: search.sort ?? 'newest' }, request, searchBudget);
    return shouldStrip ? presented.strippedFoundPage(page, query) : presented.foundPage(page, query);
  }

  function conferenceOf(confTag: string): MessageConferenceDef {
    const conference = areas.conferences.get(confTag);
    if (!conference) throw new NotFoundError('message.conference-not-found', `No message conference "${confTag}".`);
    return conference;
  }

  return {
    listConferences(caller, shouldStrip = false) {
      const visible: ConferenceSummary[] = [];
      for (const conference of areas.conferences.values()) {
        const areaCount = access.visibleAreasOf(caller, conference).length;
        if (areaCount === 0) continue;
        const desc = presentText(conference.desc, shouldStrip);
        visible.push({ confTag: conference.confTag, name: conference.name, desc, areaCount });
      }
      return visible;
    },

    async getConference(caller, confTag, shouldStrip = false) {
      const conference = conferenceOf(confTag);
      const visible = access.visibleAreasOf(caller, conference);
      if (visible.length === 0) {
        throw caller.kind === 'anonymous'
          ? new UnauthorizedError('auth.required', `Log in to read message conference "${confTag}".`)
          : new ForbiddenError('access.denied', `You may not read message conference "${confTag}".`);
      }
      return {
        confTag: conference.confTag,
        name: conference.name,
        desc: presentText(conference.desc, shouldStrip),
        areas: await areaDetails(caller, visible, shouldStrip),
      };
    },

    async getArea(caller, areaTag, shouldStrip = false) {
      const area = access.readableMessageArea(caller, areaTag);
      const [detail] = await areaDetails(caller, [area], shouldStrip);
      // areaDetails answers one detail per area it is given.
      return detail as AreaDetail;
    },

    async listAreaMessages(caller, areaTag, request, shouldStrip = false, listing = {}) {
      access.readableMessageArea(caller, areaTag);
      let aboveId = 0;
      if (listing.unreadOnly) {
        const { user } = userOf(caller, 'list unread messages');
        aboveId = (await store.pointersOf(user.id, [areaTag])).get(areaTag) ?? 0;
      }
      const page = await store.listAreaMessages(areaTag, { ...request, order: listing.order ?? 'oldest', aboveId });
      // The store selects summaries in exactly their shape: unstripped, a page is as it was read.
      return shouldStrip ? presented.strippedPage(page) : page;
    },

    async setPointer(caller, areaTag, requested) {
      access.readableMessageArea(caller, areaTag);
      const { user } = userOf(caller, 'keep a new-scan pointer');
      const lastReadMessageId = Math.min(requested, await store.highestMessageId(areaTag));
      // The count is read in the write's transaction: it belongs to the pointer just written.
      const written = await store.transaction(async (queries, trx) => {
        await queries.setPointer(user.id, areaTag, lastReadMessageId, clock.now().toISOString());
        await events.append(trx, {
          type: 'pointer.updated',
          areaTag,
          userId: user.id,
          data: { areaTag, lastReadMessageId },
        });
        return (await queries.pointersWithUnread(user.id, [areaTag])).get(areaTag);
      });
      return { areaTag, lastReadMessageId, unreadCount: written?.unreadCount ?? 0 };
    },

    async listUnread(caller) {
      const { user } = userOf(caller, 'list unread messages');
      const readable = [...areas.conferences.values()].flatMap((conference) =>
        access.visibleAreasOf(caller, conference),
      );
      const areaTags = readable.map((area) => area.areaTag);
      const pointers = await pointersIn(user, areaTags, await store.areaCounters(areaTags));
      return pointers.flatMap((pointer, index) =>
        pointer.unreadCount > 0 ? [{ confTag: readable[index]?.confTag ?? '', ...pointer }] : [],
      );
    },

    async getThread(caller, uuid, request, shouldStrip = false) {
      const { threadRootId } = await readableMessage(caller, uuid);
      const page = await store.threadPage(threadRootId, request);
      return shouldStrip ? mapPage(page, (message) => presentSummary(message, true)) : page;
    },

    searchMessages(caller, search, request, shouldStrip = false) {
      return searchIn((conference) => access.visibleAreasOf(caller, conference), search, request, shouldStrip);
    },

    searchAsOperator(search, request) {
      return searchIn((conference) => conference.areas, search, request, false);
    },

    rebuildSearchIndex: (onProgress) => store.rebuildSearchIndex(onProgress),

    async getMessage(caller, uuid, shouldStrip = false) {
      const row = await readableMessage(caller, uuid);
      return shouldStrip ? presented.strippedDetail(row) : presented.detail(row);
    },

    async postMessage(caller, areaTag, post, shouldStrip = false) {
      access.writableMessageArea(caller, areaTag);
      // writableMessageArea refuses anonymous callers; this narrows the type.
      if (caller.kind !== 'user') throw new UnauthorizedError('auth.required');
      const subject = checkSubject(post.subject, '/body/subject');
      const message = checkBody(post.message, '/body/message');
      const toUserName = checkUserName(post.toUserName, '/body/toUserName', DEFAULT_TO_USER_NAME);
      const replyToMessageId = post.replyToMessageId ?? null;
      const { user } = caller;
      const now = clock.now();
      const timestamp = now.toISOString();
      const uuid = messageUuid(now.getTime());
      return store.transaction(async (queries, trx) => {
        // The area's counter row is locked first, before the message gets its id, so the
        // writers of one area take their ids in the order they commit: a reader who has seen
        // message n (a cursor, a new-scan pointer) can never later find a new message below n.
        await queries.addToAreaCounters(areaTag, 1, timestamp);
        const parent =
          replyToMessageId === null || replyToMessageId > MAX_MESSAGE_ID
            ? undefined
            : await queries.liveMessagePlace(replyToMessageId);
        if (replyToMessageId !== null && parent?.areaTag !== areaTag) {
          throw new BadRequestError(
            'message.invalid-reply-target',
            `replyToMessageId ${replyToMessageId} is not a message in "${areaTag}".`,
            [{ pointer: '/body/replyToMessageId', message: 'is not a message in this area' }],
          );
        }
        const signature = (await users.autoSignatureOf(trx, user.id))?.trim();
        const [messageId] = await queries.reserveMessageIds(1);
        if (messageId === undefined) throw new Error('no message id was reserved');
        await queries.insertMessages([
          {
            id: messageId,
            ...threadPlaceOf(messageId, parent ?? null),
            uuid,
            areaTag,
            replyToMessageId,
            fromUserId: user.id,
            fromUserName: user.username,
            toUserName,
            subject,
            body: signature ? `${message}\n\n${signature}` : message,
            timestamp,
            network: '{}',
          },
        ]);
        await users.incrementPostCount(trx, user.id);
        const summary: MessageSummary = {
          messageId,
          uuid,
          areaTag,
          replyToMessageId,
          toUserName,
          fromUserName: user.username,
          subject,
          timestamp,
        };
        const confTag = areas.messageAreas.get(areaTag)?.confTag ?? '';
        await events.append(trx, { type: 'message.created', areaTag, userId: null, data: { ...summary, confTag } });
        return presentSummary(summary, shouldStrip);
      });
    },

    countMessages: () => store.countMessages(),

    async deleteMessage(caller, uuid) {
      const row = await readableMessage(caller, uuid);
      const isOwner = caller.kind === 'user' && row.fromUserId === caller.user.id;
      if (!isOwner && !isSysop(caller))
        throw new ForbiddenError('message.delete-forbidden', 'Only the author or the sysop may delete a message.');
      await store.transaction(async (queries, trx) => {
        if (!(await queries.markDeleted(row.messageId, clock.now().toISOString()))) {
          throw new NotFoundError('message.not-found', `No message ${uuid}.`);
        }
        await queries.removeFromAreaCounters(row.areaTag, row.timestamp);
        await queries.removeFromLiveCounts(row.areaTag, row.messageId);
        const data = { uuid: row.uuid, messageId: row.messageId, areaTag: row.areaTag };
        await events.append(trx, { type: 'message.deleted', areaTag: row.areaTag, userId: null, data });
      });
    },
  };
}
