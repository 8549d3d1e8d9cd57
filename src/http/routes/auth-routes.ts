import cookie, { type CookieSerializeOptions } from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SessionTokens } from '../../auth/auth-service.js';
import { rateLimitHeaders } from '../../auth/rate-limit-headers.js';
import { REFRESH_TOKEN_TTL_SECONDS } from '../../auth/refresh-tokens.js';
import type { Board } from '../../board.js';
import { apiMountOf, BAUD_API } from '../api-prefix.js';
import { ProblemResponses } from '../schemas.js';

const TokenResponse = Type.Object(
  {
    accessToken: Type.String({ description: 'Signed JWT (HS256).' }),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'Lifetime of the access token in seconds (900).' }),
  },
  {
    $id: 'TokenResponse',
    examples: [
      { accessToken: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3In0.c2lnbmF0dXJl', tokenType: 'Bearer', expiresIn: 900 },
    ],
  },
);

const LoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 256 }),
    // Bounded so nobody can make argon2 hash megabytes per attempt.
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, examples: [{ username: 'alice', password: 'correct horse battery' }] },
);

// The document describes baud's own prefix; under ENiGMA½'s the cookie has ENiGMA½'s name and path.
const cookieDescription = `Sets the HttpOnly \`${BAUD_API.refreshCookie}\` cookie (SameSite=Strict, Path=${BAUD_API.prefix}/auth).`;

/**
 * The auth routes, with the cookie parser registered for them alone: no other route reads or
 * sets a cookie, so no other request pays for parsing its Cookie header. The refresh cookie is
 * the request's mount's (`baud_refresh`, or `enigma_refresh` under ENiGMA½'s prefix), scoped to
 * that mount's `/auth` path.
 */
export async function authRoutes(parent: FastifyInstance, options: { board: Board }): Promise<void> {
  const { board } = options;
  await parent.register(cookie);
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const restApi = board.config.contentServers.web.restApi;

  function cookieOptions(request: FastifyRequest): CookieSerializeOptions {
    return {
      httpOnly: true,
      sameSite: 'strict',
      path: `${apiMountOf(request).prefix}/auth`,
      secure: request.protocol === 'https' || restApi.secureCookies,
    };
  }

  function sendTokens(request: FastifyRequest, reply: FastifyReply, session: SessionTokens) {
    reply
      .setCookie(apiMountOf(request).refreshCookie, session.refreshToken, {
        ...cookieOptions(request),
        maxAge: REFRESH_TOKEN_TTL_SECONDS,
      })
      // Tokens must not be kept by any cache (RFC 6749 §5.1).
      .header('cache-control', 'no-store');
    return session.token;
  }

  app.post(
    '/auth/login',
    {
      config: { access: 'ownCredentials' },
      schema: {
        tags: ['auth'],
        summary: 'Log in with username and password',
        description:
          `${cookieDescription} Repeated failures per username or client address answer 429 with Retry-After; ` +
          'every 200, 401 and 429 tells with the RateLimit headers how many attempts are left.',
        body: LoginBody,
        response: { 200: TokenResponse, ...ProblemResponses(401, 415, 429) },
      },
    },
    async (request, reply) => {
      const session = await board.auth.login({
        username: request.body.username,
        password: request.body.password,
        clientAddress: request.ip,
        isSecure: request.protocol === 'https',
      });
      reply.headers(rateLimitHeaders(session.loginQuota));
      return sendTokens(request, reply, session);
    },
  );

  app.post(
    '/auth/refresh',
    {
      config: { access: 'ownCredentials' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange the refresh cookie for a new access token',
        description: `Rotates the refresh token. Presenting the old one again within restApi.refreshGraceSeconds (default 10) of its rotation, while its successor is unused, answers with that same successor (so parallel refreshes agree); any other reuse ends the whole session. ${cookieDescription}`,
        response: { 200: TokenResponse, ...ProblemResponses(401) },
      },
    },
    async (request, reply) => {
      const session = await board.auth.refresh(request.cookies[apiMountOf(request).refreshCookie]);
      return sendTokens(request, reply, session);
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { access: 'ownCredentials' },
      schema: {
        tags: ['auth'],
        summary: 'End the login session of the refresh cookie',
        description: 'Idempotent: without a (live) cookie it still answers 204 and clears the cookie.',
        response: { 204: Type.Null({ description: 'Logged out.' }), ...ProblemResponses() },
      },
    },
    async (request, reply) => {
      await board.auth.logout(request.cookies[apiMountOf(request).refreshCookie]);
      reply.clearCookie(apiMountOf(request).refreshCookie, cookieOptions(request)).code(204);
      return null;
    },
  );
}
