import type { FastifyReply, FastifyRequest } from 'fastify';

/** What a request hook does: returns at once, or a promise when it has something to wait for. */
export type RequestHookWork = (request: FastifyRequest, reply: FastifyReply) => Promise<void> | undefined;

/**
 * A Fastify request hook (onRequest, preValidation, preHandler) in callback style around
 * `work`. An `async` hook costs a promise and a turn of the microtask queue on every request,
 * even when it has nothing to wait for; most of baud's hooks decide at once (an anonymous
 * caller, a body without strings, a session touched less than a minute ago), so they only
 * pay for a promise when `work` returns one. A throw or a rejection goes to the error handler.
 */
export function syncHook(work: RequestHookWork) {
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    let pending: Promise<void> | undefined;
    try {
      pending = work(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (pending === undefined) done();
    else pending.then(() => done(), done);
  };
}
