import type { RouteOptions } from 'fastify';
import { withoutApiPrefix } from './api-prefix.js';
import type { RouteAccess } from './route-access.js';
import { ProblemCodeSchema, ProblemResponses } from './schemas.js';

/**
 * The stable `operationId` of every API operation — what client generators name their methods
 * — keyed by method and route below the API prefix. An id never changes once shipped; a new
 * operation without one fails the lint test of the committed document (test/http/openapi-lint.test.ts).
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /system/info': 'getSystemInfo',
  'GET /system/stats': 'getSystemStats',
  'GET /system/nodes': 'listNodes',
  'GET /system/last-callers': 'listLastCallers',
  'POST /auth/register': 'register',
  'POST /auth/login': 'login',
  'POST /auth/refresh': 'refreshSession',
  'POST /auth/logout': 'logout',
  'GET /users/me': 'getOwnProfile',
  'PUT /users/me': 'updateOwnProfile',
  'POST /users/me/totp': 'enrolTotp',
  'POST /users/me/totp/confirm': 'confirmTotp',
  'DELETE /users/me/totp': 'disableTotp',
  'GET /users/:username': 'getUserProfile',
  'PUT /users/me/password': 'changeOwnPassword',
  'GET /users/me/sessions': 'listOwnSessions',
  'DELETE /users/me/sessions/:sessionId': 'endOwnSession',
  'POST /users/me/ssh-keys': 'addSshKey',
  'GET /users/me/ssh-keys': 'listOwnSshKeys',
  'DELETE /users/me/ssh-keys/:id': 'removeSshKey',
  'GET /messages/conferences': 'listConferences',
  'GET /messages/conferences/:confTag': 'getConference',
  'GET /messages/areas/:areaTag': 'getMessageArea',
  'GET /messages/areas/:areaTag/messages': 'listAreaMessages',
  'POST /messages/areas/:areaTag/messages': 'postMessage',
  'GET /messages/search': 'searchMessages',
  'PUT /messages/areas/:areaTag/pointer': 'setPointer',
  'GET /messages/unread': 'listUnreadAreas',
  'GET /messages/:uuid': 'getMessage',
  'DELETE /messages/:uuid': 'deleteMessage',
  'GET /messages/:uuid/thread': 'getThread',
  'POST /mail': 'sendMail',
  'GET /mail': 'listMail',
  'GET /mail/search': 'searchMail',
  'GET /mail/:uuid': 'getMail',
  'PATCH /mail/:uuid': 'setMailRead',
  'DELETE /mail/:uuid': 'deleteMail',
  'GET /users/me/blocked': 'listBlockedUsers',
  'PUT /users/me/blocked/:username': 'blockUser',
  'DELETE /users/me/blocked/:username': 'unblockUser',
  'GET /files/areas': 'listFileAreas',
  'GET /files/areas/:areaTag': 'getFileArea',
  'POST /files/areas/:areaTag': 'uploadFile',
  'GET /files/search': 'searchFiles',
  'GET /files/areas/:areaTag/files': 'listAreaFiles',
  'GET /files/:fileId': 'getFile',
  'GET /files/:fileId/download': 'downloadFile',
  'GET /events': 'followEvents',
  'POST /webhooks': 'createWebhook',
  'GET /webhooks': 'listWebhooks',
  'GET /webhooks/:id': 'getWebhook',
  'PATCH /webhooks/:id': 'updateWebhook',
  'DELETE /webhooks/:id': 'deleteWebhook',
  'POST /webhooks/:id/test': 'testWebhook',
  'GET /webhooks/:id/deliveries': 'listWebhookDeliveries',
  'GET /admin/users': 'listAccounts',
  'POST /admin/users/:username/approve': 'approveAccount',
  'POST /admin/users/:username/reject': 'rejectAccount',
  'POST /admin/users/:username/lock': 'lockAccount',
  'POST /admin/users/:username/unlock': 'unlockAccount',
  'PUT /admin/users/:username/groups': 'setAccountGroups',
  'DELETE /admin/users/:username/totp': 'resetAccountTotp',
  'GET /admin/audit': 'listAuditLog',
  'GET /admin/ftn': 'getFtnStatus',
};

/** Where the API's credentials go, as the OpenAPI document declares them. */
export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An access token from `POST /auth/login` (or an API key, `baud_…` or one imported from ENiGMA½, sent the same way).',
  },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Baud-API-Key',
    description: 'An API key (`baud rest api-key generate`); its scope decides read (GET) and write.',
  },
  refreshCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'baud_refresh',
    description: 'The HttpOnly refresh cookie `POST /auth/login` sets; only refresh and logout read it.',
  },
} as const;

