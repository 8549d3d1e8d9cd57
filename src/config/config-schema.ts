import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

/**
 * The configuration file's schema. Every key has a default, so an empty file (or none) is a
 * valid board. Paths that are left empty are derived from the data directory by
 * `loadConfig` (see `resolveDerivedPaths`).
 */

const Strict = { additionalProperties: false } as const;

const AcsPair = Type.Object(
  {
    read: Type.Optional(Type.String({ description: 'ACS string for reading; empty = every authenticated user' })),
    write: Type.Optional(Type.String({ description: 'ACS string for posting / uploading' })),
  },
  { ...Strict, default: {} },
);

const FileAcs = Type.Object(
  {
    read: Type.Optional(Type.String()),
    write: Type.Optional(Type.String()),
    download: Type.Optional(Type.String()),
  },
  { ...Strict, default: {} },
);

const GlobList = Type.Array(Type.String({ minLength: 1 }), { default: [] });
const AllowRule = Type.Object({ include: GlobList, exclude: GlobList }, { ...Strict, default: {} });
export type AllowRule = Static<typeof AllowRule>;

/** Conference, area and storage tags: they appear in URLs, so a conservative alphabet. */
export const TAG_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const Tag = Type.String({ pattern: TAG_PATTERN.source });

const MessageArea = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    desc: Type.String({ default: '', maxLength: 1024 }),
    acs: AcsPair,
  },
  Strict,
);

const MessageConference = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    desc: Type.String({ default: '', maxLength: 1024 }),
    acs: AcsPair,
    areas: Type.Record(Tag, MessageArea, { default: {} }),
  },
  Strict,
);

/** A link to another FTN system: its address, where to call it, the session password. */
const FtnHub = Type.Object(
  {
    address: Type.String({ minLength: 1, description: 'zone:net/node[.point] of the hub' }),
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ default: 24554, minimum: 1, maximum: 65535 }),
    password: Type.String({ minLength: 1, maxLength: 40, description: 'The binkp session password the hub gave you' }),
  },
  Strict,
);

/** A system that polls this board as its hub (another board of ours, or anyone's node). */
const FtnDownlink = Type.Object(
  {
    address: Type.String({ minLength: 1 }),
    password: Type.String({ minLength: 1, maxLength: 40 }),
  },
  Strict,
);

/** One FTN network the board belongs to (`ftn.networks.<name>`). */
const FtnNetwork = Type.Object(
  {
    address: Type.String({ minLength: 1, description: 'Our address in this network: zone:net/node[.point]' }),
    hub: FtnHub,
    downlinks: Type.Array(FtnDownlink, { default: [] }),
    pollMinutes: Type.Integer({
      default: 15,
      minimum: 0,
      maximum: 1440,
      description: 'Call the hub this often (0: only `baud ftn poll` and incoming calls)',
    }),
    originLine: Type.String({
      default: '',
      maxLength: 60,
      description: 'The Origin line text; empty = the board name',
    }),
  },
  Strict,
);

/** A baud message area carried as an echo of a network (`ftn.areas.<area tag>`). */
const FtnArea = Type.Object(
  {
    network: Type.String({ minLength: 1 }),
    echoTag: Type.String({ pattern: '^[!-~]{1,60}$', description: "The echo's AREA: tag, e.g. FSX_GEN" }),
  },
  Strict,
);

const FileArea = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    desc: Type.String({ default: '', maxLength: 1024 }),
    storageTags: Type.Array(Tag, { minItems: 1 }),
    acs: FileAcs,
  },
  Strict,
);

export const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;

