import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { configFromObject, loadConfig, resolveConfigPath } from '../../src/config/load-config.js';

/** A hub as the operator guide's fsxNet example configures it. */
const FSX_HUB = { address: '21:1/100', host: 'hub.example.org', password: 'secret' };

describe('loadConfig', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (text: string) => {
    const file = path.join(dir, 'config.hjson');
    writeFileSync(file, text);
    return file;
  };

  it('gives every key a default when no file exists at the default location', () => {
    const config = loadConfig({ cwd: dir, env: {} });
    expect(config.source).toEqual({ configPath: path.join(dir, 'data', 'config.hjson'), exists: false });
    expect(config.paths.dataDir).toBe(path.join(dir, 'data'));
    expect(config.database.url).toBe(`sqlite:${path.join(dir, 'data', 'baud.db')}`);
    expect(config.contentServers.web).toMatchObject({ address: '127.0.0.1', port: 8080, trustProxy: false });
    expect(config.contentServers.web.restApi).toMatchObject({
      enabled: true,
      corsAllowedOrigins: [],
      system: { public: { info: true, nodes: false, 'last-callers': true, stats: true } },
    });
    expect(config.fileBase.maxUploadBytes).toBe(512 * 1024 * 1024);
    expect(config.users).toEqual({ defaultGroups: ['users'], passwordMinLength: 8, registration: 'approval' });
    expect(Object.isFrozen(config.contentServers.web.restApi)).toBe(true);
  });

  it('reads HJSON with comments and unquoted strings, resolving paths against the file', () => {
    const file = write(`{
      # a comment
      general: { boardName: "My Board" }
      database: { url: "sqlite:board.db" }
      fileBase: { storageTags: { uploads: "files/up" }, areas: { up: { name: "Up", storageTags: ["uploads"] } } }
    }`);
    const config = loadConfig({ configPath: file, env: {} });
    expect(config.general.boardName).toBe('My Board');
    expect(config.database.url).toBe(`sqlite:${path.join(dir, 'board.db')}`);
    expect(config.fileBase.storageTags.uploads).toBe(path.join(dir, 'files', 'up'));
    expect(config.fileBase.areas.up).toMatchObject({ name: 'Up', desc: '', acs: {} });
  });

  it('fills defaults inside conferences and areas', () => {
    const config = configFromObject({
      messageConferences: { local: { name: 'Local', areas: { general: { name: 'General' } } } },
    });
    expect(config.messageConferences.local).toEqual({
      name: 'Local',
      desc: '',
      acs: {},
      areas: { general: { name: 'General', desc: '', acs: {} } },
    });
  });

  it('applies environment overrides', () => {
    const config = loadConfig({
      cwd: dir,
      env: {
        BAUD_DATA_DIR: 'state',
        BAUD_PORT: '9999',
        BAUD_DATABASE_URL: 'postgres://db.example/baud',
        BAUD_JWT_SECRET: 'x'.repeat(32),
      },
    });
    expect(config.paths.dataDir).toBe(path.join(dir, 'state'));
    expect(config.source.configPath).toBe(path.join(dir, 'state', 'config.hjson'));
    expect(config.contentServers.web.port).toBe(9999);
    expect(config.database.url).toBe('postgres://db.example/baud');
    expect(config.contentServers.web.restApi.jwtSecret).toBe('x'.repeat(32));
  });

  it('prefers --config over BAUD_CONFIG over the data directory', () => {
    expect(resolveConfigPath({ cwd: '/b', configPath: 'a.hjson', env: { BAUD_CONFIG: '/c.hjson' } })).toBe(
      '/b/a.hjson',
    );
    expect(resolveConfigPath({ cwd: '/b', env: { BAUD_CONFIG: '/c.hjson', BAUD_DATA_DIR: '/d' } })).toBe('/c.hjson');
    expect(resolveConfigPath({ cwd: '/b', env: { BAUD_DATA_DIR: '/d' } })).toBe('/d/config.hjson');
  });

  it.each([
    [{ contentServers: { web: { port: 70000 } } }, 'configuration: contentServers.web.port: must be <= 65535'],
    [{ contentServers: { web: { port: 'http' } } }, 'configuration: contentServers.web.port: must be integer'],
    [
      { contentServers: { web: { restApi: { enabled: 'yes' } } } },
      'configuration: contentServers.web.restApi.enabled: must be boolean',
    ],
    [{ general: { boardname: 'x' } }, 'configuration: unknown key general.boardname'],
    [
      { messageConferences: { local: { areas: {} } } },
      'configuration: missing required key messageConferences.local.name',
    ],
    [
      { messageConferences: { 'bad tag': { name: 'x' } } },
      'configuration: messageConferences: "bad tag" is not a valid tag (1-64 of A-Z a-z 0-9 _ . -)',
    ],
    [
      { fileBase: { areas: { up: { name: 'Up', storageTags: ['nowhere'] } } } },
      'configuration: fileBase.areas.up.storageTags: unknown storage tag "nowhere" (define it in fileBase.storageTags)',
    ],
    [
      { fileBase: { maxUploadBytes: 600 * 1024 * 1024 } },
      'configuration: fileBase.maxUploadBytes: must be <= 536870912',
    ],
    [{ database: { url: 'mysql://x' } }, 'configuration: database.url: must start with sqlite: or postgres://'],
    [
      { contentServers: { web: { restApi: { corsAllowedOrigins: ['example.org'] } } } },
      'configuration: contentServers.web.restApi.corsAllowedOrigins: "example.org" is not "*" or an origin like https://example.org',
    ],
    [
      { contentServers: { web: { restApi: { jwtSecret: 'short' } } } },
      'configuration: contentServers.web.restApi.jwtSecret: must not have fewer than 32 characters',
    ],
    [
      { ftn: { networks: { fsxnet: { address: '21:1', hub: FSX_HUB } } } },
      'configuration: ftn.networks.fsxnet.address: "21:1" is not an FTN address (zone:net/node[.point][@domain])',
    ],
    [
      { ftn: { networks: { fsxnet: { address: '21:1/999', hub: { ...FSX_HUB, address: 'hub' } } } } },
      'configuration: ftn.networks.fsxnet.hub.address: "hub" is not an FTN address (zone:net/node[.point][@domain])',
    ],
    [
      { ftn: { networks: { fsxnet: { address: '21:1/999', hub: { address: '21:1/100', host: 'hub.example.org' } } } } },
      'configuration: missing required key ftn.networks.fsxnet.hub.password',
    ],
    [
      { ftn: { areas: { general: { network: 'fsxnet', echoTag: 'FSX_GEN' } } } },
      'configuration: ftn.areas.general.network: unknown network "fsxnet" (define it in ftn.networks)',
    ],
    [
      {
        ftn: {
          networks: { fsxnet: { address: '21:1/999', hub: FSX_HUB } },
          areas: { nowhere: { network: 'fsxnet', echoTag: 'FSX_GEN' } },
        },
      },
      'configuration: ftn.areas.nowhere: unknown message area "nowhere" (define it in messageConferences)',
    ],
  ])('rejects %j naming the key', (raw, message) => {
    expect(() => configFromObject(raw)).toThrow(new ConfigError('config.invalid', message));
  });

  it('rejects invalid HJSON with the file name', () => {
    const file = write('{ general: { boardName: "x" ');
    expect(() => loadConfig({ configPath: file, env: {} })).toThrow(/config\.hjson: not valid HJSON/);
  });

  it('rejects a missing file that was named explicitly', () => {
    expect(() => loadConfig({ configPath: path.join(dir, 'nope.hjson'), env: {} })).toThrow(
      /configuration file not found/,
    );
  });

  it('rejects a BAUD_PORT that is not a number', () => {
    expect(() => loadConfig({ cwd: dir, env: { BAUD_PORT: 'eighty' } })).toThrow(
      'BAUD_PORT: must be a port number, got "eighty"',
    );
  });
});

