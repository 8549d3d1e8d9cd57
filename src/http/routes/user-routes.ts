import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { rateLimitHeaders } from '../../auth/rate-limit-headers.js';
import { SESSION_VIAS } from '../../auth/session-store.js';
import { MAX_SSH_KEYS_PER_USER, SSH_KEY_LABEL_MAX_LENGTH } from '../../auth/ssh-key-service.js';
import { MIN_RSA_BITS, SSH_KEY_TYPES } from '../../auth/ssh-public-key.js';
import type { Board } from '../../board.js';
import type { Caller } from '../../caller.js';
import { PROFILE_FIELD_MAX_LENGTH } from '../../users/profile-service.js';
import { apiMountOf } from '../api-prefix.js';
import { ListEnvelope, wholeListReply } from '../pagination.js';
import { ProblemResponses, USER_CARD_EXAMPLE } from '../schemas.js';

const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Type.Union([DateTime, Type.Null()]);

/** What anyone may see of the example user; her own profile adds the rest. */
const PUBLIC_PROFILE_EXAMPLE = {
  ...USER_CARD_EXAMPLE,
  accountCreated: '2026-01-15T09:30:00.000Z',
  postCount: 387,
  achievementPoints: 1_250,
  realName: 'Alice Liddell',
  webAddress: 'https://alice.example.org/',
};

const OwnProfile = Type.Object(
  {
    userId: Type.Integer(),
    username: Type.String(),
    groups: Type.Array(Type.String()),
    realName: Type.String(),
    location: Type.String(),
    affiliations: Type.String(),
    emailAddress: Type.String(),
    webAddress: Type.String(),
    autoSignature: Type.String(),
    accountCreated: DateTime,
    lastLogin: NullableDateTime,
    loginCount: Type.Integer(),
    postCount: Type.Integer(),
    uploadCount: Type.Integer(),
    uploadBytes: Type.Integer(),
    downloadCount: Type.Integer(),
    downloadBytes: Type.Integer(),
    achievementPoints: Type.Integer(),
    minutesOnline: Type.Integer(),
    totpEnabled: Type.Boolean({ description: 'Whether login asks for a one-time code (two-factor login is on).' }),
    // Private mail (src/mail): one row read by primary key, whatever the mailbox holds.
    unreadMail: Type.Integer({ description: 'Unread mails in your inbox.' }),
  },
  {
    $id: 'OwnProfile',
    description: 'Unset text fields are "".',
    examples: [
      {
        ...PUBLIC_PROFILE_EXAMPLE,
        groups: ['users'],
        emailAddress: 'alice@example.org',
        autoSignature: '-- alice',
        lastLogin: '2026-11-24T15:39:00.000Z',
        loginCount: 214,
        uploadCount: 12,
        uploadBytes: 4_718_592,
        downloadCount: 96,
        downloadBytes: 31_457_280,
        minutesOnline: 5_432,
        totpEnabled: false,
        unreadMail: 2,
      },
    ],
  },
);

const PublicProfile = Type.Object(
  {
    userId: Type.Integer(),
    username: Type.String(),
    accountCreated: DateTime,
    postCount: Type.Integer(),
    achievementPoints: Type.Integer(),
    realName: Type.Optional(Type.String({ description: 'Only when set.' })),
    location: Type.Optional(Type.String({ description: 'Only when set.' })),
    affiliations: Type.Optional(Type.String({ description: 'Only when set.' })),
    webAddress: Type.Optional(Type.String({ description: 'Only when set.' })),
    groups: Type.Optional(Type.Array(Type.String(), { description: 'Sysop only.' })),
    emailAddress: Type.Optional(Type.String({ description: 'Sysop only.' })),
    lastLogin: Type.Optional(Type.Union([DateTime, Type.Null()], { description: 'Sysop only.' })),
    loginCount: Type.Optional(Type.Integer({ description: 'Sysop only.' })),
    uploadCount: Type.Optional(Type.Integer({ description: 'Sysop only.' })),
    downloadCount: Type.Optional(Type.Integer({ description: 'Sysop only.' })),
    minutesOnline: Type.Optional(Type.Integer({ description: 'Sysop only.' })),
  },
  { $id: 'PublicProfile', examples: [PUBLIC_PROFILE_EXAMPLE] },
);