export const ConfigSchema = Type.Object(
  {
    general: Type.Object(
      {
        boardName: Type.String({ default: 'baud', minLength: 1, maxLength: 128 }),
        sysopName: Type.Optional(Type.String({ maxLength: 64 })),
        closedSystem: Type.Boolean({ default: false }),
      },
      { ...Strict, default: {} },
    ),
    paths: Type.Object(
      {
        dataDir: Type.String({
          default: '',
          description: 'Database, file storage and other state; empty = the directory holding the config file',
        }),
      },
      { ...Strict, default: {} },
    ),
    database: Type.Object(
      {
        url: Type.String({
          default: '',
          description: 'sqlite:<path> or postgres://…; empty = sqlite:<dataDir>/baud.db',
        }),
        poolSize: Type.Integer({ default: 10, minimum: 1, maximum: 200 }),
        // PostgreSQL: a statement running longer is cancelled, so a runaway query cannot hold a
        // pooled connection (and the requests queued behind it) indefinitely. 0: no limit.
        statementTimeoutSeconds: Type.Integer({ default: 30, minimum: 0, maximum: 3600 }),
      },
      { ...Strict, default: {} },
    ),
    logging: Type.Object(
      {
        level: Type.Union(
          [
            Type.Literal('fatal'),
            Type.Literal('error'),
            Type.Literal('warn'),
            Type.Literal('info'),
            Type.Literal('debug'),
            Type.Literal('trace'),
            Type.Literal('silent'),
          ],
          { default: 'info' },
        ),
      },
      { ...Strict, default: {} },
    ),
    // The event log behind GET /events and webhooks (docs/api-notes.md "Live events").
    events: Type.Object(
      {
        /** Events older than this are pruned … */
        retentionDays: Type.Number({ default: 7, exclusiveMinimum: 0, maximum: 3650 }),
        /** … and only this many of the newest are kept. */
        maxEvents: Type.Integer({ default: 100_000, minimum: 100, maximum: 100_000_000 }),
        /** A comment line this often keeps idle streams (and the proxies on their way) open. */
        heartbeatSeconds: Type.Number({ default: 15, exclusiveMinimum: 0, maximum: 3600 }),
        /** Open streams per user (anonymous callers: per address) and per node; more → 429. */
        maxStreamsPerUser: Type.Integer({ default: 5, minimum: 1, maximum: 1000 }),
        maxStreamsPerNode: Type.Integer({ default: 1000, minimum: 1, maximum: 1_000_000 }),
        /** How often a node reads the log when nothing woke it (other nodes' and CLI writes on SQLite). */
        pollIntervalMs: Type.Integer({ default: 1000, minimum: 10, maximum: 60_000 }),
      },
      { ...Strict, default: {} },
    ),
    webhooks: Type.Object(
      {
        /** Let webhooks reach private, loopback and link-local addresses (a board's own network). */
        allowPrivateTargets: Type.Boolean({ default: false }),
        timeoutSeconds: Type.Number({ default: 10, exclusiveMinimum: 0, maximum: 60 }),
        maxPerUser: Type.Integer({ default: 10, minimum: 1, maximum: 1000 }),
        /** Retries: the first after this long, doubling up to retryMaxSeconds, each ±20% … */
        retryBaseSeconds: Type.Number({ default: 10, exclusiveMinimum: 0, maximum: 86_400 }),
        retryMaxSeconds: Type.Number({ default: 3600, exclusiveMinimum: 0, maximum: 86_400 }),
        /** … until the webhook has failed this long, or this many times in a row: then it is deactivated. */
        giveUpAfterHours: Type.Number({ default: 24, exclusiveMinimum: 0, maximum: 720 }),
        maxConsecutiveFailures: Type.Integer({ default: 50, minimum: 1, maximum: 10_000 }),
        /** Deliveries one node sends at once (to different webhooks). */
        concurrency: Type.Integer({ default: 4, minimum: 1, maximum: 256 }),
      },
      { ...Strict, default: {} },
    ),
    // Prometheus metrics on their own listener, never on the public port; off unless enabled.
    metrics: Type.Object(
      {
        enabled: Type.Boolean({ default: false }),
        address: Type.String({ default: '127.0.0.1' }),
        port: Type.Integer({ default: 9464, minimum: 0, maximum: 65535 }),
      },
      { ...Strict, default: {} },
    ),
    // Private mail (docs/api-notes.md "Private mail"): new mails one sender may send per window,
    // counted in the database so the limit holds across every node.
    mail: Type.Object(
      {
        maxSendsPerWindow: Type.Integer({ default: 30, minimum: 1, maximum: 1_000_000 }),
        sendWindowSeconds: Type.Integer({ default: 600, minimum: 1, maximum: 86_400 }),
      },
      { ...Strict, default: {} },
    ),
    users: Type.Object(
      {
        defaultGroups: Type.Array(Type.String({ minLength: 1 }), { default: ['users'] }),
        passwordMinLength: Type.Integer({ default: 8, minimum: 1, maximum: 1024 }),
        // How people join (POST /auth/register): `open` (active at once), `approval` (pending until
        // a sysop approves) or `closed`. `general.closedSystem: true` means closed whatever this says.
        registration: Type.Union([Type.Literal('open'), Type.Literal('approval'), Type.Literal('closed')], {
          default: 'approval',
        }),
      },
      { ...Strict, default: {} },
    ),
    contentServers: Type.Object(
      {
        web: Type.Object(
          {
            address: Type.String({ default: '127.0.0.1' }),
            port: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
            trustProxy: Type.Union([Type.Boolean(), Type.String(), Type.Array(Type.String())], { default: false }),
            requestTimeoutSeconds: Type.Integer({ default: 600, minimum: 1 }),
            headersTimeoutSeconds: Type.Integer({ default: 30, minimum: 1 }),
            keepAliveTimeoutSeconds: Type.Integer({ default: 10, minimum: 1 }),
            shutdownTimeoutSeconds: Type.Integer({ default: 30, minimum: 1 }),
            // Seconds a stopping node keeps serving while /_baud/health/ready says 503, so a load
            // balancer stops sending it requests before it closes (its check interval × fall count).
            shutdownDrainSeconds: Type.Integer({ default: 0, minimum: 0, maximum: 300 }),
            bodyLimitBytes: Type.Integer({ default: 1024 * 1024, minimum: 1024, maximum: 16 * 1024 * 1024 }),
            bodyTimeoutSeconds: Type.Integer({
              default: 10,
              minimum: 1,
              description: 'Time a client has to send a whole JSON body once its headers arrived (uploads excluded)',
            }),
            uploadIdleTimeoutSeconds: Type.Integer({
              default: 60,
              minimum: 1,
              description: 'An upload that sends no byte for this long is cut off',
            }),
            publicCacheSeconds: Type.Integer({
              default: 10,
              minimum: 0,
              maximum: 86400,
              description:
                'Shared caches may keep a public answer to an anonymous caller this long (0: keep it but revalidate every time)',
            }),
            // The web reader at `/` (built on the REST API, so it needs the API on too).
            reader: Type.Object({ enabled: Type.Boolean({ default: true }) }, { ...Strict, default: {} }),
            restApi: Type.Object(
              {
                enabled: Type.Boolean({ default: true }),
                corsAllowedOrigins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
                jwtSecret: Type.Optional(Type.String({ minLength: 32 })),
                secureCookies: Type.Boolean({ default: false }),
                enigmaCompat: Type.Boolean({
                  default: false,
                  description:
                    'The API also answers under /_enig/api/v1 with X-Enigma-API-Key and the enigma_refresh cookie, for ENiGMA½ clients',
                }),
                refreshFamilyMaxAgeDays: Type.Integer({ default: 90, minimum: 1 }),
                refreshGraceSeconds: Type.Integer({
                  default: 10,
                  minimum: 0,
                  maximum: 60,
                  description: 'A just-rotated refresh token still answers with the same new pair this long',
                }),
                maxSessionsPerUser: Type.Integer({
                  default: 10,
                  minimum: 1,
                  maximum: 1000,
                  description: 'Live login sessions per user; a new login ends the oldest beyond this',
                }),
                loginThrottle: Type.Object(
                  {
                    maxFailures: Type.Integer({ default: 10, minimum: 1 }),
                    windowSeconds: Type.Integer({ default: 900, minimum: 1 }),
                  },
                  { ...Strict, default: {} },
                ),
                system: Type.Object(
                  {
                    public: Type.Object(
                      {
                        info: Type.Boolean({ default: true }),
                        nodes: Type.Boolean({ default: false }),
                        'last-callers': Type.Boolean({ default: true }),
                        stats: Type.Boolean({ default: true }),
                      },
                      { ...Strict, default: {} },
                    ),
                  },
                  { ...Strict, default: {} },
                ),
                messages: Type.Object(
                  { publicAccess: Type.Record(Tag, AllowRule, { default: {} }) },
                  { ...Strict, default: {} },
                ),
                files: Type.Object(
                  {
                    publicAccess: Type.Union(
                      [AllowRule, Type.Record(Tag, AllowRule, { additionalProperties: false })],
                      {
                        default: {},
                      },
                    ),
                  },
                  { ...Strict, default: {} },
                ),
              },
              { ...Strict, default: {} },
            ),
          },
          { ...Strict, default: {} },
        ),
        // The binkp mailer answering calls of hubs and downlinks (FTS-1026).
        binkp: Type.Object(
          {
            enabled: Type.Boolean({ default: false }),
            address: Type.String({ default: '0.0.0.0' }),
            port: Type.Integer({ default: 24554, minimum: 0, maximum: 65535 }),
          },
          { ...Strict, default: {} },
        ),
        // Terminal callers over SSH (the board's own accounts; a host key made at first start).
        ssh: Type.Object(
          {
            enabled: Type.Boolean({ default: false }),
            address: Type.String({ default: '127.0.0.1' }),
            port: Type.Integer({ default: 2222, minimum: 0, maximum: 65535 }),
            hostKeyPath: Type.String({
              default: '',
              description:
                'The SSH host key (OpenSSH format); empty = <dataDir>/ssh_host_ed25519_key, made at first start',
            }),
          },
          { ...Strict, default: {} },
        ),
        // Terminal callers over telnet: no encryption, so passwords cross the network readable.
        telnet: Type.Object(
          {
            enabled: Type.Boolean({ default: false }),
            address: Type.String({ default: '127.0.0.1' }),
            port: Type.Integer({ default: 2323, minimum: 0, maximum: 65535 }),
          },
          { ...Strict, default: {} },
        ),
        // What SSH and telnet callers share: limits, timeouts, the welcome screen.
        terminal: Type.Object(
          {
            idleTimeoutSeconds: Type.Integer({
              default: 600,
              minimum: 10,
              description: 'A caller who types nothing for this long is said goodbye to and disconnected',
            }),
            loginTimeoutSeconds: Type.Integer({
              default: 60,
              minimum: 5,
              maximum: 600,
              description: 'Time a connection has to finish its handshake and log in',
            }),
            maxConnectionsPerNode: Type.Integer({ default: 500, minimum: 1, maximum: 100_000 }),
            maxConnectionsPerAddress: Type.Integer({ default: 10, minimum: 1, maximum: 10_000 }),
            maxUnauthenticatedPerAddress: Type.Integer({
              default: 3,
              minimum: 1,
              maximum: 1000,
              description: 'Connections from one address that have not logged in yet',
            }),
            welcomePauseSeconds: Type.Integer({
              default: 0,
              minimum: 0,
              maximum: 60,
              description: 'The welcome screen stays this long before the main menu (0: straight on)',
            }),
          },
          { ...Strict, default: {} },
        ),
      },
      { ...Strict, default: {} },
    ),
    messageConferences: Type.Record(Tag, MessageConference, { default: {} }),
    // FidoNet-technology networks: echomail and netmail over binkp (docs/operator-guide.md "Joining a network").
    ftn: Type.Object(
      {
        networks: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' }), FtnNetwork, { default: {} }),
        areas: Type.Record(Tag, FtnArea, { default: {} }),
      },
      { ...Strict, default: {} },
    ),
    fileBase: Type.Object(
      {
        maxUploadBytes: Type.Integer({ default: MAX_UPLOAD_BYTES, minimum: 1, maximum: MAX_UPLOAD_BYTES }),
        storageTags: Type.Record(Tag, Type.String({ minLength: 1 }), { default: {} }),
        areas: Type.Record(Tag, FileArea, { default: {} }),
      },
      { ...Strict, default: {} },
    ),
  },
  Strict,
);

