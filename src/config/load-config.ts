import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Hjson from 'hjson';
import { Value } from 'typebox/value';
import { parseFtnAddress } from '../ftn/ftn-address.js';
import { ConfigError } from './config-error.js';
import { type ConfigFile, ConfigSchema, fillConfigDefaults, TAG_PATTERN } from './config-schema.js';

/** The validated, path-resolved and frozen configuration every other module reads. */
export type Config = DeepReadonly<ConfigFile> & {
  /** Where the configuration came from; `exists` is false when every value is a default. */
  readonly source: { readonly configPath: string; readonly exists: boolean };
};

type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The environment variables baud reads; nothing else in the code base reads `process.env`. */
export type BaudEnvironment = Readonly<Record<string, string | undefined>>;

export interface LoadConfigOptions {
  /** `--config` from the command line; wins over `BAUD_CONFIG`. */
  readonly configPath?: string;
  readonly env?: BaudEnvironment;
  /** The working directory `--config`, `BAUD_CONFIG` and `BAUD_DATA_DIR` are relative to. */
  readonly cwd?: string;
}

/** Where the configuration file is looked for, without reading it. */
export function resolveConfigPath(options: LoadConfigOptions = {}): string {
  const env = options.env ?? {};
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.configPath ?? env.BAUD_CONFIG;
  if (explicit) return path.resolve(cwd, explicit);
  return path.resolve(cwd, env.BAUD_DATA_DIR ?? './data', 'config.hjson');
}

/**
 * Reads the HJSON configuration file (if present), applies environment overrides, fills
 * defaults, validates and freezes it. Throws `ConfigError` naming the offending key.
 *
 * A missing file is fine when it is the default location (every key has a default); a file
 * named explicitly with `--config` / `BAUD_CONFIG` must exist.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? {};
  const cwd = options.cwd ?? process.cwd();
  const configPath = resolveConfigPath(options);
  const exists = existsSync(configPath);
  if (!exists && (options.configPath ?? env.BAUD_CONFIG)) {
    throw new ConfigError('config.invalid', `configuration file not found: ${configPath}`);
  }
  const raw = exists ? parseHjsonFile(configPath) : {};
  const dataDirOverride = env.BAUD_DATA_DIR ? { BAUD_DATA_DIR: path.resolve(cwd, env.BAUD_DATA_DIR) } : {};
  return configFromObject(raw, {
    env: { ...env, ...dataDirOverride },
    baseDir: path.dirname(configPath),
    configPath,
    exists,
  });
}

/**
 * Validates an already-parsed configuration object (tests build boards this way). Relative
 * paths in it resolve against `baseDir` — for a file, the directory holding it — so a board
 * directory can be moved or started from anywhere.
 */
export function configFromObject(
  raw: unknown,
  context: { env?: BaudEnvironment; baseDir?: string; configPath?: string; exists?: boolean } = {},
): Config {
  const env = context.env ?? {};
  const baseDir = context.baseDir ?? process.cwd();
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError('config.invalid', 'configuration: the top level must be an object');
  }
  const withEnv = applyEnvironmentOverrides(structuredClone(raw) as Record<string, unknown>, env);
  const filled = fillConfigDefaults(withEnv);
  // 'boolean' errors restate an additionalProperties failure less clearly ("schema is false").
  const firstError = Value.Errors(ConfigSchema, filled).find((error) => error.keyword !== 'boolean');
  if (firstError) throw new ConfigError('config.invalid', describeSchemaError(firstError));
  const config = filled as ConfigFile;
  resolveDerivedPaths(config, baseDir);
  checkCrossReferences(config);
  return deepFreeze({
    ...config,
    source: {
      configPath: context.configPath ?? path.join(config.paths.dataDir, 'config.hjson'),
      exists: context.exists ?? false,
    },
  }) as Config;
}

