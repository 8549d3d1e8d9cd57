import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AUDIT_ACTIONS } from '../../audit/audit-store.js';
import type { Board } from '../../board.js';
import type { CursorCodec } from '../cursor-codec.js';
import { ListEnvelope, ListQuery, listPageSender } from '../pagination.js';
import { ProblemResponses } from '../schemas.js';

const TAGS = ['admin'];
const Timestamp = Type.String({ format: 'date-time' });
const Status = Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('locked')]);

const Account = Type.Object(
  {
    userId: Type.Integer(),
    username: Type.String(),
    status: Status,
    groups: Type.Array(Type.String()),
    email: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
    lastLoginAt: Type.Union([Timestamp, Type.Null()]),
    totpEnabled: Type.Boolean({ description: 'Whether login asks this account for a one-time code.' }),
    note: Type.Union([Type.String(), Type.Null()], { description: 'What the applicant told the sysop.' }),
  },
  {
    $id: 'Account',
    description: '`locked` wins over `pending`: a locked application stays locked out.',
    examples: [
      {
        userId: 42,
        username: 'newcaller',
        status: 'pending',
        groups: [],
        email: 'newcaller@example.org',
        createdAt: '2026-11-24T12:00:00.000Z',
        lastLoginAt: null,
        totpEnabled: false,
        note: 'Dialled in to the old board in 1994.',
      },
    ],
  },
);

const AuditEntry = Type.Object(
  {
    id: Type.Integer(),
    at: Timestamp,
    actor: Type.Union([Type.String(), Type.Null()], {
      description: 'The user who acted; null for the operator at the server console (the baud command).',
    }),
    action: Type.String({ description: `One of ${AUDIT_ACTIONS.join(', ')}.` }),
    target: Type.String({ description: 'The username the change was made to.' }),
    detail: Type.String(),
  },
  {
    $id: 'AuditEntry',
    examples: [
      {
        id: 311,
        at: '2026-11-24T12:05:00.000Z',
        actor: 'sysop',
        action: 'user.approved',
        target: 'newcaller',
        detail: 'approved; joined users',
      },
    ],
  },
);

const AccountsQuery = Type.Object({
  ...ListQuery.properties,
  status: Type.Optional(Status),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Case-insensitive prefix of the name.' })),
});
const UsernameParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 100 }) });
const GroupsBody = Type.Object(
  {
    groups: Type.Array(Type.String({ minLength: 1, maxLength: 32, description: 'A-Z a-z 0-9 _ . -' }), {
      maxItems: 64,
    }),
  },
  { additionalProperties: false, examples: [{ groups: ['users', 'cosysops'] }] },
);

const SYSOPS_ONLY = 'Sysops only (others 403); an API key needs scope `write` for a change.';

/** The sysop's desk (docs/api-notes.md "The sysop's desk"): accounts, applications, locks, groups, the audit log. */
export function registerAdminRoutes(fastify: FastifyInstance, board: Board, cursors: CursorCodec): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { desk } = board;
  const sendAccountPage = listPageSender();
  const sendAuditPage = listPageSender();
  const changed = (summary: string, description: string) => ({
    tags: TAGS,
    summary,
    description: `${description} Every change is in the audit log. ${SYSOPS_ONLY}`,
    params: UsernameParams,
  });

  app.get(
    '/admin/users',
    {
      schema: {
        tags: TAGS,
        summary: 'List accounts',
        description: `By userId; \`status\` and \`q\` narrow the list (a cursor belongs to its filter). ${SYSOPS_ONLY}`,
        querystring: AccountsQuery,
        response: { 200: ListEnvelope(Account), ...ProblemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const { status, q } = request.query;
      const list = `admin-users:${status ?? ''}:${q?.toLowerCase() ?? ''}`;
      return sendAccountPage(request, reply, { list, cursors }, (page) =>
        desk.listAccounts(request.caller, { status, namePrefix: q }, page),
      );
    },
  );

  app.post(
    '/admin/users/:username/approve',
    {
      schema: {
        ...changed(
          'Approve an application',
          'The account becomes active and joins users.defaultGroups. Not pending → 409.',
        ),
        response: { 200: Account, ...ProblemResponses(401, 403, 404, 409) },
      },
    },
    (request) => desk.approve(request.caller, request.params.username),
  );

  app.post(
    '/admin/users/:username/reject',
    {
      schema: {
        ...changed(
          'Reject an application',
          'The application is deleted and its name is free again. Not pending → 409.',
        ),
        response: { 204: Type.Null({ description: 'Rejected.' }), ...ProblemResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await desk.reject(request.caller, request.params.username);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/admin/users/:username/lock',
    {
      schema: {
        ...changed(
          'Lock an account',
          'Every login session ends at once (refresh tokens and the access tokens of those sessions; on other nodes ' +
            'within a second) and the account can no longer log in or use its API keys. Locking yourself → 409; ' +
            'an account already locked is no change.',
        ),
        response: { 200: Account, ...ProblemResponses(401, 403, 404, 409) },
      },
    },
    (request) => desk.lock(request.caller, request.params.username),
  );

  app.post(
    '/admin/users/:username/unlock',
    {
      schema: {
        ...changed('Unlock an account', 'Sessions ended by the lock stay ended. An account not locked is no change.'),
        response: { 200: Account, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => desk.unlock(request.caller, request.params.username),
  );

  app.put(
    '/admin/users/:username/groups',
    {
      schema: {
        ...changed("Set an account's groups", 'The list replaces the groups the account had.'),
        body: GroupsBody,
        response: { 200: Account, ...ProblemResponses(401, 403, 404, 415) },
      },
    },
    (request) => desk.setGroups(request.caller, request.params.username, request.body.groups),
  );

  app.delete(
    '/admin/users/:username/totp',
    {
      schema: {
        ...changed(
          "Turn an account's two-factor login off",
          'For a lost phone: the enrolment and its recovery codes are deleted and the next login asks for the ' +
            'password alone (the user may enrol again). Neither on nor enrolled: no change, still 204.',
        ),
        response: { 204: Type.Null({ description: 'Two-factor login is off.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await desk.resetTotp(request.caller, request.params.username);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/admin/audit',
    {
      schema: {
        tags: TAGS,
        summary: 'The audit log, newest first',
        description: `Every change to an account: registrations and every action of the desk, from the API or the console. ${SYSOPS_ONLY}`,
        querystring: ListQuery,
        response: { 200: ListEnvelope(AuditEntry), ...ProblemResponses(401, 403) },
      },
    },
    async (request, reply) =>
      sendAuditPage(request, reply, { list: 'admin-audit', cursors }, (page) => desk.listAudit(request.caller, page)),
  );
}