// Lengths are checked by the service after trimming, so they are documented here, not enforced.
const editable = (field: keyof typeof PROFILE_FIELD_MAX_LENGTH, extra = '') =>
  Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: `At most ${PROFILE_FIELD_MAX_LENGTH[field]} characters after trimming; null or "" clears.${extra}`,
    }),
  );

const ProfileUpdateBody = Type.Object(
  {
    realName: editable('realName'),
    location: editable('location'),
    affiliations: editable('affiliations'),
    webAddress: editable('webAddress', ' Must be an http(s) URL.'),
    autoSignature: editable('autoSignature', ' Appended to new messages.'),
  },
  {
    additionalProperties: false,
    examples: [{ location: 'Sector 7G', webAddress: 'https://alice.example.org/', autoSignature: '-- alice' }],
  },
);

// Bounded so nobody can make argon2 hash megabytes per attempt (as at login).
const Password = Type.String({ minLength: 1, maxLength: 1024 });
const OneTimeCode = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'The 6 digits the authenticator app shows now, or an unused recovery code.',
});

const TotpEnrolBody = Type.Object(
  { password: Password },
  { additionalProperties: false, examples: [{ password: 'correct horse battery' }] },
);
const TotpConfirmBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64, description: 'The 6 digits the authenticator app shows now.' }) },
  { additionalProperties: false, examples: [{ code: '492039' }] },
);
const TotpDisableBody = Type.Object(
  { password: Password, code: OneTimeCode },
  { additionalProperties: false, examples: [{ password: 'correct horse battery', code: '492039' }] },
);

const TotpEnrolment = Type.Object(
  {
    secret: Type.String({ description: 'The shared secret, base32 (for typing in by hand).' }),
    otpauthUrl: Type.String({ description: 'otpauth://totp/… for a QR code.' }),
  },
  {
    $id: 'TotpEnrolment',
    examples: [
      {
        secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        otpauthUrl: 'otpauth://totp/baud:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=baud',
      },
    ],
  },
);
const RecoveryCodes = Type.Object(
  {
    recoveryCodes: Type.Array(Type.String(), {
      minItems: 10,
      maxItems: 10,
      description: 'Each logs in once in place of a code. Shown this once: the board keeps only their hashes.',
    }),
  },
  {
    $id: 'TotpRecoveryCodes',
    examples: [
      {
        recoveryCodes: [
          'k7mq-2xva-p9hd',
          'w3rt-b8nc-e5jz',
          'h2fs-q6ue-m4ya',
          'x9pd-t3kw-c7vb',
          'n5zg-r2je-a8qs',
          'u6hm-y4fc-d3tk',
          'b8wx-e7pn-s2rg',
          'j4qa-v9dt-f6mz',
          'c3yk-h5sw-q8ue',
          'p7ed-m2ba-z4xn',
        ],
      },
    ],
  },
);

const PASSWORD_THROTTLED =
  'A wrong password is 403 and counts in the login throttle (429 with Retry-After once it is full; the RateLimit headers tell what is left).';

