import { performance } from 'node:perf_hooks';
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Caller } from '../caller.js';

/** The one log line of a request, as it is written (reqId comes from the request's logger). */
export interface RequestLogLine {
  readonly method: string;
  /** Path and query, as the client sent them. Headers are never logged. */
  readonly url: string;
  /** Absent when the client went away before the status line was sent. */
  readonly statusCode?: number;
  /** Milliseconds from the request's arrival to the end of the answer, to 0.1 ms. */
  readonly responseTime: number;
  /** The client's address (`trustProxy` decides whether `X-Forwarded-For` is believed). */
  readonly remoteAddress: string;
  /** The authenticated caller; absent for anonymous callers and for requests no route took. */
  readonly userId?: number;
  /** Present (true) when the client went away before the whole answer was sent. */
  readonly aborted?: true;
}

interface LevelAwareLogger {
  isLevelEnabled?(level: string): boolean;
}

function userIdOf(request: FastifyRequest): number | undefined {
  // Null until the auth hook ran: requests the router refused never get a caller.
  const caller = request.caller as Caller | null;
  return caller?.kind === 'user' ? caller.user.id : undefined;
}

function requestLogLine(
  request: FastifyRequest,
  reply: FastifyReply,
  startedAt: number,
  remoteAddress: string,
): RequestLogLine {
  const response = reply.raw;
  const line: { -readonly [K in keyof RequestLogLine]: RequestLogLine[K] } = {
    method: request.method,
    url: request.url,
    responseTime: Math.round((performance.now() - startedAt) * 10) / 10,
    remoteAddress,
  };
  if (response.headersSent) line.statusCode = response.statusCode;
  const userId = userIdOf(request);
  if (userId !== undefined) line.userId = userId;
  // Ended: the whole answer was handed to the connection.
  if (!response.writableEnded) line.aborted = true;
  return line;
}

/**
 * One log line per request instead of Fastify's two ("incoming request" with every header
 * serialised and redacted, then "request completed"): written when the answer is over, from
 * the response's `close`, which comes after a finished answer and after a client that went
 * away alike, for every request Fastify builds — routed, unknown path or refused by the router.
 *
 * Nothing is done per request unless the level lets `info` lines through. Fastify's other
 * internal lines (stream and serializer failures, a failed response as "request errored") are
 * kept; 5xx errors are logged with their stack by the error handler (problem.ts).
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if ((request.log as LevelAwareLogger).isLevelEnabled?.('info') !== true) return;
    const startedAt = performance.now();
    // Read now: once a client has gone away, its socket no longer knows the address.
    const remoteAddress = request.ip;
    reply.raw.once('close', () => {
      const line = requestLogLine(request, reply, startedAt, remoteAddress);
      request.log.info(line, line.aborted ? 'request aborted' : 'request completed');
    });
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error) super.requestCompleted(error, request, reply, metadata);
  }
}
