import type { FastifyInstance } from 'fastify';
import type { Board } from '../board.js';
import { withoutApiPrefix } from './api-prefix.js';
import { syncHook } from './sync-hook.js';

const ACTIONS: readonly { prefix: string; read: string; write: string }[] = [
  { prefix: '/messages', read: 'Reading messages', write: 'Writing messages' },
  { prefix: '/files', read: 'Browsing files', write: 'Uploading files' },
  // What a BBS node list has always shown: that someone is in the mail, never whose or what.
  { prefix: '/mail', read: 'Reading mail', write: 'Writing mail' },
  { prefix: '/users', read: 'Viewing profiles', write: 'Editing profile' },
  { prefix: '/system', read: 'Reading board information', write: 'Reading board information' },
  { prefix: '/auth', read: 'Logging in', write: 'Logging in' },
];

/** The node list's "action" for a route: a short text from the route's URL pattern (either prefix) and method. */
export function actionOf(routeUrl: string, method: string): string {
  const path = withoutApiPrefix(routeUrl);
  const entry = ACTIONS.find((candidate) => path === candidate.prefix || path.startsWith(`${candidate.prefix}/`));
  if (!entry) return 'Using the API';
  if (entry.prefix === '/files' && path.endsWith('/download')) return 'Downloading files';
  return method === 'GET' || method === 'HEAD' ? entry.read : entry.write;
}

/**
 * Keeps login sessions' activity (last action, TLS, minutes online) current for callers with an
 * access token. API keys are not sessions and are not recorded. Runs before the handler so the
 * write is done by the time the reply goes out; the store writes at most once a minute per session.
 */
export function installSessionActivity(app: FastifyInstance, board: Board): void {
  app.addHook(
    'preHandler',
    syncHook((request) => {
      const caller = request.caller;
      if (caller.kind !== 'user' || caller.session === null) return;
      return board.sessionActivity.touch({
        session: caller.session,
        userId: caller.user.id,
        action: actionOf(request.routeOptions.url ?? request.url, request.method),
        isSecure: caller.isSecure,
      });
    }),
  );
}
