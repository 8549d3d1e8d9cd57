import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import { EVENT_TYPES } from '../../events/event-log.js';
import { type StreamSink, sseFrame } from '../../events/event-stream.js';
import type { EventStreamService } from '../../events/event-stream-service.js';
import { ProblemResponses, USER_CARD_EXAMPLE } from '../schemas.js';

/** A stream that ended waits this long for its client to take what is left, then the connection goes. */
const END_GRACE_MS = 10_000;

const EventsQuery = Type.Object({
  types: Type.Optional(
    Type.String({
      maxLength: 1024,
      description: `Comma-separated event types (default: all): ${EVENT_TYPES.join(', ')}.`,
      examples: ['message.created,file.created'],
    }),
  ),
  areas: Type.Optional(
    Type.String({
      maxLength: 4096,
      description:
        'Comma-separated globs on area tags, at most 32 (default: all areas): `*` and `?` only, anything else but ' +
        'letters, digits, `_`, `.` and `-` is a 400. Events without an area (logins) pass.',
      examples: ['pub_*,local_*'],
    }),
  ),
});

const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ maxLength: 20, description: 'Resume after this event id: what was missed is replayed first.' }),
  ),
});

/** `GET /events`: the live event stream (docs/api-notes.md "Live events"). */
export function registerEventRoutes(fastify: FastifyInstance, board: Board, eventStreams: EventStreamService): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/events',
    {
      config: { access: 'public' },
      schema: {
        tags: ['events'],
        summary: 'Follow the board live (Server-Sent Events)',
        description:
          'A `text/event-stream` of the events you may see, judged when each is delivered: `id:` (strictly ' +
          'increasing, the same on every node), `event:` (the type) and `data:` (one JSON object). Send ' +
          '`Last-Event-ID` to replay what you missed; an id older than the kept log gets `event: reset` first. ' +
          'A comment every 15 s keeps the stream open; `event: auth.expired` ends it when your credential ends. ' +
          'Anonymous callers see the public areas only.',
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: {
            description: 'The stream, open until you or the node close it.',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  examples: [
                    sseFrame('user.login', { ...USER_CARD_EXAMPLE, timestamp: '2026-11-24T15:39:00.000Z' }, 4812),
                  ],
                }),
              },
            },
          },
          ...ProblemResponses(401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const { caller, credential } = request;
      const body = new PassThrough();
      const stream = await eventStreams.open(
        {
          caller,
          recheckCaller: credential && (() => board.callers.resolve(credential, { isSecure: caller.isSecure })),
          clientAddress: request.ip,
          types: request.query.types,
          areas: request.query.areas,
          lastEventId: request.headers['last-event-id'],
        },
        responseSink(body, reply.raw),
      );
      request.raw.on('close', stream.close);
      body.on('close', stream.close);
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .send(body as never);
    },
  );
}

/**
 * A stream's way to its client: `body`, which Fastify pipes into `response`. What waits for the
 * client is in both, the socket's buffer included.
 */
function responseSink(body: PassThrough, response: ServerResponse): StreamSink {
  const isGone = () => body.writableEnded || body.destroyed;
  const unsentBytes = () => body.writableLength + body.readableLength + response.writableLength;
  let writtenBytes = 0;
  return {
    write(chunk) {
      // Nothing more goes to a stream that ended: a write after the end would be an error.
      if (isGone()) return true;
      writtenBytes += Buffer.byteLength(chunk);
      return body.write(chunk);
    },
    unsentBytes,
    takenBytes: () => writtenBytes - unsentBytes(),
    drained: () =>
      new Promise((resolve) => {
        if (isGone() || !body.writableNeedDrain) return resolve();
        const done = () => {
          body.off('drain', done);
          body.off('close', done);
          resolve();
        };
        body.on('drain', done);
        body.on('close', done);
      }),
    end() {
      body.end();
      // A client that reads nothing would otherwise keep the connection and what waits for it.
      const grace = setTimeout(() => response.destroy(), END_GRACE_MS);
      grace.unref();
      response.once('close', () => clearTimeout(grace));
    },
    destroy: () => response.destroy(),
  };
}
