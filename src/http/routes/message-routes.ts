import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import { areaMessageListId, messageSearchListId, threadListId } from '../../messages/message-service.js';
import { apiMountOf } from '../api-prefix.js';
import type { CursorCodec } from '../cursor-codec.js';
import {
  ListEnvelope,
  ListQuery,
  listPageSender,
  StripAnsiQuery,
  shouldStripAnsi,
  wholeListReply,
} from '../pagination.js';
import { ProblemResponses, SearchAreaGlob, SearchQ, SearchSort } from '../schemas.js';
import { serializedAnswerSender } from '../serialized-answer.js';

const Timestamp = Type.String({ format: 'date-time' });

/** What the examples of the conference answers show (the areas are added per answer). */
const CONFERENCE_EXAMPLE = { confTag: 'main', name: 'Main', desc: 'Talk about anything on Sector 7G BBS' };

const ConferenceSummary = Type.Object(
  {
    confTag: Type.String(),
    name: Type.String(),
    desc: Type.String(),
    areaCount: Type.Integer({ description: 'Areas of the conference visible to the caller.' }),
  },
  { $id: 'MessageConferenceSummary', examples: [{ ...CONFERENCE_EXAMPLE, areaCount: 1 }] },
);

/** The example area, as an authenticated caller sees it (with the new-scan fields). */
const AREA_EXAMPLE = {
  areaTag: 'general',
  name: 'General',
  desc: 'Anything goes',
  confTag: 'main',
  messageCount: 4_714,
  lastMessageAt: '2026-11-24T18:02:41.000Z',
  lastReadMessageId: 4711,
  unreadCount: 3,
};

const MessageArea = Type.Object(
  {
    areaTag: Type.String(),
    name: Type.String(),
    desc: Type.String(),
    confTag: Type.String(),
    messageCount: Type.Integer(),
    lastMessageAt: Type.Union([Timestamp, Type.Null()]),
    lastReadMessageId: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: 'New-scan, authenticated callers only: the last message read here (null: none yet).',
      }),
    ),
    unreadCount: Type.Optional(
      Type.Integer({ description: 'New-scan, authenticated callers only: live messages after lastReadMessageId.' }),
    ),
  },
  { $id: 'MessageArea', examples: [AREA_EXAMPLE] },
);

const pointerFields = {
  areaTag: Type.String(),
  lastReadMessageId: Type.Union([Type.Integer(), Type.Null()], { description: 'null: nothing read yet.' }),
  unreadCount: Type.Integer({ description: 'Live messages after lastReadMessageId, exact.' }),
};

const AreaPointer = Type.Object(pointerFields, {
  $id: 'MessageAreaPointer',
  examples: [{ areaTag: 'general', lastReadMessageId: 4711, unreadCount: 3 }],
});

const UnreadArea = Type.Object(
  { confTag: Type.String(), ...pointerFields },
  {
    $id: 'UnreadMessageArea',
    examples: [{ confTag: 'main', areaTag: 'general', lastReadMessageId: 4711, unreadCount: 3 }],
  },
);

const PointerBody = Type.Object(
  {
    lastReadMessageId: Type.Integer({
      minimum: 0,
      description: 'The last message read; may move backwards; above the area’s highest id it is clamped to it.',
    }),
  },
  { examples: [{ lastReadMessageId: 4711 }] },
);

const SearchQueryParams = Type.Object({
  ...ListQuery.properties,
  q: SearchQ,
  confTag: Type.Optional(Type.String({ description: 'Only this conference.' })),
  areaTag: SearchAreaGlob,
  from: Type.Optional(Type.String({ maxLength: 256, description: 'Author, exact, case-insensitive.' })),
  to: Type.Optional(Type.String({ maxLength: 256, description: 'Addressee, exact, case-insensitive.' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Posted at or after (RFC 3339).' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Posted at or before (RFC 3339).' })),
  sort: SearchSort,
});

const AreaMessagesQuery = Type.Object({
  ...ListQuery.properties,
  unread: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')], {
      description: 'Only the messages after your new-scan pointer (authenticated callers; default false).',
    }),
  ),
  order: Type.Optional(
    Type.Union([Type.Literal('oldest'), Type.Literal('newest')], {
      description:
        '`oldest` (the default): oldest first. `newest`: newest first, each next page further back in time. ' +
        'A cursor belongs to its order: a cursor of one order given with the other is a 400.',
    }),
  ),
});

const ConferenceDetail = Type.Object(
  {
    confTag: Type.String(),
    name: Type.String(),
    desc: Type.String(),
    areas: Type.Array(MessageArea, { description: 'Areas of the conference visible to the caller.' }),
  },
  { $id: 'MessageConference', examples: [{ ...CONFERENCE_EXAMPLE, areas: [AREA_EXAMPLE] }] },
);