type SecurityRequirement = Record<string, string[]>;
const CREDENTIALS: SecurityRequirement[] = [{ bearerAuth: [] }, { apiKey: [] }];
/** An empty requirement first: the operation also answers without credentials. */
const OPTIONAL_CREDENTIALS: SecurityRequirement[] = [{}, ...CREDENTIALS];
const OWN_CREDENTIALS: Readonly<Record<string, SecurityRequirement[]>> = {
  'POST /auth/login': [],
  'POST /auth/refresh': [{ refreshCookie: [] }],
  'POST /auth/logout': [{ refreshCookie: [] }],
};

/**
 * What any API operation may answer whatever its handler does: a malformed or NUL-bearing
 * request (400), a credential that is bad (401) or whose scope does not cover the method (403),
 * an internal error (500) and a node that is shutting down (503).
 */
const FRAMEWORK_STATUSES = [400, 401, 403, 500, 503];
/** … and with a request body: one sent too slowly (408), too big (413), or of another type (415). */
const BODY_STATUSES = [408, 413, 415];

/**
 * Gives an API route its operationId and the credentials it takes (from its access rule: what
 * anonymous callers may read takes credentials optionally) and the problem answers every
 * operation can give, for the OpenAPI document.
 * Routes outside the API and hidden ones are left alone.
 */
export function describeOperation(route: RouteOptions): void {
  const schema = route.schema as Record<string, unknown> | undefined;
  // ENiGMA½'s prefix is described too, so its routes answer and serialise exactly as baud's; this
  // root hook runs before the compat plugin's own, which then hides them from the document.
  const path = withoutApiPrefix(route.url);
  if (!path.startsWith('/') || path === route.url || schema === undefined || schema.hide === true) return;
  for (const method of [route.method].flat()) {
    if (method === 'HEAD') continue;
    const key = `${method} ${path}`;
    const operationId = OPERATION_IDS[key];
    const access: RouteAccess = route.config?.access ?? 'authenticated';
    // Anonymous callers may read what the board makes public, and never write.
    const isOpenToAnonymous = access !== 'authenticated' && method === 'GET';
    const security =
      access === 'ownCredentials'
        ? (OWN_CREDENTIALS[key] ?? [])
        : isOpenToAnonymous
          ? OPTIONAL_CREDENTIALS
          : CREDENTIALS;
    // A DELETE may carry a body too, and meets the same body checks.
    const hasBody = method !== 'GET';
    const documented = (schema.response ?? {}) as Record<string, unknown>;
    const always = ProblemResponses(...FRAMEWORK_STATUSES, ...(hasBody ? BODY_STATUSES : []));
    route.schema = {
      ...schema,
      ...(operationId === undefined ? {} : { operationId }),
      security,
      response: { ...always, ...documented },
    };
  }
}

type OpenApiObject = {
  paths?: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
};
interface OpenApiOperation {
  operationId?: string;
  responses?: Record<string, OpenApiResponse>;
}
interface OpenApiResponse {
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: { properties?: Record<string, unknown> } }>;
}