export function registerUserRoutes(fastify: FastifyInstance, board: Board): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Private mail: the own profile carries the unread mail count (the block list is in mail-routes.ts).
  // Read beside the profile, not after it: one round trip's wait on PostgreSQL, not two.
  const withUnreadMail = async <Profile extends object>(caller: Caller, profile: Promise<Profile>) => {
    const [own, unreadMail] = await Promise.all([profile, board.mail.unreadCount(caller)]);
    return { ...own, unreadMail };
  };

  app.get(
    '/users/me',
    {
      schema: {
        tags: ['users'],
        summary: 'Own profile',
        response: { 200: OwnProfile, ...ProblemResponses(401, 403) },
      },
    },
    async (request) => withUnreadMail(request.caller, board.profiles.getOwnProfile(request.caller)),
  );

  app.put(
    '/users/me',
    {
      schema: {
        tags: ['users'],
        summary: 'Update own profile',
        description: 'Only the five fields below; an unknown field is a 400.',
        body: ProfileUpdateBody,
        response: { 200: OwnProfile, ...ProblemResponses(401, 403, 415) },
      },
    },
    async (request) => withUnreadMail(request.caller, board.profiles.updateOwnProfile(request.caller, request.body)),
  );

  app.post(
    '/users/me/totp',
    {
      schema: {
        tags: ['users'],
        summary: 'Enrol in two-factor login (TOTP)',
        description:
          'Answers a new shared secret (RFC 6238: SHA-1, 6 digits, 30-second steps) to put into an authenticator ' +
          'app; login asks for codes only once `POST /users/me/totp/confirm` turned it on. Enrolling again ' +
          `replaces an unconfirmed secret; two-factor login on already → 409. ${PASSWORD_THROTTLED}`,
        body: TotpEnrolBody,
        response: { 200: TotpEnrolment, ...ProblemResponses(401, 403, 409, 415, 429) },
      },
    },
    async (request, reply) => {
      const enrolment = await board.twoFactor.enrol(request.caller, {
        password: request.body.password,
        clientAddress: request.ip,
      });
      // The secret must not be kept by any cache.
      return reply.header('cache-control', 'no-store').send(enrolment);
    },
  );

  app.post(
    '/users/me/totp/confirm',
    {
      schema: {
        tags: ['users'],
        summary: 'Turn two-factor login on',
        description:
          'With a current code of the enrolled secret (wrong → 400; one step of clock skew either way is accepted). ' +
          'Answers 10 recovery codes, shown this once. No enrolment, or on already → 409.',
        body: TotpConfirmBody,
        response: { 200: RecoveryCodes, ...ProblemResponses(401, 403, 409, 415) },
      },
    },
    async (request, reply) => {
      const codes = await board.twoFactor.confirm(request.caller, request.body.code);
      return reply.header('cache-control', 'no-store').send(codes);
    },
  );

  app.delete(
    '/users/me/totp',
    {
      schema: {
        tags: ['users'],
        summary: 'Turn two-factor login off',
        description:
          'With the password and a current code (or an unused recovery code); a wrong code is 400 and counts in the ' +
          `login throttle like a wrong password. Not on → 409. ${PASSWORD_THROTTLED}`,
        body: TotpDisableBody,
        response: {
          204: Type.Null({ description: 'Two-factor login is off.' }),
          ...ProblemResponses(401, 403, 409, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const { password, code } = request.body;
      await board.twoFactor.disable(request.caller, { password, code, clientAddress: request.ip });
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users/:username',
    {
      schema: {
        tags: ['users'],
        summary: "A user's public profile",
        description: 'Case-insensitive on the username. Sysops get the extended view.',
        params: Type.Object({ username: Type.String({ minLength: 1 }) }),
        response: { 200: PublicProfile, ...ProblemResponses(401, 403, 404) },
      },
    },
    (request) => board.profiles.getPublicProfile(request.caller, request.params.username),
  );

  registerOwnAccountRoutes(fastify, board);
}

// --- Your own account: password, login sessions and SSH keys (docs/api-notes.md "Your own account", "SSH keys") ---

const PasswordChangeBody = Type.Object(
  {
    // Bounded as at login, so nobody can make argon2 hash megabytes per attempt.
    currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
    newPassword: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'The rules of account creation: at least users.passwordMinLength (8) characters.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ currentPassword: 'correct horse battery', newPassword: 'a longer horse battery staple' }],
  },
);

const OwnSession = Type.Object(
  {
    id: Type.String({ description: 'The session id (the `sid` of its access tokens); not a credential.' }),
    createdAt: DateTime,
    lastSeenAt: Type.String({
      format: 'date-time',
      description: 'The last request of the session, written at most once a minute.',
    }),
    current: Type.Boolean({ description: 'The session this request was made in.' }),
    via: Type.Union([Type.Literal(SESSION_VIAS[0]), Type.Literal(SESSION_VIAS[1])], {
      description: '`api`: logged in through the API (the web reader too); `terminal`: SSH or telnet.',
    }),
  },
  {
    $id: 'OwnSession',
    examples: [
      {
        id: '0b8f3c1e-5d2a-4f7e-9c61-3a2d4e5f6a7b',
        createdAt: '2026-11-24T08:12:00.000Z',
        lastSeenAt: '2026-11-24T15:51:03.763Z',
        current: true,
        via: 'api',
      },
    ],
  },
);

const SessionParams = Type.Object({
  sessionId: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'The `id` of the session in GET /users/me/sessions.',
    examples: ['0b8f3c1e-5d2a-4f7e-9c61-3a2d4e5f6a7b'],
  }),
});

const SSH_KEY_EXAMPLE = {
  id: 3,
  type: 'ssh-ed25519',
  fingerprint: 'SHA256:+JGxGmSvZ2an6LD4Q5YAmi/cP6/YB1xlGwEb5h6W+vs',
  label: 'alice@laptop',
  createdAt: '2026-11-24T16:02:00.000Z',
};

const SshKey = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String({ description: `The key type: ${SSH_KEY_TYPES.join(', ')}.` }),
    fingerprint: Type.String({
      description: "OpenSSH's SHA-256 fingerprint (`SHA256:` and unpadded base64), as `ssh-keygen -lf` shows it.",
    }),
    label: Type.String({ description: 'The label given, or the comment of the key line; may be "".' }),
    createdAt: DateTime,
  },
  { $id: 'SshKey', examples: [SSH_KEY_EXAMPLE] },
);