const summaryFields = {
  messageId: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  areaTag: Type.String(),
  replyToMessageId: Type.Union([Type.Integer(), Type.Null()], { description: 'null when not a reply.' }),
  toUserName: Type.String(),
  fromUserName: Type.String(),
  subject: Type.String(),
  timestamp: Timestamp,
};

/** What the examples of the message answers show. */
const SUMMARY_EXAMPLE = {
  messageId: 4711,
  uuid: '0193a1c2-7d4e-7c3b-9f1a-2b3c4d5e6f70',
  areaTag: 'general',
  replyToMessageId: null,
  toUserName: 'All',
  fromUserName: 'alice',
  subject: 'Modems',
  timestamp: '2026-11-24T15:51:03.763Z',
};

const FoundMessageSchema = Type.Object(
  {
    ...summaryFields,
    snippet: Type.String({
      description: 'At most 200 characters of plain text around the first hit, hits wrapped in « and ».',
    }),
  },
  {
    $id: 'FoundMessage',
    examples: [{ ...SUMMARY_EXAMPLE, snippet: 'My «high» «speed» «modem» is a Courier.' }],
  },
);

const MessageSummarySchema = Type.Object(summaryFields, { $id: 'MessageSummary', examples: [SUMMARY_EXAMPLE] });

const Network = Type.Object(
  {
    ftnOrigNode: Type.Optional(Type.String()),
    ftnArea: Type.Optional(Type.String()),
    ftnTearLine: Type.Optional(Type.String()),
    ftnMsgId: Type.Optional(Type.String()),
    ftnReplyId: Type.Optional(Type.String()),
    ftnOrigin: Type.Optional(Type.String()),
    ftnSeenBy: Type.Optional(Type.Array(Type.String())),
    ftnPath: Type.Optional(Type.Array(Type.String())),
  },
  { description: 'FTN metadata; {} for a local message.' },
);

const MessageDetailSchema = Type.Object(
  {
    ...summaryFields,
    body: Type.String(),
    network: Network,
    replyCount: Type.Integer({ description: 'Live replies to this message.' }),
    threadRootId: Type.Integer({ description: 'The first message of its thread (its own messageId for a root).' }),
  },
  {
    $id: 'MessageDetail',
    examples: [
      {
        ...SUMMARY_EXAMPLE,
        body: 'My high speed modem is a Courier.\n\n-- alice',
        network: {},
        replyCount: 2,
        threadRootId: 4711,
      },
    ],
  },
);

const ThreadMessageSchema = Type.Object(
  {
    ...summaryFields,
    depth: Type.Integer({ minimum: 0, description: '0 for the thread’s root, 1 for a reply to it, …' }),
    replyCount: Type.Integer({ description: 'Live replies to this message.' }),
  },
  {
    $id: 'ThreadMessage',
    examples: [{ ...SUMMARY_EXAMPLE, depth: 0, replyCount: 2 }],
  },
);

const PostBody = Type.Object(
  {
    subject: Type.String({ description: '1..72 characters (Unicode code points) after trimming.' }),
    message: Type.String({ description: 'Not blank; at most 65,536 bytes of UTF-8.' }),
    toUserName: Type.Optional(Type.String({ description: 'At most 36 characters; default "All".' })),
    replyToMessageId: Type.Optional(Type.Integer({ minimum: 1, description: 'A live message in the same area.' })),
  },
  {
    examples: [{ subject: 'Re: Modems', message: 'Mine is a Courier too.', toUserName: 'bob', replyToMessageId: 4711 }],
  },
);

const ConfTagParams = Type.Object({ confTag: Type.String() });
const AreaTagParams = Type.Object({ areaTag: Type.String() });
const UuidParams = Type.Object({ uuid: Type.String({ format: 'uuid' }) });

const TAGS = ['messages'];
const READ = { access: 'public' } as const;

/**
 * Message conferences, areas and messages. Every route is public at the HTTP layer except
 * DELETE: the message service (through `board.access`) answers 404 / 401 / 403 per area, so an
 * unknown or blocked area is 404 whoever asks.
 */
