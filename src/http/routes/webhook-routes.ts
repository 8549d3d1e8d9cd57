import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { MAX_AREA_GLOB_LENGTH, MAX_AREA_GLOBS } from '../../access/area-glob.js';
import type { Board } from '../../board.js';
import { EVENT_TYPES } from '../../events/event-log.js';
import { TEST_DELIVERIES_PER_WINDOW, TEST_WINDOW_SECONDS } from '../../webhooks/webhook-service.js';
import { apiMountOf } from '../api-prefix.js';
import type { CursorCodec } from '../cursor-codec.js';
import { ListEnvelope, ListQuery, listPageSender } from '../pagination.js';
import { ProblemResponses } from '../schemas.js';

const TAGS = ['webhooks'];
const Timestamp = Type.String({ format: 'date-time' });
const EventTypes = Type.Array(Type.Union(EVENT_TYPES.map((type) => Type.Literal(type))), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  description: 'The event types to deliver.',
});
const AreaGlobs = Type.Array(Type.String({ minLength: 1, maxLength: MAX_AREA_GLOB_LENGTH }), {
  maxItems: MAX_AREA_GLOBS,
  description:
    'Globs on area tags (`pub_*`): `*` and `?` only, anything else but letters, digits, `_`, `.` and `-` is a 400. Empty or left out: every area. Events without an area (logins) pass.',
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http or https; it must resolve to a public address unless the sysop allows private targets.',
});
const Description = Type.String({ maxLength: 256 });

const webhookFields = {
  id: Type.Integer(),
  owner: Type.String({ description: 'The user whose access decides what it hears.' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  areas: Type.Array(Type.String()),
  description: Type.String(),
  createdAt: Timestamp,
  active: Type.Boolean(),
  deactivationReason: Type.Union([Type.String(), Type.Null()], {
    description:
      "Why it stopped: failing for 24 hours, 50 failures in a row, its owner disabled, its owner's password " +
      'reset (a webhook made with a stolen credential would go on delivering), or by hand.',
  }),
  consecutiveFailures: Type.Integer(),
};
const EXAMPLE = {
  id: 7,
  owner: 'alice',
  url: 'https://bridge.example.com/baud',
  events: ['message.created'],
  areas: ['pub_*'],
  description: 'Discord bridge',
  createdAt: '2026-11-24T12:00:00.000Z',
  active: true,
  deactivationReason: null,
  consecutiveFailures: 0,
};
const Webhook = Type.Object(webhookFields, { $id: 'Webhook', examples: [EXAMPLE] });
const CreatedWebhook = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({ description: 'Signs every delivery (X-Baud-Signature). Shown this once: keep it.' }),
  },
  { $id: 'CreatedWebhook', examples: [{ ...EXAMPLE, secret: 'whsec_3q2+7w…' }] },
);
const Delivery = Type.Object(
  {
    eventId: Type.Integer({ description: 'The event delivered (0: a test delivery).' }),
    deliveryId: Type.String({ description: 'X-Baud-Delivery: the same on every attempt of one event.' }),
    attempt: Type.Integer(),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    durationMs: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    attemptedAt: Timestamp,
  },
  {
    $id: 'WebhookDelivery',
    examples: [
      {
        eventId: 1042,
        deliveryId: '5f1c9a7e-21b4-4c3d-9e0f-8a6b2d4c1e3f',
        attempt: 2,
        statusCode: 503,
        durationMs: 118,
        error: 'answered 503',
        attemptedAt: '2026-11-24T12:01:00.000Z',
      },
    ],
  },
);
const TestResult = Type.Object(
  {
    deliveryId: Type.String(),
    success: Type.Boolean(),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    durationMs: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  {
    $id: 'WebhookTestResult',
    examples: [
      {
        deliveryId: '0b6e2f4a-9c1d-4e7b-8a3f-5d2c1b0a9e8d',
        success: true,
        statusCode: 204,
        durationMs: 87,
        error: null,
      },
    ],
  },
);
const CreateBody = Type.Object(
  { url: Url, events: EventTypes, areas: Type.Optional(AreaGlobs), description: Type.Optional(Description) },
  {
    additionalProperties: false,
    examples: [{ url: 'https://bridge.example.com/baud', events: ['message.created'], areas: ['pub_*'] }],
  },
);
const PatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventTypes),
    areas: Type.Optional(AreaGlobs),
    description: Type.Optional(Description),
    active: Type.Optional(Type.Boolean({ description: 'true revives a deactivated webhook; false stops it.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ active: true }] },
);
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

/** Webhooks (docs/api-notes.md "Webhooks"): owners manage their own, sysops all. */
export function registerWebhookRoutes(fastify: FastifyInstance, board: Board, cursors: CursorCodec): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { webhooks } = board;
  const sendWebhookPage = listPageSender();
  const sendDeliveryPage = listPageSender();
  const auth = { access: 'authenticated' as const };

  app.post(
    '/webhooks',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'Create a webhook',
        description:
          'Deliveries start with the next event. The answer holds the signing secret, shown this once. ' +
          'At most `webhooks.maxPerUser` per user (409 beyond). An API key needs `read` as well as `write` ' +
          '(403 otherwise): the webhook delivers what its owner may read.',
        body: CreateBody,
        response: { 201: CreatedWebhook, ...ProblemResponses(401, 403, 409, 415) },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(request.caller, request.body);
      reply.code(201).header('location', `${apiMountOf(request).prefix}/webhooks/${created.id}`);
      return created;
    },
  );

  app.get(
    '/webhooks',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'List your webhooks (sysops: all)',
        querystring: ListQuery,
        response: { 200: ListEnvelope(Webhook), ...ProblemResponses(401, 403) },
      },
    },
    async (request, reply) =>
      sendWebhookPage(request, reply, { list: 'webhooks', cursors }, (page) => webhooks.list(request.caller, page)),
  );

  app.get(
    '/webhooks/:id',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'Get a webhook',
        params: IdParams,
        response: { 200: Webhook, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => webhooks.get(request.caller, request.params.id),
  );

  app.patch(
    '/webhooks/:id',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'Change a webhook, or switch it on and off',
        description: 'An API key needs `read` as well as `write` (403 otherwise), as for creating one.',
        params: IdParams,
        body: PatchBody,
        response: { 200: Webhook, ...ProblemResponses(401, 403, 404, 415) },
      },
    },
    (request) => webhooks.update(request.caller, request.params.id, request.body),
  );

  app.delete(
    '/webhooks/:id',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'Delete a webhook',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await webhooks.remove(request.caller, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'Send a test delivery now',
        description:
          'POSTs a signed `webhook.test` event (`data: { webhookId }`, id 0) to the webhook and answers how it ' +
          'went; the attempt is logged with the deliveries. A failed test is still a 200: `success` says. ' +
          `At most ${TEST_DELIVERIES_PER_WINDOW} tests per webhook in ${TEST_WINDOW_SECONDS} seconds, ` +
          'counted across nodes: 429 with Retry-After beyond.',
        params: IdParams,
        response: { 200: TestResult, ...ProblemResponses(401, 403, 404, 429) },
      },
    },
    (request) => webhooks.test(request.caller, request.params.id),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: auth,
      schema: {
        tags: TAGS,
        summary: 'The delivery log of a webhook, newest first',
        params: IdParams,
        querystring: ListQuery,
        response: { 200: ListEnvelope(Delivery), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) =>
      sendDeliveryPage(request, reply, { list: `webhook-deliveries:${request.params.id}`, cursors }, (page) =>
        webhooks.deliveries(request.caller, request.params.id, page),
      ),
  );
}
