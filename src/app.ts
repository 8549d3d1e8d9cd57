import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { type Board, openBoard, startBoardWorkers } from './board.js';
import type { Clock } from './clock.js';
import type { Config } from './config/load-config.js';
import { API_PREFIX, BAUD_API, ENIGMA_API_PREFIX, installApiMounts } from './http/api-prefix.js';
import { installAuthHook } from './http/auth-hook.js';
import { installCaching } from './http/caching.js';
import { installCors } from './http/cors.js';
import { createCursorCodec } from './http/cursor-codec.js';
import { installJsonBody } from './http/json-body.js';
import { installNulGuard } from './http/nul-guard.js';
import { describeHeaders, describeOperation, nameProblemCode, SECURITY_SCHEMES } from './http/openapi-operations.js';
import { installProblemHandlers, sendFrameworkProblem, writeClientErrorProblem } from './http/problem.js';
import { registerReaderRoutes } from './http/reader-routes.js';
import { RequestLogController } from './http/request-log.js';
import { compileRequestValidator } from './http/request-validation.js';
import { installResponseHeaders, refuseWhileClosing } from './http/response-headers.js';
import { registerAdminRoutes } from './http/routes/admin-routes.js';
import { authRoutes } from './http/routes/auth-routes.js';
import { registerEventRoutes } from './http/routes/event-routes.js';
import { fileRoutes } from './http/routes/file-routes.js';
import { registerFtnRoutes } from './http/routes/ftn-routes.js';
import { type NodeLifecycle, registerHealthRoutes } from './http/routes/health-routes.js';
import { registerMailRoutes } from './http/routes/mail-routes.js';
import { registerMessageRoutes } from './http/routes/message-routes.js';
import { registerSystemRoutes } from './http/routes/system-routes.js';
import { registerUserRoutes } from './http/routes/user-routes.js';
import { registerWebhookRoutes } from './http/routes/webhook-routes.js';
import { installSessionActivity } from './http/session-activity.js';
import { logStream } from './logging/log-stream.js';
import type { BoardMetrics, CountedRoutes } from './metrics/board-metrics.js';
import { readerAssets } from './reader/reader-assets.js';
import { BAUD_VERSION } from './version.js';

export interface BuildAppOptions {
  /** An already open board (tests, `baud serve`); otherwise one is opened and closed with the app. */
  readonly board?: Board;
  readonly clock?: Clock;
  /** Fastify logger options; defaults to pino at the configured level. */
  readonly logger?: FastifyServerOptions['logger'];
  /** Where answered requests are counted (`metrics.enabled`); none by default. */
  readonly metrics?: BoardMetrics;
}

/** The routes whose answers also feed the login and upload counters of the metrics (under either prefix). */
export const METRICS_COUNTED_ROUTES: CountedRoutes = {
  login: [API_PREFIX, ENIGMA_API_PREFIX].map((prefix) => `${prefix}/auth/login`),
  upload: [API_PREFIX, ENIGMA_API_PREFIX].map((prefix) => `${prefix}/files/areas/:areaTag`),
};

export type BaudApp = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** Turns `/_baud/health/ready` to 503 while the node goes on serving (see `serveBoard`'s stop). */
    startDraining(): void;
    /**
     * Ends the event streams open now (their clients reconnect with Last-Event-ID). An injected
     * request (`app.inject`) to `GET /events` answers only once its stream ends: this ends it.
     */
    endEventStreams(): void;
    /** Whether `/` serves the web reader (on, and its assets could be loaded). */
    readonly servesReader: boolean;
  }
}

const ROUTABLE_METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Secrets that must never reach a log line, wherever a serializer might pick them up: the
 * request line logs no headers, but Fastify's own failure lines serialise the request.
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-baud-api-key"]',
  'req.headers["x-enigma-api-key"]',
  'res.headers["set-cookie"]',
];

/**
 * Builds the HTTP app for a board: every API route under `/_baud/api/v1` (and, with
 * `restApi.enigmaCompat`, under ENiGMA½'s `/_enig/api/v1` too), one auth hook, one error path
 * (problem+json), OpenAPI document and docs page. Does not listen.
 */