describe('FTN networks', () => {
  it('fills in the defaults of a network and its hub, and accepts an echo of a configured area', () => {
    const config = configFromObject({
      messageConferences: { local: { name: 'Local', areas: { fsx_gen: { name: 'fsxNet General' } } } },
      ftn: {
        networks: { fsxnet: { address: '21:1/999', hub: FSX_HUB } },
        areas: { fsx_gen: { network: 'fsxnet', echoTag: 'FSX_GEN' } },
      },
    });
    expect(config.ftn.networks.fsxnet).toEqual({
      address: '21:1/999',
      hub: { ...FSX_HUB, port: 24554 },
      downlinks: [],
      pollMinutes: 15,
      originLine: '',
    });
    expect(config.contentServers.binkp).toEqual({ enabled: false, address: '0.0.0.0', port: 24554 });
  });

  it('refuses one echo carried by two areas', () => {
    expect(() =>
      configFromObject({
        messageConferences: { local: { name: 'Local', areas: { a: { name: 'A' }, b: { name: 'B' } } } },
        ftn: {
          networks: { fsxnet: { address: '21:1/999', hub: FSX_HUB } },
          areas: { a: { network: 'fsxnet', echoTag: 'FSX_GEN' }, b: { network: 'fsxnet', echoTag: 'fsx_gen' } },
        },
      }),
    ).toThrow(
      new ConfigError(
        'config.invalid',
        'configuration: ftn.areas.b.echoTag: echo fsx_gen is already carried by area "a"',
      ),
    );
  });
});
