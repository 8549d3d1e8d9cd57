import { type AreaAccess, createAreaAccess } from './access/area-access.js';
import { type BoardAreas, compileBoardAreas } from './access/board-areas.js';
import { createDeskService, type DeskService } from './admin/desk-service.js';
import { createAuditStore } from './audit/audit-store.js';
import { type AccessTokens, createAccessTokens } from './auth/access-tokens.js';
import type { ApiKeyService } from './auth/api-key-service.js';
import { createApiKeyStore } from './auth/api-key-store.js';
import type { AuthService } from './auth/auth-service.js';
import type { CallerService } from './auth/caller-service.js';
import type { CredentialService } from './auth/credential-service.js';
import { createIdentityServices } from './auth/identity-services.js';
import { createLoginAttemptStore } from './auth/login-attempt-store.js';
import type { LoginSessionService } from './auth/login-session-service.js';
import type { RegistrationService } from './auth/registration-service.js';
import type { SessionActivityService } from './auth/session-activity-service.js';
import { createSessionStore } from './auth/session-store.js';
import type { SshKeyService } from './auth/ssh-key-service.js';
import { createSshKeyStore } from './auth/ssh-key-store.js';
import { createTwoFactorKeys, TWO_FACTOR_SECRET_SETTING } from './auth/two-factor-keys.js';
import type { TwoFactorService } from './auth/two-factor-service.js';
import { createTwoFactorStore } from './auth/two-factor-store.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config/load-config.js';
import { type Database, type Db, migrateToLatest, openDatabase } from './db/database.js';
import { loadOrCreateSecret } from './db/settings-store.js';
import { createEventLog, type EventLog } from './events/event-log.js';
import { createEventVisibility, type EventVisibility } from './events/event-visibility.js';
import { type LiveEvents, startLiveEvents } from './events/live-events.js';
import type { StreamObserver } from './events/stream-registry.js';
import { type FileService, openFileBase } from './files/file-service.js';
import { createFileStore } from './files/file-store.js';
import { createFtnLinkStore } from './ftn/ftn-link-store.js';
import { ftnNetworksOf } from './ftn/ftn-networks.js';
import { createFtnObserverRelay } from './ftn/ftn-observer.js';
import { createFtnScanner } from './ftn/ftn-scanner.js';
import { createFtnService, type FtnService } from './ftn/ftn-service.js';
import { createFtnStore } from './ftn/ftn-store.js';
import { createFtnTosser } from './ftn/ftn-tosser.js';
import { createIdentityChanges, type IdentityChanges } from './identity-changes.js';
import { createMailDelivery } from './mail/mail-delivery.js';
import { createMailService, type MailService } from './mail/mail-service.js';
import { createMailStore } from './mail/mail-store.js';
import { createMessageService, type MessageService } from './messages/message-service.js';
import { createMessageStore, type MessageStore } from './messages/message-store.js';
import { registerRelevanceFunction } from './search/full-text-index.js';
import { createSearchBudget, type SearchBudget, searchBudgetLimitsFor } from './search/search-budget.js';
import { createHealthService, type HealthService } from './system/health-service.js';
import { createSystemService, type SystemService } from './system/system-service.js';
import { createSystemStore } from './system/system-store.js';
import { createProfileService, type ProfileService } from './users/profile-service.js';
import { createUserService, type UserService } from './users/user-service.js';
import { createUserStore } from './users/user-store.js';
import { BAUD_VERSION } from './version.js';
import { type AttemptObserver, createWebhookSender } from './webhooks/webhook-sender.js';
import { createWebhookService, type WebhookService } from './webhooks/webhook-service.js';
import { createWebhookStore, type WebhookStore } from './webhooks/webhook-store.js';

/**
 * A running board: configuration, database, clock and the domain services built on them.
 * The HTTP app and the CLI both work through one of these, so they cannot disagree on a rule.
 */