export function registerMessageRoutes(fastify: FastifyInstance, board: Board, cursors: CursorCodec): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { messages } = board;
  const sendAreaPage = listPageSender();
  const sendThreadPage = listPageSender();
  const sendSearchPage = listPageSender();
  const sendMessage = serializedAnswerSender();

  app.get(
    '/messages/conferences',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'List message conferences',
        description: 'Conferences with at least one area the caller may read (anonymous: allowlisted areas).',
        querystring: StripAnsiQuery,
        response: { 200: ListEnvelope(ConferenceSummary), ...ProblemResponses() },
      },
    },
    (request) => wholeListReply(messages.listConferences(request.caller, shouldStripAnsi(request.query))),
  );

  app.get(
    '/messages/conferences/:confTag',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'Get a message conference',
        params: ConfTagParams,
        querystring: StripAnsiQuery,
        response: { 200: ConferenceDetail, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => messages.getConference(request.caller, request.params.confTag, shouldStripAnsi(request.query)),
  );

  app.get(
    '/messages/areas/:areaTag',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'Get a message area',
        params: AreaTagParams,
        querystring: StripAnsiQuery,
        response: { 200: MessageArea, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => messages.getArea(request.caller, request.params.areaTag, shouldStripAnsi(request.query)),
  );

  app.get(
    '/messages/areas/:areaTag/messages',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: "List an area's messages",
        description:
          'Oldest first (or newest first with `order=newest`), keyset-paginated: follow `meta.nextCursor` (or the ' +
          '`Link: rel="next"` header).',
        params: AreaTagParams,
        querystring: AreaMessagesQuery,
        response: { 200: ListEnvelope(MessageSummarySchema), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { areaTag } = request.params;
      const { order = 'oldest', unread } = request.query;
      const listing = { order, unreadOnly: unread === 'true' || unread === '1' };
      const paging = { list: areaMessageListId(areaTag, order), cursors };
      return sendAreaPage(request, reply, paging, (page, shouldStrip) =>
        messages.listAreaMessages(request.caller, areaTag, page, shouldStrip, listing),
      );
    },
  );

  app.get(
    '/messages/search',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'Search messages',
        description:
          'Full-text search of the live messages of every area you may read (anonymous callers: the public ' +
          'areas), newest or most relevant first, keyset-paginated. A hidden area is never searched: it shows in no answer, count ' +
          'or snippet.',
        querystring: SearchQueryParams,
        response: { 200: ListEnvelope(FoundMessageSchema), ...ProblemResponses(404, 503) },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const paging = { list: messageSearchListId(query), cursors };
      return sendSearchPage(request, reply, paging, (page, shouldStrip) =>
        messages.searchMessages(request.caller, query, page, shouldStrip),
      );
    },
  );

  app.put(
    '/messages/areas/:areaTag/pointer',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: TAGS,
        summary: 'Set your new-scan pointer in an area',
        description:
          'Marks every message up to `lastReadMessageId` as read (the client moves the pointer; reading does not). ' +
          'Needs read access to the area, and the write scope for API keys.',
        params: AreaTagParams,
        body: PointerBody,
        response: { 200: AreaPointer, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => messages.setPointer(request.caller, request.params.areaTag, request.body.lastReadMessageId),
  );

  app.get(
    '/messages/unread',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: TAGS,
        summary: 'List areas with unread messages',
        description: 'Every area you may read with `unreadCount > 0`, in conference then area order.',
        response: { 200: ListEnvelope(UnreadArea), ...ProblemResponses(401) },
      },
    },
    async (request) => wholeListReply(await messages.listUnread(request.caller)),
  );

  app.post(
    '/messages/areas/:areaTag/messages',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'Post a message',
        description: 'Needs write ACS on the area (and the write scope for API keys). Answers 201 with `Location`.',
        params: AreaTagParams,
        querystring: StripAnsiQuery,
        body: PostBody,
        response: { 201: MessageSummarySchema, ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { caller, params, body, query } = request;
      const summary = await messages.postMessage(caller, params.areaTag, body, shouldStripAnsi(query));
      reply.code(201).header('location', `${apiMountOf(request).prefix}/messages/${summary.uuid}`);
      return summary;
    },
  );

  app.get(
    '/messages/:uuid',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'Get a message',
        params: UuidParams,
        querystring: StripAnsiQuery,
        response: { 200: MessageDetailSchema, ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) =>
      sendMessage(
        reply,
        await messages.getMessage(request.caller, request.params.uuid, shouldStripAnsi(request.query)),
      ),
  );

  app.get(
    '/messages/:uuid/thread',
    {
      config: READ,
      schema: {
        tags: TAGS,
        summary: 'List the thread of a message',
        description:
          'Every live message of the thread that holds this message, depth-first: the root first, replies oldest ' +
          'first, each with its `depth`. Keyset-paginated like every list. Answers like the message itself when ' +
          'its area is hidden from you.',
        params: UuidParams,
        querystring: ListQuery,
        response: { 200: ListEnvelope(ThreadMessageSchema), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params;
      const paging = { list: threadListId(uuid), cursors };
      return sendThreadPage(request, reply, paging, (page, shouldStrip) =>
        messages.getThread(request.caller, uuid, page, shouldStrip),
      );
    },
  );

  app.delete(
    '/messages/:uuid',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: TAGS,
        summary: 'Delete a message',
        description: 'The author or the sysop may delete a message. Answers 204 without a body.',
        params: UuidParams,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...ProblemResponses(401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      await messages.deleteMessage(request.caller, request.params.uuid);
      return reply.code(204).send(null);
    },
  );
}
