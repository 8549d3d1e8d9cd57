import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import { ProblemResponses } from '../schemas.js';

const BoardInfo = Type.Object(
  {
    boardName: Type.String(),
    version: Type.String(),
    nodeCount: Type.Integer({ description: 'Active login sessions (used in the last 15 minutes).' }),
    closedSystem: Type.Boolean(),
    sysopName: Type.Optional(Type.String()),
    uptimeSeconds: Type.Integer({ description: 'Seconds since this node started.' }),
  },
  { $id: 'BoardInfo' },
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
  { $id: 'BoardStats' },
);

export function registerSystemRoutes(app: FastifyInstance, board: Board): void {
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
    () => board.system.getInfo(),
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
}