export interface Board {
  readonly config: Config;
  readonly database: Database;
  /** For tests and benchmarks that look at rows directly; the HTTP app and the CLI use services. */
  readonly db: Db;
  readonly clock: Clock;
  /** The key the HTTP edge signs its list cursors with (see createCursorCodec): the same on every node. */
  readonly cursorSecret: Buffer;
  /** Signs and verifies access tokens (JWTs). */
  readonly accessTokens: AccessTokens;
  /** Logins, refreshes and logouts. */
  readonly auth: AuthService;
  readonly apiKeys: ApiKeyService;
  /** Who a request's credential stands for. */
  readonly callers: CallerService;
  /** Passwords, and what a new one ends (sessions, API keys, SSH keys, webhooks). */
  readonly credentials: CredentialService;
  /** A user's own login sessions (`/users/me/sessions`). */
  readonly loginSessions: LoginSessionService;
  readonly profiles: ProfileService;
  /** When the callers of each session were last seen (the node list). */
  readonly sessionActivity: SessionActivityService;
  readonly users: UserService;
  /** People applying for an account (`POST /auth/register`). */
  readonly registration: RegistrationService;
  /** Two-factor login (TOTP): enrolment, turning it off, what a login asks. */
  readonly twoFactor: TwoFactorService;
  /** The SSH public keys users log in with at the terminal (`/users/me/ssh-keys`, the SSH handshake). */
  readonly sshKeys: SshKeyService;
  /** The sysop's desk: accounts to approve, reject, lock, unlock and group; the audit log. */
  readonly desk: DeskService;
  /** The configured conferences and areas, their ACS compiled. */
  readonly areas: BoardAreas;
  /** Who may use which area. */
  readonly access: AreaAccess;
  /** The durable event log every change is recorded in. */
  readonly events: EventLog;
  /** Who may see which event. */
  readonly mayCallerSee: EventVisibility;
  readonly messages: MessageService;
  /** Private mail between two users, and their block lists; netmail to other systems. */
  readonly mail: MailService;
  /** The FTN networks: tossing, scanning, netmail, the operator's figures. */
  readonly ftn: FtnService;
  /** How many searches this node runs at once (the message and file services search within it). */
  readonly searchBudget: SearchBudget;
  readonly webhooks: WebhookService;
  /** What the webhook sender of a serving node needs (see startBoardWorkers). */
  readonly webhookSending: { readonly store: WebhookStore; readonly boardSecret: Buffer };
  /** The message base's store itself, for bulk imports (`importMessages`), which bypass posting. */
  readonly messageStore: MessageStore;
  readonly files: FileService;
  /** Liveness and readiness of this node. */
  readonly health: HealthService;
  /** Board information, statistics, nodes and last callers. */
  readonly system: SystemService;
  /** The migrations applied when the board was opened (none when opened without migrating). */
  readonly appliedMigrations: readonly string[];
  /** Closes the database. */
  close(): Promise<void>;
}

/**
 * Opens the board of `config`: its database (migrated unless `migrate` is false) and every service
 * on it. `forBulkWrites` puts a SQLite connection on a worker thread of its own (see
 * OpenDatabaseOptions.isSqliteOnWorkerThread): for the commands that write in bulk.
 */
export async function openBoard(
  config: Config,
  options: { clock?: Clock; migrate?: boolean; forBulkWrites?: boolean } = {},
): Promise<Board> {
  const clock = options.clock ?? systemClock;
  // ACS errors are configuration errors: find them before touching the database.
  const areas = compileBoardAreas(config);
  const { url, poolSize, statementTimeoutSeconds } = config.database;
  const database = await openDatabase(url, {
    poolSize,
    statementTimeoutSeconds,
    timeQueries: config.metrics.enabled,
    onSqliteOpen: registerRelevanceFunction,
    isSqliteOnWorkerThread: options.forBulkWrites ?? false,
  });
  try {
    const appliedMigrations = (options.migrate ?? true) ? await migrateToLatest(database) : [];
    return { ...(await assembleBoard(config, database, clock, areas)), appliedMigrations };
  } catch (error) {
    await database.close();
    throw error;
  }
}

