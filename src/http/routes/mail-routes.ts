import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import { mailBoxListId, mailSearchListId } from '../../mail/mail-service.js';
import { apiMountOf } from '../api-prefix.js';
import type { CursorCodec } from '../cursor-codec.js';
import { ListEnvelope, ListQuery, listPageSender, StripAnsiQuery, shouldStripAnsi } from '../pagination.js';
import { ProblemResponses, SearchQ } from '../schemas.js';

const summaryFields = {
  uuid: Type.String({ format: 'uuid' }),
  messageId: Type.Integer(),
  from: Type.String({ description: 'The sender’s username.' }),
  to: Type.String({
    description: 'The recipient’s username; for netmail `Name@zone:net/node[.point]` (the sender’s copy).',
  }),
  subject: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  read: Type.Boolean({ description: 'The recipient’s read flag; always true on the sender’s copy.' }),
  replyToUuid: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null when not a reply.' }),
};

const SUMMARY_EXAMPLE = {
  uuid: '0193a1c2-7d4e-7c3b-9f1a-2b3c4d5e6f71',
  messageId: 4712,
  from: 'alice',
  to: 'bob',
  subject: 'Your binkd config',
  timestamp: '2026-11-24T15:51:03.763Z',
  read: false,
  replyToUuid: null,
};

const MailSummary = Type.Object(summaryFields, { $id: 'MailSummary', examples: [SUMMARY_EXAMPLE] });

const MailDetail = Type.Object(
  { ...summaryFields, body: Type.String() },
  {
    $id: 'MailDetail',
    examples: [{ ...SUMMARY_EXAMPLE, body: 'Your node list is out of date: get the new one from the hub.' }],
  },
);

const FoundMail = Type.Object(
  {
    ...summaryFields,
    snippet: Type.String({
      description: 'At most 200 characters of plain text around the first hit, hits wrapped in « and ».',
    }),
  },
  { $id: 'FoundMail', examples: [{ ...SUMMARY_EXAMPLE, snippet: 'Your «node» list is out of date' }] },
);

const SendBody = Type.Object(
  {
    to: Type.String({
      description:
        'The recipient’s username, any case; or `Name@zone:net/node[.point]` (`@network` after it where zones ' +
        'overlap) to send netmail through the board’s FTN network.',
    }),
    subject: Type.String({ description: '1..72 characters (Unicode code points) after trimming.' }),
    body: Type.String({ description: 'Not blank; at most 65,536 bytes of UTF-8.' }),
    replyToUuid: Type.Optional(Type.String({ format: 'uuid', description: 'A mail you hold (either box).' })),
  },
  {
    additionalProperties: false,
    examples: [{ to: 'bob', subject: 'Your binkd config', body: 'Your node list is out of date.' }],
  },
);

const BoxQuery = Type.Object({
  ...ListQuery.properties,
  box: Type.Optional(Type.Union([Type.Literal('inbox'), Type.Literal('sent')], { description: 'Default `inbox`.' })),
  unread: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')], {
      description: 'Only unread mail (the inbox; the sent box has none). Default false.',
    }),
  ),
});

const ReadBody = Type.Object({ read: Type.Boolean() }, { additionalProperties: false, examples: [{ read: true }] });

const BlockedUser = Type.Object(
  { username: Type.String(), blockedAt: Type.String({ format: 'date-time' }) },
  { $id: 'BlockedUser', examples: [{ username: 'troll', blockedAt: '2026-11-24T16:00:00.000Z' }] },
);

const UsernameParams = Type.Object({ username: Type.String({ minLength: 1 }) });
const UuidParams = Type.Object({ uuid: Type.String({ format: 'uuid' }) });
const TAGS = ['mail'];
const NOT_YOURS = 'A mail that is not yours answers exactly as an unknown uuid (404 `mail.not-found`).';

/**
 * Private mail (docs/api-notes.md "Private mail"). Every route needs a credential, and an API
 * key the write scope for the changes (the auth hook's rule for every POST, PATCH and DELETE).
 */