const HEADERS = {
  etag: {
    description: 'A strong validator of the body: send it back as `If-None-Match` to get a 304.',
    schema: { type: 'string' },
  },
  cacheControl: {
    description: '`no-store` for answers to a credential; `public, max-age=…` for public answers to anonymous callers.',
    schema: { type: 'string' },
  },
  link: {
    description: 'The next page, when there is one: `<…?cursor=…>; rel="next"` (the same as `meta.nextCursor`).',
    schema: { type: 'string' },
  },
  location: { description: 'Where the created resource is.', schema: { type: 'string' } },
  retryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
} as const;

/** The RateLimit headers (draft-ietf-httpapi-ratelimit-headers, "draft 6") of the login throttle. */
const LOGIN_RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': {
    description: 'Login attempts one window allows per username and per client address (`loginThrottle.maxFailures`).',
    schema: { type: 'integer', examples: [10] },
  },
  'RateLimit-Remaining': {
    description:
      'Attempts the client address has left in its window after this one (a success gives its slot back; 0 on a 429). ' +
      "The username's own limit is not shown (it would reveal others' attempts), so it may answer 429 first.",
    schema: { type: 'integer', examples: [9] },
  },
  'RateLimit-Reset': {
    description: "Seconds until the client address's window ends (on a 429, the same as `Retry-After`).",
    schema: { type: 'integer', examples: [900] },
  },
  'RateLimit-Policy': {
    description: '`<limit>;w=<windowSeconds>`: the limit and its window (`loginThrottle.windowSeconds`).',
    schema: { type: 'string', examples: ['10;w=900'] },
  },
} as const;

/** The answers, by operationId, that carry the login throttle's RateLimit headers. */
const RATE_LIMITED_ANSWERS: Readonly<Record<string, readonly string[]>> = {
  login: ['200', '401', '403', '429'],
  // A wrong current password is a failed login: the 403 of `auth.password-incorrect` carries them, an API key's 403 not.
  changeOwnPassword: ['204', '403', '429'],
  // The password asked again counts in the login throttle (see `PasswordConfirmation`).
  enrolTotp: ['403', '429'],
  disableTotp: ['400', '403', '429'],
};

/**
 * Describes the headers the API sends (`ETag`, `Cache-Control`, `Link`, `Location`,
 * `Retry-After`, the login's `RateLimit-*`) on every answer of the generated document that
 * carries them. Done on the document, after it is generated, so that the route schemas the
 * server serialises with stay plain.
 */
export function describeHeaders({ openapiObject }: { openapiObject: Partial<OpenApiObject> }) {
  for (const operations of Object.values(openapiObject.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers: Record<string, unknown> = { ...response.headers };
        if (method === 'get' && status === '200' && response.content?.['application/json']) {
          headers.ETag = HEADERS.etag;
          headers['Cache-Control'] = HEADERS.cacheControl;
          const properties = response.content['application/json'].schema?.properties ?? {};
          if ('data' in properties && 'meta' in properties) headers.Link = HEADERS.link;
        }
        if (status === '201') headers.Location = HEADERS.location;
        if (status === '429' || status === '503') headers['Retry-After'] = HEADERS.retryAfter;
        if (RATE_LIMITED_ANSWERS[operation.operationId ?? '']?.includes(status)) {
          Object.assign(headers, LOGIN_RATE_LIMIT_HEADERS);
        }
        if (Object.keys(headers).length > 0) response.headers = headers;
      }
    }
  }
  return openapiObject;
}

/**
 * Makes the `code` of every problem answer a reference to one `ProblemCode` schema: inline, its
 * enum of every code would repeat in each of the document's two hundred problem answers, and
 * generated clients get one named union of the codes to branch on. Done on the document, after it
 * is generated, for the same reason as the headers.
 */
export function nameProblemCode(openapiObject: Partial<OpenApiObject>) {
  for (const operations of Object.values(openapiObject.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const properties = response.content?.['application/problem+json']?.schema?.properties;
        if (properties?.code) properties.code = { $ref: '#/components/schemas/ProblemCode' };
      }
    }
  }
  const schemas = { ...openapiObject.components?.schemas, ProblemCode: ProblemCodeSchema };
  openapiObject.components = { ...openapiObject.components, schemas };
  return openapiObject;
}
