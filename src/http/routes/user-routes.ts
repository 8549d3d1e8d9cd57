import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import type { Caller } from '../../caller.js';
import { PROFILE_FIELD_MAX_LENGTH } from '../../users/profile-service.js';
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

export function registerUserRoutes(fastify: FastifyInstance, board: Board): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Private mail: the own profile carries the unread mail count (the block list is in mail-routes.ts).
  const withUnreadMail = async <Profile extends object>(caller: Caller, profile: Profile) => ({
    ...profile,
    unreadMail: await board.mail.unreadCount(caller),
  });

  app.get(
    '/users/me',
    {
      schema: {
        tags: ['users'],
        summary: 'Own profile',
        response: { 200: OwnProfile, ...ProblemResponses(401, 403) },
      },
    },
    async (request) => withUnreadMail(request.caller, await board.profiles.getOwnProfile(request.caller)),
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
    async (request) =>
      withUnreadMail(request.caller, await board.profiles.updateOwnProfile(request.caller, request.body)),
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
}