export function registerMailRoutes(fastify: FastifyInstance, board: Board, cursors: CursorCodec): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail } = board;
  const sendBoxPage = listPageSender();
  const sendSearchPage = listPageSender();
  const sendBlockedPage = listPageSender();

  app.post(
    '/mail',
    {
      schema: {
        tags: TAGS,
        summary: 'Send a mail',
        description:
          'Answers 201 with `Location` and the mail as `GET /mail/{uuid}` shows it. An unknown, pending or locked ' +
          'recipient is one answer (404); a recipient who blocked you 403; at most 30 mails per 10 minutes (429 ' +
          'with `Retry-After`, counted on every node). `to: "Name@21:1/100"` sends netmail: the mail stays in your ' +
          'sent box and goes out to the network’s hub; an address that does not read or that no network of the ' +
          'board reaches → 400 `mail.invalid-netmail-address`.',
        querystring: StripAnsiQuery,
        body: SendBody,
        response: { 201: MailDetail, ...ProblemResponses(401, 403, 404, 415, 429) },
      },
    },
    async (request, reply) => {
      const sent = await mail.sendMail(request.caller, request.body, shouldStripAnsi(request.query));
      reply.code(201).header('location', `${apiMountOf(request).prefix}/mail/${sent.uuid}`);
      return sent;
    },
  );

  app.get(
    '/mail',
    {
      schema: {
        tags: TAGS,
        summary: 'List your inbox or sent box',
        description: 'Newest first, keyset-paginated. A cursor belongs to its box and its `unread`.',
        querystring: BoxQuery,
        response: { 200: ListEnvelope(MailSummary), ...ProblemResponses(401) },
      },
    },
    async (request, reply) => {
      const { box = 'inbox', unread } = request.query;
      const unreadOnly = unread === 'true' || unread === '1';
      const paging = { list: mailBoxListId(box, unreadOnly), cursors };
      return sendBoxPage(request, reply, paging, (page, shouldStrip) =>
        mail.listBox(request.caller, box, unreadOnly, page, shouldStrip),
      );
    },
  );

  app.get(
    '/mail/search',
    {
      schema: {
        tags: TAGS,
        summary: 'Search your mail',
        description:
          'The search grammar of `GET /messages/search` over the mail you hold (both boxes), newest first. ' +
          'Nobody else’s mail is ever searched.',
        querystring: Type.Object({ ...ListQuery.properties, q: SearchQ }),
        response: { 200: ListEnvelope(FoundMail), ...ProblemResponses(401, 503) },
      },
    },
    async (request, reply) => {
      const { q } = request.query;
      const paging = { list: mailSearchListId(q), cursors };
      return sendSearchPage(request, reply, paging, (page, shouldStrip) =>
        mail.searchMail(request.caller, q, page, shouldStrip),
      );
    },
  );

  app.get(
    '/mail/:uuid',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a mail',
        description: `Reading does not mark it read (see PATCH). ${NOT_YOURS}`,
        params: UuidParams,
        querystring: StripAnsiQuery,
        response: { 200: MailDetail, ...ProblemResponses(401, 404) },
      },
    },
    (request) => mail.getMail(request.caller, request.params.uuid, shouldStripAnsi(request.query)),
  );

  app.patch(
    '/mail/:uuid',
    {
      schema: {
        tags: TAGS,
        summary: 'Mark a mail read or unread',
        description: `The recipient only: on your own sent copy it is a 404. ${NOT_YOURS}`,
        params: UuidParams,
        querystring: StripAnsiQuery,
        body: ReadBody,
        response: { 200: MailDetail, ...ProblemResponses(401, 403, 404, 415) },
      },
    },
    (request) => mail.setRead(request.caller, request.params.uuid, request.body.read, shouldStripAnsi(request.query)),
  );

  app.delete(
    '/mail/:uuid',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a mail from your boxes',
        description: `The other party keeps their copy. Answers 204 without a body. ${NOT_YOURS}`,
        params: UuidParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await mail.deleteMail(request.caller, request.params.uuid);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users/me/blocked',
    {
      schema: {
        tags: ['users'],
        summary: 'List the users you blocked',
        description: 'Their new mail to you is refused (403); older mail stays. Keyset-paginated.',
        querystring: ListQuery,
        response: { 200: ListEnvelope(BlockedUser), ...ProblemResponses(401) },
      },
    },
    async (request, reply) =>
      sendBlockedPage(request, reply, { list: 'mail-blocked', cursors }, (page) =>
        mail.listBlocked(request.caller, page),
      ),
  );

  app.put(
    '/users/me/blocked/:username',
    {
      schema: {
        tags: ['users'],
        summary: 'Block a user’s mail',
        description: 'Case-insensitive on the username; blocking twice is no change. Answers 204.',
        params: UsernameParams,
        response: { 204: Type.Null({ description: 'Blocked.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await mail.blockUser(request.caller, request.params.username);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/users/me/blocked/:username',
    {
      schema: {
        tags: ['users'],
        summary: 'Unblock a user’s mail',
        description: 'Unblocking a user you did not block is no change. Answers 204.',
        params: UsernameParams,
        response: { 204: Type.Null({ description: 'Unblocked.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await mail.unblockUser(request.caller, request.params.username);
      return reply.code(204).send(null);
    },
  );
}