export type ConfigFile = Static<typeof ConfigSchema>;

/**
 * TypeBox's `Value.Default` does not descend into records (conferences, areas, allowlist
 * rules), so their members' defaults are filled here, before validation.
 */
export function fillConfigDefaults(raw: unknown): unknown {
  const config = Value.Default(ConfigSchema, raw) as Record<string, unknown>;
  const mapRecord = (record: unknown, fill: (value: unknown) => unknown) => {
    if (!isPlainObject(record)) return;
    for (const [key, value] of Object.entries(record)) record[key] = fill(value);
  };
  mapRecord(config.messageConferences, (conference) => {
    const filled = Value.Default(MessageConference, conference);
    if (isPlainObject(filled)) mapRecord(filled.areas, (area) => Value.Default(MessageArea, area));
    return filled;
  });
  const ftn = config.ftn;
  if (isPlainObject(ftn)) {
    mapRecord(ftn.networks, (network) => {
      const filled = Value.Default(FtnNetwork, network);
      if (isPlainObject(filled) && isPlainObject(filled.hub)) filled.hub = Value.Default(FtnHub, filled.hub);
      return filled;
    });
  }
  const fileBase = config.fileBase;
  if (isPlainObject(fileBase)) mapRecord(fileBase.areas, (area) => Value.Default(FileArea, area));
  const restApi = (config.contentServers as { web?: { restApi?: Record<string, unknown> } } | undefined)?.web?.restApi;
  const messages = restApi?.messages;
  if (isPlainObject(messages)) mapRecord(messages.publicAccess, (rule) => Value.Default(AllowRule, rule));
  const files = restApi?.files;
  if (isPlainObject(files) && isPlainObject(files.publicAccess)) {
    const rule = files.publicAccess;
    if ('include' in rule || 'exclude' in rule) files.publicAccess = Value.Default(AllowRule, rule);
    else mapRecord(rule, (perTag) => Value.Default(AllowRule, perTag));
  }
  return config;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