export async function buildApp(config: Config, options: BuildAppOptions = {}): Promise<BaudApp> {
  const board = options.board ?? (await openBoard(config, options.clock ? { clock: options.clock } : {}));
  const web = config.contentServers.web;
  const app = Fastify({
    logger: options.logger ?? { level: config.logging.level, redact: REDACTED_PATHS, stream: logStream() },
    // One line per request, when its answer is over, instead of Fastify's two.
    logController: new RequestLogController(),
    genReqId: () => randomUUID(),

    trustProxy: Array.isArray(web.trustProxy) ? [...web.trustProxy] : (web.trustProxy as boolean | string),
    bodyLimit: web.bodyLimitBytes,
    requestTimeout: web.requestTimeoutSeconds * 1000,
    keepAliveTimeout: web.keepAliveTimeoutSeconds * 1000,
    connectionTimeout: web.requestTimeoutSeconds * 1000,
    // Node checks the headers and request timeouts of open connections every 30 s by default,
    // so a 2 s headers timeout could hold a slow client for 32 s; check every second.
    http: { connectionsCheckingInterval: 1000 },
    // Fastify's own 503 while closing is not problem+json; refuseWhileClosing answers instead.
    return503OnClosing: false,
    frameworkErrors: sendFrameworkProblem,
    clientErrorHandler: writeClientErrorProblem,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.headersTimeout = web.headersTimeoutSeconds * 1000;
  app.setValidatorCompiler(compileRequestValidator);

  if (!options.board) app.addHook('onClose', () => board.close());
  const apiMounts = installApiMounts(app, { enigmaCompat: web.restApi.enabled && web.restApi.enigmaCompat });
  installResponseHeaders(app);
  refuseWhileClosing(app);
  installJsonBody(app, { bodyTimeoutSeconds: web.bodyTimeoutSeconds });

  // A second router that only knows which methods exist per path, to tell 405 from 404.
  const methodsByPath = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (!methodsByPath.hasRoute(method as HTTPMethod, route.url))
        methodsByPath.on(method as HTTPMethod, route.url, () => {});
    }
  });
  const allowedMethods = (url: string) => {
    const path = url.split('?')[0] ?? url;
    return ROUTABLE_METHODS.filter((method) => methodsByPath.find(method, path) !== null);
  };
  installProblemHandlers(app, allowedMethods);
  if (options.metrics) installRequestMetrics(app, options.metrics);

  const live = web.restApi.enabled
    ? startBoardWorkers(board, {
        onError: (error) => app.log.error({ err: error }, 'live events: reading the event log failed'),
        ...(options.metrics
          ? { streams: options.metrics.eventStreams, webhookAttempts: options.metrics.webhookAttempts }
          : {}),
      })
    : null;
  // Streams end first: Fastify's close waits for every open response, and a stream never ends by itself.
  app.addHook('preClose', (done) => {
    live?.streams.closeAll();
    done();
  });
  app.addHook('onClose', async () => {
    await live?.stop();
  });

  app.decorate('endEventStreams', () => live?.streams.endOpen());
  app.decorate('servesReader', false);

  const lifecycle: NodeLifecycle = { isDraining: false };
  app.decorate('startDraining', () => {
    lifecycle.isDraining = true;
    // Their clients reconnect (with Last-Event-ID) through the balancer, to a node that stays.
    live?.streams.closeAll();
  });

  // Outside the versioned API: a board with its API switched off still answers its balancer.
  registerHealthRoutes(app, board, lifecycle);
  if (web.restApi.enabled) {
    await registerOpenApi(app);
    installCors(app, config); // before the auth hook: preflights never meet credential checks
    installAuthHook(app, board);
    installNulGuard(app);
    // One codec for every mount: what it remembers of the cursors it made serves both.
    const cursors = createCursorCodec(board.cursorSecret);
    const registerApi = async (api: FastifyInstance) => {
      installCaching(api, web);
      installSessionActivity(api, board);
      registerSystemRoutes(api, board);
      await api.register(authRoutes, { board });
      registerUserRoutes(api, board);
      registerMessageRoutes(api, board, cursors);
      registerMailRoutes(api, board, cursors);
      await api.register(fileRoutes, { board, cursors });
      if (live) registerEventRoutes(api, board, live.eventStreams);
      registerWebhookRoutes(api, board, cursors);
      registerAdminRoutes(api, board, cursors);
      registerFtnRoutes(api, board);
    };
    // The same plugin once per mount: ENiGMA½'s prefix gets the very routes, hooks and handlers,
    // never copies. What differs (names only) the handlers ask of `apiMountOf(request)`.
    for (const mount of apiMounts) {
      await app.register(
        async (api) => {
          // A second door to the same API, not a second API: the document describes baud's prefix only.
          if (mount !== BAUD_API) api.addHook('onRoute', hideFromDocument);
          await registerApi(api);
        },
        { prefix: mount.prefix },
      );
    }
    if (web.reader.enabled) await serveReader(app);
  }
  return app;
}

