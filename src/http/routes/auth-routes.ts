import cookie, { type CookieSerializeOptions } from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SessionTokens } from '../../auth/auth-service.js';
import { rateLimitHeaders } from '../../auth/rate-limit-headers.js';
import { REFRESH_TOKEN_TTL_SECONDS } from '../../auth/refresh-tokens.js';
import { REGISTRATION_WINDOW_SECONDS, REGISTRATIONS_PER_ADDRESS } from '../../auth/registration-service.js';
import type { Board } from '../../board.js';
import { apiMountOf, BAUD_API } from '../api-prefix.js';
import { LoginProblemResponses, ProblemResponses } from '../schemas.js';

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
    otp: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'With two-factor login on: the 6 digits the authenticator app shows now, or an unused recovery code. ' +
          'Ignored when two-factor login is off.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { username: 'alice', password: 'correct horse battery' },
      { username: 'alice', password: 'correct horse battery', otp: '492039' },
    ],
  },
);

const RegisterBody = Type.Object(
  {
    username: Type.String({
      minLength: 1,
      maxLength: 256,
      description: '2–32 characters, not all digits, no control or invisible characters, no space at either end.',
    }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: 'At least users.passwordMinLength (8).' }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 256 })),
    realName: Type.Optional(Type.String({ maxLength: 64 })),
    location: Type.Optional(Type.String({ maxLength: 64 })),
    note: Type.Optional(Type.String({ maxLength: 500, description: 'For the sysop who decides.' })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        username: 'alice',
        password: 'correct horse battery',
        email: 'alice@example.org',
        note: 'Dialled in to the old board in 1994.',
      },
    ],
  },
);

/** The answer to a registration: 201 with `active`, 202 with `pending`. */
const registered = (status: 'active' | 'pending', description: string) =>
  Type.Object(
    { username: Type.String(), status: Type.Literal(status) },
    { description, examples: [{ username: 'alice', status }] },
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
          'every 200, 401, 403 and 429 tells with the RateLimit headers how many attempts are left. An account ' +
          'awaiting approval answers 403 once the password is right (a wrong one is the usual 401). With two-factor ' +
          'login on, a right password without `otp` answers 401 `auth.otp-required` with `"otpRequired": true` (not ' +
          'counted as a failure); a wrong, replayed or used-up `otp` answers 401 `auth.invalid-otp` and counts like a ' +
          'wrong password. A code is accepted once.',
        body: LoginBody,
        response: { 200: TokenResponse, ...LoginProblemResponses(401, 403, 415, 429) },
      },
    },
    async (request, reply) => {
      const session = await board.auth.login({
        username: request.body.username,
        password: request.body.password,
        otp: request.body.otp,
        clientAddress: request.ip,
        isSecure: request.protocol === 'https',
      });
      reply.headers(rateLimitHeaders(session.loginQuota));
      return sendTokens(request, reply, session);
    },
  );

  app.post(
    '/auth/register',
    {
      config: { access: 'ownCredentials' },
      schema: {
        tags: ['auth'],
        summary: 'Apply for an account',
        description:
          'By `users.registration`: `open` → 201 and the account is active (log in next); `approval` → 202 and ' +
          'the account awaits a sysop (logging in answers 403 until then; a rejected application is deleted); ' +
          '`closed` (also with `general.closedSystem`) → 403. A name taken in any case → 409. At most ' +
          `${REGISTRATIONS_PER_ADDRESS} accepted registrations per client address in ${REGISTRATION_WINDOW_SECONDS / 60} ` +
          'minutes, counted across nodes (429 with Retry-After beyond; refused ones do not count).',
        body: RegisterBody,
        response: {
          201: registered('active', 'Registered; the account is active.'),
          202: registered('pending', 'Registered; the account awaits approval.'),
          ...ProblemResponses(403, 409, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const registration = await board.registration.register(request.body, request.ip);
      if (registration.status === 'pending') return reply.code(202).send(registration);
      const location = `${apiMountOf(request).prefix}/users/${encodeURIComponent(registration.username)}`;
      return reply.code(201).header('location', location).send(registration);
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
