import type { FastifyReply } from 'fastify';
import { createDerivedMemo } from '../derived-memo.js';
import { etagOf } from './caching.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON answer as it goes out: the body the route's response schema serialises, and its ETag. */
export interface SerializedAnswer {
  readonly body: string;
  readonly etag: string;
}

/** Serialises `value` with the route's response schema (as Fastify would) and tags it. */
export function serializeAnswer(reply: FastifyReply, value: unknown): SerializedAnswer {
  const body = reply.serialize(value);
  // A route's response schema compiles to a JSON serializer, which always makes a string.
  if (typeof body !== 'string') throw new TypeError('a JSON answer did not serialise to a string');
  return { body, etag: etagOf(body) };
}

/**
 * Hands `answer` to Fastify as already serialised JSON: a string body with a JSON content type
 * skips Fastify's serializer, and the preset ETag spares the caching hook a hash of the body.
 */
export function sendSerialized<Reply extends FastifyReply>(reply: Reply, answer: SerializedAnswer): Reply {
  reply.header('content-type', JSON_CONTENT_TYPE).header('etag', answer.etag).send(answer.body);
  return reply;
}

/**
 * A sender for one route's answers that serialises and tags each answer object once. Services
 * hand out the same object for a remembered read (see `createDerivedMemo`), so a busy message
 * is serialised and hashed once per second per node instead of once per request. One sender
 * per route: an object is always serialised with the response schema of the route that sent it.
 * `isHandedOutAgain` says which answer objects are (by default those a cache holds).
 */
export function serializedAnswerSender(isHandedOutAgain?: (value: object) => boolean) {
  const answerOf = createDerivedMemo(
    (value: object, reply: FastifyReply) => serializeAnswer(reply, value),
    isHandedOutAgain,
  );
  return <Reply extends FastifyReply>(reply: Reply, value: object): Reply =>
    sendSerialized(reply, answerOf(value, reply));
}
