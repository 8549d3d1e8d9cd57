import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Every API route lives under this prefix; problem `type`s and cookies use it too. */
export const API_PREFIX = '/_baud/api/v1';

/**
 * ENiGMA½'s prefix. With `restApi.enigmaCompat` the same API (same routes, handlers, auth and
 * ACS) also answers here, so a bot written for ENiGMA½ works unchanged after `baud import enigma`.
 */
export const ENIGMA_API_PREFIX = '/_enig/api/v1';

/**
 * Where the API answers and the names its clients there know it by. Only names differ from one
 * mount to the other, never behaviour: problem `type`s, `Location`s, `Link`s and the refresh
 * cookie follow the prefix a request came in on.
 */
export interface ApiMount {
  readonly prefix: string;
  /** The API key headers accepted, in the order they are read (HTTP spelling). */
  readonly apiKeyHeaders: readonly string[];
  /** The same, as Node spells request headers (lower case). */
  readonly apiKeyHeaderNames: readonly string[];
  /** `Authorization` and the API key headers: what an answer's `Vary` names. */
  readonly credentialHeaders: string;
  /** Where the login routes are: their answers carry tokens. */
  readonly authPathPrefix: string;
  readonly refreshCookie: string;
}

function apiMount(prefix: string, apiKeyHeaders: readonly string[], refreshCookie: string): ApiMount {
  return Object.freeze({
    prefix,
    apiKeyHeaders: Object.freeze([...apiKeyHeaders]),
    apiKeyHeaderNames: Object.freeze(apiKeyHeaders.map((name) => name.toLowerCase())),
    credentialHeaders: ['Authorization', ...apiKeyHeaders].join(', '),
    authPathPrefix: `${prefix}/auth/`,
    refreshCookie,
  });
}

export const BAUD_API: ApiMount = apiMount(API_PREFIX, ['X-Baud-API-Key'], 'baud_refresh');
export const ENIGMA_API: ApiMount = apiMount(
  ENIGMA_API_PREFIX,
  ['X-Enigma-API-Key', 'X-Baud-API-Key'],
  'enigma_refresh',
);

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the API answers under ENiGMA½'s prefix too (`restApi.enigmaCompat`). */
    readonly answersEnigmaPrefix: boolean;
  }
}

function isUnder(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  const next = url.charAt(prefix.length);
  return next === '' || next === '/' || next === '?';
}

/**
 * Records on `app` whether ENiGMA½'s prefix answers too, and returns the mounts the API is to be
 * registered under: baud's always, ENiGMA½'s with `enigmaCompat`. Without it a URL under
 * `/_enig/api/v1` is an unknown path like any other, answered with baud's names.
 */
export function installApiMounts(app: FastifyInstance, options: { enigmaCompat: boolean }): readonly ApiMount[] {
  app.decorate('answersEnigmaPrefix', options.enigmaCompat);
  return options.enigmaCompat ? [BAUD_API, ENIGMA_API] : [BAUD_API];
}

/**
 * The mount a request came in on, by its URL, so unrouted requests (404, 405) have one too. Asked
 * of the server, not kept on the request: Fastify builds the request of a router error (a broken
 * percent escape) from its undecorated class, and that answer needs the mount as well.
 */
export function apiMountOf(request: FastifyRequest): ApiMount {
  return request.server.answersEnigmaPrefix && isUnder(request.url, ENIGMA_API_PREFIX) ? ENIGMA_API : BAUD_API;
}

/** A route pattern without its mount's prefix (`/_enig/api/v1/files/areas` → `/files/areas`). */
export function withoutApiPrefix(routeUrl: string): string {
  for (const prefix of [API_PREFIX, ENIGMA_API_PREFIX]) {
    if (isUnder(routeUrl, prefix)) return routeUrl.slice(prefix.length);
  }
  return routeUrl;
}