/** Leaves a route out of the OpenAPI document (@fastify/swagger reads `hide` when it builds it). */
function hideFromDocument(route: RouteOptions): void {
  route.schema = { ...route.schema, hide: true };
}

/**
 * The web reader at `/`. It is the API's first client, not part of the API: a node whose reader
 * cannot be built (an installation without its sources or build) says so in its log and serves
 * the API all the same, rather than not starting at all.
 */
async function serveReader(app: FastifyInstance): Promise<void> {
  try {
    registerReaderRoutes(app, await readerAssets());
    (app as { servesReader: boolean }).servesReader = true;
  } catch (error) {
    app.log.error({ err: error }, 'web reader unavailable: run `baud reader build`; the API is served without it');
  }
}

/** Counts every answered request, by route pattern and status, once its answer is over. */
function installRequestMetrics(app: FastifyInstance, metrics: BoardMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const length = Number(request.headers['content-length']);
    metrics.observeRequest({
      method: request.method,
      route: request.is404 ? null : (request.routeOptions.url ?? null),
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      requestBytes: Number.isSafeInteger(length) ? length : null,
    });
    done();
  });
}

/** The document's tags: one per resource. */
const API_TAGS = [
  { name: 'system', description: 'Board information, statistics, nodes and last callers.' },
  { name: 'auth', description: 'Apply for an account, log in, refresh the access token, log out.' },
  { name: 'users', description: 'Your profile, the users whose mail you block, and other users’ public profiles.' },
  { name: 'messages', description: 'Conferences, areas, messages, threads, new-scan and search.' },
  { name: 'mail', description: 'Private mail between two users: boxes, reading, sending, search.' },
  { name: 'files', description: 'File areas, files, uploads, downloads and search.' },
  { name: 'events', description: 'The live event stream (Server-Sent Events).' },
  { name: 'webhooks', description: 'Signed deliveries of events to your own URLs.' },
  { name: 'admin', description: "The sysop's desk: accounts, applications, locks, groups and the audit log." },
];

async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'baud REST API',
        version: BAUD_VERSION,
        description:
          'JSON REST API of the baud bulletin board system. Operations that list `{}` among their security ' +
          'requirements also answer anonymous callers: what they show then is what the board makes public ' +
          '(the anonymous allowlist of `contentServers.web.restApi`). A request whose headers (the URL ' +
          'included) exceed 16 KiB is answered 431 by the HTTP layer before any route runs, and a path ' +
          'parameter longer than 100 characters (longer than any real tag or id) answers 404; both are problem+json.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      tags: API_TAGS,
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    // Shared schemas keep their own names (`MessageSummary`, not `def-5`): generated clients name their types by them.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documents) =>
      'openapiObject' in documents
        ? nameProblemCode(describeHeaders(documents as Parameters<typeof describeHeaders>[0]))
        : documents.swaggerObject,
  });
  app.addHook('onRoute', describeOperation);
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: 'public' };
    });
    await docs.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs`, staticCSP: true });
    docs.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  });
}