const SshKeyBody = Type.Object(
  {
    publicKey: Type.String({
      description:
        'One OpenSSH public key line, `type base64 [comment]`: the contents of a .pub file such as ' +
        `~/.ssh/id_ed25519.pub, at most 16 KiB. Accepted: ${SSH_KEY_TYPES.join(', ')} (RSA of ${MIN_RSA_BITS} ` +
        'bits or more).',
    }),
    label: Type.Optional(
      Type.String({
        description:
          `At most ${SSH_KEY_LABEL_MAX_LENGTH} characters after trimming, no control characters. Left out ` +
          `or blank: the key line's comment (cut to ${SSH_KEY_LABEL_MAX_LENGTH} characters).`,
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMgpVmIgPR8JIQ0x4dj1WdGlgO0ZIUnR81f3lX5XC1be alice@laptop',
        label: 'laptop',
      },
    ],
  },
);

const SshKeyParams = Type.Object({
  id: Type.Integer({
    minimum: 1,
    maximum: 2_147_483_647,
    description: 'The `id` of the key in GET /users/me/ssh-keys.',
  }),
});

function registerOwnAccountRoutes(fastify: FastifyInstance, board: Board): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { maxSessionsPerUser } = board.config.contentServers.web.restApi;

  app.put(
    '/users/me/password',
    {
      schema: {
        tags: ['users'],
        summary: 'Change own password',
        description:
          'Only in a login session (an API key → 403 `account.login-session-required`). Every other login session ' +
          'of the user ends at once (on other nodes within a second); the one of this request stays. As with ' +
          '`baud user passwd`, every API key of the user is revoked and their webhooks are deactivated. A new ' +
          'password that breaks the rules → 400. A wrong current password → 403 `auth.password-incorrect`, and ' +
          'it counts as a failed login for the account and the client address: beyond the login throttle → 429 ' +
          'with Retry-After. The 204, 403 and 429 carry the RateLimit headers of what the address has left.',
        body: PasswordChangeBody,
        response: { 204: Type.Null({ description: 'Changed.' }), ...ProblemResponses(401, 403, 415, 429) },
      },
    },
    async (request, reply) => {
      const quota = await board.credentials.changeOwnPassword(request.caller, {
        ...request.body,
        clientAddress: request.ip,
      });
      return reply.code(204).headers(rateLimitHeaders(quota)).send(null);
    },
  );

  app.get(
    '/users/me/sessions',
    {
      schema: {
        tags: ['users'],
        summary: 'Own login sessions',
        description:
          "The caller's live login sessions, oldest first, in one page: a user has at most " +
          'restApi.maxSessionsPerUser (default 10) live sessions, since a login ends the oldest beyond.',
        response: { 200: ListEnvelope(OwnSession), ...ProblemResponses(401, 403) },
      },
    },
    async (request) => wholeListReply(await board.loginSessions.listOwnSessions(request.caller), maxSessionsPerUser),
  );

  app.delete(
    '/users/me/sessions/:sessionId',
    {
      schema: {
        tags: ['users'],
        summary: 'End one of own login sessions',
        description:
          'Its refresh token and access tokens stop working at once (on other nodes within a second). ' +
          'An id that is not one of your live sessions → 404.',
        params: SessionParams,
        response: { 204: Type.Null({ description: 'Ended.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await board.loginSessions.endOwnSession(request.caller, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/users/me/ssh-keys',
    {
      schema: {
        tags: ['users'],
        summary: 'Add an SSH key',
        description:
          'Registers a public key to log in with at the terminal (SSH). Only in a login session (an API key → ' +
          '403 `account.login-session-required`). A line that is not one accepted OpenSSH public key → 400 ' +
          '(`ssh-key.malformed`, `.private-key`, `.unsupported-type`, `.rsa-too-short`, `.too-large`), saying ' +
          `what to paste. The same key twice → 409 \`ssh-key.duplicate\`; at most ${MAX_SSH_KEYS_PER_USER} keys ` +
          '(409 `ssh-key.limit-reached` beyond). Answers 201 with `Location`. A password change removes every key.',
        body: SshKeyBody,
        response: {
          201: {
            description: 'Added; Location names the key (DELETE removes it there).',
            headers: { location: { type: 'string' } },
            content: { 'application/json': { schema: SshKey } },
          },
          ...ProblemResponses(401, 403, 409, 415),
        },
      },
    },
    async (request, reply) => {
      const key = await board.sshKeys.add(request.caller, request.body);
      reply.code(201).header('location', `${apiMountOf(request).prefix}/users/me/ssh-keys/${key.id}`);
      return key;
    },
  );

  app.get(
    '/users/me/ssh-keys',
    {
      schema: {
        tags: ['users'],
        summary: 'Own SSH keys',
        description:
          `The caller's SSH keys, newest first, in one page (at most ${MAX_SSH_KEYS_PER_USER}). An API key with ` +
          'scope `read` may list them.',
        response: { 200: ListEnvelope(SshKey), ...ProblemResponses(401, 403) },
      },
    },
    async (request) => wholeListReply(await board.sshKeys.listOwn(request.caller), MAX_SSH_KEYS_PER_USER),
  );

  app.delete(
    '/users/me/ssh-keys/:id',
    {
      schema: {
        tags: ['users'],
        summary: 'Remove one of own SSH keys',
        description:
          'It logs in no more from now on; a login session it began goes on until ended (DELETE ' +
          '/users/me/sessions/{sessionId}). Only in a login session (an API ' +
          "key → 403). An id that is not one of your keys → 404, whether it is unknown or someone else's.",
        params: SshKeyParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...ProblemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await board.sshKeys.removeOwn(request.caller, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
