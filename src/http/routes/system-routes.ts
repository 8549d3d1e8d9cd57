import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Board } from '../../board.js';
import { MAX_LAST_CALLERS, MAX_NODES } from '../../system/system-service.js';
import { ListEnvelope, wholeListReply } from '../pagination.js';
import { ProblemResponses, USER_CARD_EXAMPLE } from '../schemas.js';
import { serializedAnswerSender } from '../serialized-answer.js';

const BoardInfo = Type.Object(
  {
    boardName: Type.String(),
    version: Type.String(),
    nodeCount: Type.Integer({ description: 'Active login sessions (used in the last 15 minutes).' }),
    closedSystem: Type.Boolean(),
    registration: Type.Union([Type.Literal('open'), Type.Literal('approval'), Type.Literal('closed')], {
      description:
        'How people join (POST /auth/register): active at once, pending until a sysop approves, or not at all.',
    }),
    sysopName: Type.Optional(Type.String()),
    uptimeSeconds: Type.Integer({ description: 'Seconds since this node started.' }),
  },
  {
    $id: 'BoardInfo',
    examples: [
      {
        boardName: 'Sector 7G BBS',
        version: '0.1.0',
        nodeCount: 3,
        closedSystem: false,
        registration: 'approval',
        sysopName: 'sysop',
        uptimeSeconds: 86_400,
      },
    ],
  },
);

const BoardStats = Type.Object(
  {
    totalUsers: Type.Integer(),
    totalMessages: Type.Integer(),
    totalFiles: Type.Integer(),
    totalFileBytes: Type.Integer(),
    totalCalls: Type.Integer({ description: 'Interactive logins ever.' }),
    callsToday: Type.Integer({ description: 'Interactive logins since 00:00 UTC.' }),
  },
  {
    $id: 'BoardStats',
    examples: [
      {
        totalUsers: 412,
        totalMessages: 48_213,
        totalFiles: 1_207,
        totalFileBytes: 2_684_354_560,
        totalCalls: 9_876,
        callsToday: 57,
      },
    ],
  },
);

const NodeEntry = Type.Object(
  {
    node: Type.Integer({ description: 'Position in this list (1-based).' }),
    authenticated: Type.Boolean(),
    action: Type.String({ description: 'What the session did last, e.g. "Reading messages".' }),
    isSecure: Type.Boolean({ description: 'The session last came over TLS.' }),
    userId: Type.Integer(),
    username: Type.String(),
    location: Type.String(),
    affiliations: Type.String(),
    timeOnMinutes: Type.Integer({ description: 'Minutes since the session logged in.' }),
    connectedAt: Type.String({ format: 'date-time' }),
    lastActivityAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'NodeEntry',
    examples: [
      {
        node: 1,
        authenticated: true,
        action: 'Reading messages',
        isSecure: true,
        ...USER_CARD_EXAMPLE,
        timeOnMinutes: 12,
        connectedAt: '2026-11-24T15:39:00.000Z',
        lastActivityAt: '2026-11-24T15:51:03.763Z',
      },
    ],
  },
);

const LastCallerEntry = Type.Object(
  {
    userId: Type.Integer(),
    username: Type.String(),
    location: Type.String(),
    affiliations: Type.String(),
    timestamp: Type.String({ format: 'date-time' }),
  },
  { $id: 'LastCallerEntry', examples: [{ ...USER_CARD_EXAMPLE, timestamp: '2026-11-24T15:39:00.000Z' }] },
);

const LastCallersQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_LAST_CALLERS, default: MAX_LAST_CALLERS, description: 'At most 50.' }),
  ),
});

const NodesQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_NODES,
      default: MAX_NODES,
      description: 'At most 100: the most recently active sessions.',
    }),
  ),
});

export function registerSystemRoutes(app: FastifyInstance, board: Board): void {
  // The service hands out its last answer again until it changes (see getInfo), outside any cache.
  const sendInfo = serializedAnswerSender(() => true);
  app.get(
    '/system/info',
    {
      config: { access: { publicToggle: 'info' } },
      schema: {
        tags: ['system'],
        summary: 'Board information',
        response: { 200: BoardInfo, ...ProblemResponses(401) },
      },
    },
    async (_request, reply) => sendInfo(reply, await board.system.getInfo()),
  );

  app.get(
    '/system/stats',
    {
      config: { access: { publicToggle: 'stats' } },
      schema: {
        tags: ['system'],
        summary: 'Board statistics',
        response: { 200: BoardStats, ...ProblemResponses(401) },
      },
    },
    () => board.system.getStats(),
  );

  app.get<{ Querystring: Static<typeof NodesQuery> }>(
    '/system/nodes',
    {
      config: { access: { publicToggle: 'nodes' } },
      schema: {
        tags: ['system'],
        summary: 'Active login sessions',
        description:
          'A session is active while it is alive and was used in the last 15 minutes. Lists the `limit` most recently active ones, in login order.',
        querystring: NodesQuery,
        response: { 200: ListEnvelope(NodeEntry), ...ProblemResponses(401) },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? MAX_NODES;
      return wholeListReply(await board.system.listNodes(limit), limit);
    },
  );

  app.get<{ Querystring: Static<typeof LastCallersQuery> }>(
    '/system/last-callers',
    {
      config: { access: { publicToggle: 'last-callers' } },
      schema: {
        tags: ['system'],
        summary: 'Most recent interactive logins, newest first',
        querystring: LastCallersQuery,
        response: { 200: ListEnvelope(LastCallerEntry), ...ProblemResponses(401) },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? MAX_LAST_CALLERS;
      return wholeListReply(await board.system.listLastCallers(limit), limit);
    },
  );
}
