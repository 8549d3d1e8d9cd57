import { createAreaAccess } from './access/area-access.js';
import { type BoardAreas, compileBoardAreas } from './access/board-areas.js';
import { createAccessTokens } from './auth/access-tokens.js';
import { createApiKeyStore } from './auth/api-key-store.js';
import { createIdentityServices } from './auth/identity-services.js';
import { createLoginAttemptStore } from './auth/login-attempt-store.js';
import { createSessionStore } from './auth/session-store.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config/load-config.js';
import { type Database, migrateToLatest, openDatabase } from './db/database.js';
import { loadOrCreateSecret } from './db/settings-store.js';
import { createEventLog } from './events/event-log.js';
import { createEventVisibility } from './events/event-visibility.js';
import { type LiveEvents, startLiveEvents } from './events/live-events.js';
import type { StreamObserver } from './events/stream-registry.js';
import { openFileBase } from './files/file-service.js';
import { createFileStore } from './files/file-store.js';
import { createIdentityChanges, type IdentityChanges } from './identity-changes.js';
import { createMessageService } from './messages/message-service.js';
import { createMessageStore } from './messages/message-store.js';
import { registerRelevanceFunction } from './search/full-text-index.js';
import { createSearchBudget, searchBudgetLimitsFor } from './search/search-budget.js';
import { createHealthService } from './system/health-service.js';
import { createSystemService } from './system/system-service.js';
import { createSystemStore } from './system/system-store.js';
import { createProfileService } from './users/profile-service.js';
import { createUserService } from './users/user-service.js';
import { createUserStore } from './users/user-store.js';
import { type AttemptObserver, createWebhookSender } from './webhooks/webhook-sender.js';
import { createWebhookService } from './webhooks/webhook-service.js';
import { createWebhookStore } from './webhooks/webhook-store.js';

/**
 * A running board: configuration, database, clock and the domain services built on them.
 * The HTTP app and the CLI both work through one of these, so they cannot disagree on a rule.
 */
export async function openBoard(config: Config, options: { clock?: Clock; migrate?: boolean } = {}) {
  const clock = options.clock ?? systemClock;
  // ACS errors are configuration errors: find them before touching the database.
  const areas = compileBoardAreas(config);
  const { url, poolSize, statementTimeoutSeconds } = config.database;
  const database = await openDatabase(url, {
    poolSize,
    statementTimeoutSeconds,
    timeQueries: config.metrics.enabled,
    onSqliteOpen: registerRelevanceFunction,
  });
  try {
    const appliedMigrations = (options.migrate ?? true) ? await migrateToLatest(database) : [];
    return { ...(await assembleBoard(config, database, clock, areas)), appliedMigrations };
  } catch (error) {
    await database.close();
    throw error;
  }
}

async function assembleBoard(config: Config, database: Database, clock: Clock, areas: BoardAreas) {
  const { db } = database;
  const configuredSecret = config.contentServers.web.restApi.jwtSecret;
  const jwtSecret = configuredSecret
    ? new TextEncoder().encode(configuredSecret)
    : await loadOrCreateSecret(db, 'jwtSecret');
  const cursorSecret = await loadOrCreateSecret(db, 'cursorSecret');
  const refreshSuccessorSecret = await loadOrCreateSecret(db, 'refreshSuccessorSecret');
  const webhookSecret = await loadOrCreateSecret(db, 'webhookSecret');
  const identityChanges = createIdentityChanges();
  const stores = createStores(database, clock, identityChanges);
  const events = createEventLog({ database, clock, ...config.events, onPrune: stores.webhooks.pruneDeliveries });
  const users = createUserService({ store: stores.users, config, clock });
  const access = createAreaAccess({ config, areas, clock });
  const messages = createMessageService({ store: stores.messages, users: stores.users, clock, areas, access, events });
  const files = await openFileBase({ store: stores.files, config, clock, areas, access, events });
  return {
    config,
    database,
    /** For tests and benchmarks that look at rows directly; the HTTP app and the CLI use services. */
    db,
    clock,
    /** The key the HTTP edge signs its list cursors with (see createCursorCodec): the same on every node. */
    cursorSecret,
    ...createIdentityServices({
      config,
      clock,
      stores,
      users,
      accessTokens: createAccessTokens(jwtSecret, clock),
      refreshSuccessorSecret,
      identityChanges,
      events,
    }),
    users,
    profiles: createProfileService({ store: stores.users }),
    areas,
    access,
    /** The durable event log every change is recorded in, and who may see which event. */
    events,
    mayCallerSee: createEventVisibility({ config, areas, access }),
    messages,
    /** How many searches this node runs at once (the HTTP search routes run within it). */
    searchBudget: createSearchBudget(searchBudgetLimitsFor(database.dialect, config.database.poolSize)),
    webhooks: createWebhookService({ store: stores.webhooks, log: events, config, clock, boardSecret: webhookSecret }),
    /** What the webhook sender of a serving node needs (see startBoardWorkers). */
    webhookSending: { store: stores.webhooks, boardSecret: webhookSecret },
    /** The message base's store itself, for bulk imports (`importMessages`), which bypass posting. */
    messageStore: stores.messages,
    files,
    health: createHealthService({ database, files }),
    system: createSystemService({
      config,
      clock,
      store: stores.system,
      sessions: stores.sessions,
      users,
      messages,
      files,
    }),
    close: () => database.close(),
  };
}

/** One store per domain: the only code that queries the database. Services get the stores they need. */
function createStores(database: Database, clock: Clock, identityChanges: IdentityChanges) {
  const { db } = database;
  const users = createUserStore(db, identityChanges);
  return {
    users,
    apiKeys: createApiKeyStore(db, identityChanges),
    sessions: createSessionStore(db, identityChanges),
    loginAttempts: createLoginAttemptStore(db),
    system: createSystemStore(db),
    messages: createMessageStore(database, clock),
    files: createFileStore(database, users),
    webhooks: createWebhookStore(db, database.dialect),
  };
}

export type Board = Awaited<ReturnType<typeof openBoard>>;

/**
 * What a node serving `board` runs beside it, both fed by the event log: its live events (see
 * `startLiveEvents`) and the webhook sender. Started with the HTTP app and stopped with it; the
 * CLI never starts them.
 */
export function startBoardWorkers(
  board: Board,
  options: { onError: (error: unknown) => void; streams?: StreamObserver; webhookAttempts?: AttemptObserver },
): LiveEvents {
  const { config, events: log, clock, mayCallerSee } = board;
  const live = startLiveEvents({
    log,
    database: board.database,
    clock,
    mayCallerSee,
    settings: config.events,
    onError: options.onError,
    streamObserver: options.streams,
  });
  const sender = createWebhookSender({
    ...board.webhookSending,
    log,
    users: board.users,
    mayCallerSee,
    config,
    clock,
    onError: options.onError,
    ...(options.webhookAttempts ? { onAttempt: options.webhookAttempts } : {}),
  });
  sender.start(config.events.pollIntervalMs);
  return {
    ...live,
    async stop() {
      await Promise.all([live.stop(), sender.stop()]);
    },
  };
}