async function assembleBoard(
  config: Config,
  database: Database,
  clock: Clock,
  areas: BoardAreas,
): Promise<Omit<Board, 'appliedMigrations'>> {
  const { db } = database;
  const configuredSecret = config.contentServers.web.restApi.jwtSecret;
  const jwtSecret = configuredSecret
    ? new TextEncoder().encode(configuredSecret)
    : await loadOrCreateSecret(db, 'jwtSecret');
  const cursorSecret = await loadOrCreateSecret(db, 'cursorSecret');
  const refreshSuccessorSecret = await loadOrCreateSecret(db, 'refreshSuccessorSecret');
  const webhookSecret = await loadOrCreateSecret(db, 'webhookSecret');
  const twoFactorKeys = createTwoFactorKeys(await loadOrCreateSecret(db, TWO_FACTOR_SECRET_SETTING));
  const identityChanges = createIdentityChanges();
  const stores = createStores(database, clock, identityChanges);
  const events = createEventLog({ database, clock, ...config.events, onPrune: stores.webhooks.pruneDeliveries });
  const users = createUserService({ store: stores.users, config, clock });
  const access = createAreaAccess({ config, areas, clock });
  const identity = createIdentityServices({
    config,
    clock,
    stores,
    users,
    accessTokens: createAccessTokens(jwtSecret, clock),
    refreshSuccessorSecret,
    twoFactorKeys,
    identityChanges,
    events,
  });
  const searchBudget = createSearchBudget(searchBudgetLimitsFor(database.dialect, config.database.poolSize));
  const messages = createMessageService({
    store: stores.messages,
    users: stores.users,
    clock,
    areas,
    access,
    events,
    searchBudget,
  });
  const files = await openFileBase({ store: stores.files, config, clock, areas, access, events, searchBudget });
  const ftnObserver = createFtnObserverRelay();
  const ftn = createFtnService({
    networks: ftnNetworksOf(config),
    store: stores.ftn,
    tosser: createFtnTosser({
      store: stores.ftn,
      messages: stores.messages,
      mail: createMailDelivery({
        store: stores.mail,
        users: stores.users,
        events,
        sysopName: config.general.sysopName,
      }),
      events,
      areas,
      clock,
      observer: ftnObserver,
    }),
    scanner: createFtnScanner({
      store: stores.ftn,
      messages: stores.messages,
      clock,
      tearLine: `baud ${BAUD_VERSION}`,
      observer: ftnObserver,
    }),
    observer: ftnObserver,
    events,
    database,
    links: createFtnLinkStore(db, { clock }),
    binkp: config.contentServers.binkp,
    system: {
      name: config.general.boardName,
      sysop: config.general.sysopName ?? 'Sysop',
      location: '',
    },
  });
  await ftn.prepare();
  return {
    config,
    database,
    db,
    clock,
    cursorSecret,
    ...identity,
    users,
    desk: createDeskService({
      config,
      clock,
      stores,
      credentials: identity.credentials,
      twoFactor: identity.twoFactor,
    }),
    profiles: createProfileService({ store: stores.users, twoFactor: identity.twoFactor }),
    areas,
    access,
    events,
    mayCallerSee: createEventVisibility({ config, areas, access }),
    messages,
    mail: createMailService({
      store: stores.mail,
      messages: stores.messages,
      users: stores.users,
      windows: stores.loginAttempts,
      events,
      clock,
      searchBudget,
      limits: config.mail,
      netmail: ftn.netmail,
    }),
    ftn,
    searchBudget,
    webhooks: createWebhookService({ store: stores.webhooks, log: events, config, clock, boardSecret: webhookSecret }),
    webhookSending: { store: stores.webhooks, boardSecret: webhookSecret },
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
    mail: createMailStore(db, database.dialect),
    files: createFileStore(database, users),
    webhooks: createWebhookStore(db, database.dialect),
    audit: createAuditStore(db),
    twoFactor: createTwoFactorStore(db),
    sshKeys: createSshKeyStore(db),
    ftn: createFtnStore(db),
  };
}

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
