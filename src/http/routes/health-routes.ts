import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';

/** Health probes for load balancers and orchestrators: outside the versioned API, no credentials. */
export const HEALTH_PREFIX = '/_baud/health';

/** Whether this node is on its way out: readiness turns 503 first, so a balancer drains it. */
export interface NodeLifecycle {
  isDraining: boolean;
}

const CheckOutcome = Type.String({ description: '"ok", or what is wrong.' });

const LiveBody = Type.Object({ status: Type.Literal('live') });
const ReadyBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready'), Type.Literal('draining')]),
  checks: Type.Object({ database: CheckOutcome, migrations: CheckOutcome, storage: CheckOutcome }),
});

/**
 * `live`: the process answers (200 while it runs). `ready`: it can serve — the database answers,
 * every migration is applied, every storage directory takes files — and it is not draining;
 * 503 otherwise, with the check that failed in the body. Never cached; no log noise beyond the
 * one request line.
 */
export function registerHealthRoutes(fastify: FastifyInstance, board: Board, lifecycle: NodeLifecycle): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const probe = { config: { access: 'public' as const } };

  app.get(
    `${HEALTH_PREFIX}/live`,
    { ...probe, schema: { hide: true, response: { 200: LiveBody } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'live' as const };
    },
  );

  app.get(
    `${HEALTH_PREFIX}/ready`,
    { ...probe, schema: { hide: true, response: { 200: ReadyBody, 503: ReadyBody } } },
    async (request, reply) => {
      const { isReady, checks, errors } = await board.health.checkReadiness();
      for (const { check, error } of errors) request.log.warn({ err: error, check }, 'readiness check failed');
      reply.header('cache-control', 'no-store');
      if (lifecycle.isDraining) return reply.code(503).send({ status: 'draining', checks });
      if (!isReady) return reply.code(503).send({ status: 'not ready', checks });
      return { status: 'ready' as const, checks };
    },
  );
}