function parseHjsonFile(configPath: string): unknown {
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'config.invalid',
      `cannot read configuration file ${configPath}: ${(error as Error).message}`,
    );
  }
  try {
    return Hjson.parse(text);
  } catch (error) {
    throw new ConfigError(
      'config.invalid',
      `${configPath}: not valid HJSON: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}

function applyEnvironmentOverrides(raw: Record<string, unknown>, env: BaudEnvironment): Record<string, unknown> {
  const set = (keys: string[], value: unknown) => {
    let node = raw;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== 'object' || next === null) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[keys[keys.length - 1] as string] = value;
  };
  if (env.BAUD_DATA_DIR) set(['paths', 'dataDir'], env.BAUD_DATA_DIR);
  if (env.BAUD_DATABASE_URL) set(['database', 'url'], env.BAUD_DATABASE_URL);
  if (env.BAUD_JWT_SECRET) set(['contentServers', 'web', 'restApi', 'jwtSecret'], env.BAUD_JWT_SECRET);
  if (env.BAUD_PORT !== undefined && env.BAUD_PORT !== '') {
    if (!/^\d{1,5}$/.test(env.BAUD_PORT))
      throw new ConfigError('config.invalid', `BAUD_PORT: must be a port number, got "${env.BAUD_PORT}"`);
    set(['contentServers', 'web', 'port'], Number(env.BAUD_PORT));
  }
  return raw;
}

interface SchemaError {
  readonly instancePath: string;
  readonly message: string;
  readonly keyword: string;
  readonly params: unknown;
}

/** Turns `/contentServers/web/port` + "must be <= 65535" into `contentServers.web.port: must be <= 65535`. */
function describeSchemaError(error: SchemaError): string {
  const key = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
  const params = error.params as { additionalProperties?: string[]; requiredProperties?: string[] };
  if (error.keyword === 'additionalProperties' && params.additionalProperties) {
    const unknown = params.additionalProperties.map((name) => (key ? `${key}.${name}` : name));
    return `configuration: unknown key ${unknown.join(', ')}`;
  }
  if (error.keyword === 'required' && params.requiredProperties) {
    const missing = params.requiredProperties.map((name) => (key ? `${key}.${name}` : name));
    return `configuration: missing required key ${missing.join(', ')}`;
  }
  return `configuration: ${key || '(top level)'}: ${error.message}`;
}

function resolveDerivedPaths(config: ConfigFile, baseDir: string): void {
  config.paths.dataDir = path.resolve(baseDir, config.paths.dataDir || '.');
  const url = config.database.url || `sqlite:${path.join(config.paths.dataDir, 'baud.db')}`;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (!file) throw new ConfigError('config.invalid', 'configuration: database.url: sqlite: needs a file path');
    config.database.url = file === ':memory:' ? url : `sqlite:${path.resolve(config.paths.dataDir, file)}`;
  } else if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    config.database.url = url;
  } else {
    throw new ConfigError('config.invalid', 'configuration: database.url: must start with sqlite: or postgres://');
  }
  for (const [tag, directory] of Object.entries(config.fileBase.storageTags)) {
    config.fileBase.storageTags[tag] = path.resolve(config.paths.dataDir, directory);
  }
  const ssh = config.contentServers.ssh;
  ssh.hostKeyPath = path.resolve(config.paths.dataDir, ssh.hostKeyPath || 'ssh_host_ed25519_key');
}

function checkCrossReferences(config: ConfigFile): void {
  const restApi = config.contentServers.web.restApi;
  const filesPublicAccess = restApi.files.publicAccess;
  const tagRecords: [string, object][] = [
    ['messageConferences', config.messageConferences],
    ...Object.entries(config.messageConferences).map(([confTag, conference]): [string, object] => [
      `messageConferences.${confTag}.areas`,
      conference.areas,
    ]),
    ['fileBase.storageTags', config.fileBase.storageTags],
    ['fileBase.areas', config.fileBase.areas],
    ['contentServers.web.restApi.messages.publicAccess', restApi.messages.publicAccess],
  ];
  if (!('include' in filesPublicAccess))
    tagRecords.push(['contentServers.web.restApi.files.publicAccess', filesPublicAccess]);
  for (const [key, record] of tagRecords) {
    for (const tag of Object.keys(record)) {
      if (!TAG_PATTERN.test(tag)) {
        throw new ConfigError(
          'config.invalid',
          `configuration: ${key}: "${tag}" is not a valid tag (1-64 of A-Z a-z 0-9 _ . -)`,
        );
      }
    }
  }
  for (const [areaTag, area] of Object.entries(config.fileBase.areas)) {
    for (const storageTag of area.storageTags) {
      if (!(storageTag in config.fileBase.storageTags)) {
        throw new ConfigError(
          'config.invalid',
          `configuration: fileBase.areas.${areaTag}.storageTags: unknown storage tag "${storageTag}" (define it in fileBase.storageTags)`,
        );
      }
    }
  }
  const confTags = new Map<string, string>();
  for (const [confTag, conference] of Object.entries(config.messageConferences)) {
    for (const areaTag of Object.keys(conference.areas)) {
      const other = confTags.get(areaTag);
      if (other) {
        throw new ConfigError(
          'config.invalid',
          `configuration: messageConferences.${confTag}.areas.${areaTag}: area tag already used in conference "${other}"`,
        );
      }
      confTags.set(areaTag, confTag);
    }
  }
  checkFtnReferences(config, confTags);
  for (const origin of config.contentServers.web.restApi.corsAllowedOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(
        'config.invalid',
        `configuration: contentServers.web.restApi.corsAllowedOrigins: "${origin}" is not "*" or an origin like https://example.org`,
      );
    }
  }
}

/** Every FTN address parses, every echo names a known network and a configured area, once each. */
function checkFtnReferences(config: ConfigFile, areaConferences: ReadonlyMap<string, string>): void {
  const fail = (key: string, problem: string) => new ConfigError('config.invalid', `configuration: ${key}: ${problem}`);
  const checkAddress = (key: string, text: string) => {
    try {
      parseFtnAddress(text);
    } catch (error) {
      throw fail(key, (error as Error).message);
    }
  };
  for (const [name, network] of Object.entries(config.ftn.networks)) {
    checkAddress(`ftn.networks.${name}.address`, network.address);
    checkAddress(`ftn.networks.${name}.hub.address`, network.hub.address);
    for (const [index, downlink] of network.downlinks.entries()) {
      checkAddress(`ftn.networks.${name}.downlinks.${index}.address`, downlink.address);
    }
  }
  const echoes = new Map<string, string>();
  for (const [areaTag, area] of Object.entries(config.ftn.areas)) {
    if (!(area.network in config.ftn.networks)) {
      throw fail(`ftn.areas.${areaTag}.network`, `unknown network "${area.network}" (define it in ftn.networks)`);
    }
    if (!areaConferences.has(areaTag)) {
      throw fail(`ftn.areas.${areaTag}`, `unknown message area "${areaTag}" (define it in messageConferences)`);
    }
    const echo = `${area.network}/${area.echoTag.toUpperCase()}`;
    const other = echoes.get(echo);
    if (other) throw fail(`ftn.areas.${areaTag}.echoTag`, `echo ${area.echoTag} is already carried by area "${other}"`);
    echoes.set(echo, areaTag);
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
