import { STATUS_CODES } from 'node:http';
import { Type } from 'typebox';
import { ERROR_CODES } from '../errors.js';
import { MAX_RANKED_MATCHES } from '../search/relevance.js';

/**
 * Every code a problem can carry (`ERROR_CODES`). The OpenAPI document names it `ProblemCode`
 * (see `nameProblemCode`), so typed clients get one union of the codes to branch on.
 */
export const ProblemCodeSchema = Type.String({
  enum: Object.keys(ERROR_CODES),
  description:
    'What went wrong, for clients to branch on; stable across versions. docs/api-notes.md "Problem codes" lists each with its status and meaning.',
  examples: ['message.area-not-found'],
});

/** The problem+json body (RFC 7807), as documented in the OpenAPI document. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ examples: ['/_baud/api/v1/errors/404'] }),
    title: Type.String({ examples: ['Not Found'] }),
    status: Type.Integer(),
    detail: Type.String(),
    code: ProblemCodeSchema,
    instance: Type.Optional(Type.String({ description: 'Request id (500 only); also in the server log.' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() }), {
        description: 'Validation failures, each with a JSON pointer into the request (/body/…, /query/…, /path/…).',
      }),
    ),
  },
  { $id: 'Problem' },
);

/**
 * The 401 of a login: a problem that may carry `otpRequired`. Only the login's answer documents
 * it (the member is never sent elsewhere), so the other problem answers stay as they were.
 */
export const LoginProblemSchema = Type.Object({
  ...ProblemSchema.properties,
  otpRequired: Type.Optional(
    Type.Literal(true, {
      description:
        'With `auth.otp-required`: the password was right and two-factor login is on; send the login again with `otp`.',
    }),
  ),
});

/**
 * The user the examples of the document show, as her card reads in every answer that lists a
 * user (nodes, last callers, profiles): user 7, the subject of the example token.
 */
export const USER_CARD_EXAMPLE = {
  userId: 7,
  username: 'alice',
  location: 'Sector 7G',
  affiliations: 'Modem Lovers',
} as const;

/** Response entries for the error statuses a route can answer with (400 and 500 are implied for all). */
export function ProblemResponses(...statuses: number[]) {
  const responses: Record<
    number,
    { description: string; content: Record<string, { schema: typeof ProblemSchema | typeof LoginProblemSchema }> }
  > = {};
  for (const status of [400, ...statuses, 500]) {
    responses[status] = {
      description: STATUS_CODES[status] ?? 'Error',
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }
  return responses;
}

/** `ProblemResponses` of the login: its 401 may carry `otpRequired` (see `LoginProblemSchema`). */
export function LoginProblemResponses(...statuses: number[]) {
  const responses = ProblemResponses(...statuses);
  responses[401] = {
    description: STATUS_CODES[401] ?? 'Error',
    content: { 'application/problem+json': { schema: LoginProblemSchema } },
  };
  return responses;
}

/** `sort` of a search. */
export const SearchSort = Type.Optional(
  Type.Union([Type.Literal('newest'), Type.Literal('relevance')], {
    description:
      '`newest` (the default): newest first. `relevance`: the most relevant first (how often the terms ' +
      'occur, for a short text more than a long one), the newest first among equals. Either order pages ' +
      'with a cursor without repeating or skipping an item, even while messages are posted. `relevance` ranks the ' +
      `newest ${MAX_RANKED_MATCHES} matches as of its first page (narrow the search to rank older ones); items ` +
      'posted after the first page join a new search, not its later pages.',
  }),
);

/** The `q` of a search endpoint: the one query language of messages and files. */
export const SearchQ = Type.String({
  maxLength: 4096,
  description:
    'Words (all must match), "a phrase", prefix*, -excluded, a OR b. Case- and accent-insensitive. ' +
    'At most 256 characters and 16 terms.',
  examples: ['modem "high speed" -fax', 'bbs OR board', 'ansi*'],
});

/** `areaTag` of a search: one area glob (see src/access/area-glob.ts). */
export const SearchAreaGlob = Type.Optional(
  Type.String({
    maxLength: 256,
    description:
      'Only areas whose tag matches this glob: `*` any run of characters, `?` one character. ' +
      'Anything else but letters, digits, `_`, `.` and `-` (braces, classes, extglobs) is a 400.',
    examples: ['pub_*'],
  }),
);
