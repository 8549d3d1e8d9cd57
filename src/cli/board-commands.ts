import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildApp } from '../app.js';
import { openBoard } from '../board.js';
import { configFromObject, resolveConfigPath } from '../config/load-config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { boundHeapGrowth } from '../setup/heap-growth.js';
import { type InitResult, initBoard } from '../setup/init-board.js';
import { type RunningBoard, serveBoard, stopOnSignals } from '../setup/serve-board.js';
import { type CommonOptions, loadCliConfig, printResult, withCommonOptions } from './cli-context.js';

function credentialLines(result: InitResult): string[] {
  return [
    `Board created in ${result.dataDir} (configuration: ${result.configPath}).`,
    'Credentials — shown only this once, write them down:',
    ...result.credentials.map(
      (credential) => `  ${credential.role.padEnd(5)}  ${credential.username}  ${credential.password}`,
    ),
  ];
}

/** `postgres, applied 3 migrations` or `sqlite, up to date`: what the node found and did. */
function describeDatabase(running: RunningBoard): string {
  const applied = running.appliedMigrations.length;
  return `${running.dialect}, ${applied === 0 ? 'up to date' : `applied ${applied} migration${applied === 1 ? '' : 's'}`}`;
}

/** How to dial into a terminal server from this machine: a wildcard address is reached on loopback. */
function dialAddress(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '::1';
  return address;
}

/** The `ssh` and `telnet` commands that reach the board, beside the URLs `baud serve` prints. */
function terminalLines(running: RunningBoard, username: string): string[] {
  const { ssh, telnet } = running;
  return [
    ...(ssh
      ? [`  SSH:    ssh -p ${ssh.port} ${username}@${dialAddress(ssh.address)}   (host key ${ssh.fingerprint})`]
      : []),
    ...(telnet ? [`  Telnet: telnet ${dialAddress(telnet.address)} ${telnet.port}`] : []),
  ];
}

/** `baud serve`, `baud init`, `baud db migrate`, `baud openapi`: running and setting up a board. */
export function registerBoardCommands(program: Command): void {
  withCommonOptions(
    program
      .command('serve')
      .description('run the board (HTTP API)')
      .option('--init-demo', 'when no configuration exists yet, create a demo board first'),
  ).action(async (options: CommonOptions & { initDemo?: boolean }) => {
    const configPath = resolveConfigPath({
      ...(options.config ? { configPath: options.config } : {}),
      env: process.env,
    });
    let created: InitResult | null = null;
    if (options.initDemo && !existsSync(configPath)) {
      created = await initBoard({ configPath, env: process.env, demo: true });
    }
    const config = loadCliConfig({ ...options, config: configPath });
    boundHeapGrowth();
    const running = await serveBoard(config);
    stopOnSignals(running, config.contentServers.web, (text) => process.stderr.write(`${text}\n`));
    const { readerUrl } = running;
    const lines = [
      `baud is serving "${config.general.boardName}"`,
      ...(readerUrl ? [`  Reader: ${readerUrl}`] : []),
      `  API:  ${running.url}`,
      `  Docs: ${running.url}/docs`,
      `  Database: ${describeDatabase(running)}`,
      ...terminalLines(
        running,
        created?.credentials.find((credential) => credential.role === 'user')?.username ?? '<username>',
      ),
      ...(running.binkp
        ? [
            `  binkp:  ${running.binkp.address}:${running.binkp.port} for ${Object.entries(config.ftn.networks)
              .map(([name, network]) => `${name} (${network.address})`)
              .join(', ')}`,
          ]
        : []),
      ...(running.metricsUrl ? [`  Metrics: ${running.metricsUrl}`] : []),
      ...running.warnings.map((warning) => `  Warning: ${warning.message}`),
      ...(created ? ['', ...credentialLines(created)] : []),
    ];
    printResult(
      options,
      {
        url: running.url,
        readerUrl,
        docsUrl: `${running.url}/docs`,
        metricsUrl: running.metricsUrl,
        ssh: running.ssh,
        telnet: running.telnet,
        binkp: running.binkp,
        appliedMigrations: running.appliedMigrations,
        warnings: running.warnings,
        credentials: created?.credentials ?? [],
      },
      lines,
    );
  });

  withCommonOptions(
    program
      .command('init')
      .description('create a new board: data directory, config.hjson, database and the sysop account')
      .option('--demo', 'also create a demo user and demo conferences, messages and files')
      .option('--sysop <username>', 'name of the first (sysop) account', 'sysop'),
  ).action(async (options: CommonOptions & { demo?: boolean; sysop: string }) => {
    const configPath = resolveConfigPath({
      ...(options.config ? { configPath: options.config } : {}),
      env: process.env,
    });
    const result = await initBoard({
      configPath,
      env: process.env,
      demo: options.demo ?? false,
      sysopName: options.sysop,
    });
    printResult(options, result, credentialLines(result));
  });

  const db = program.command('db').description('database maintenance');
  withCommonOptions(db.command('migrate').description('apply pending database migrations')).action(
    async (options: CommonOptions) => {
      const config = loadCliConfig(options);
      const database = await openDatabase(config.database.url, { poolSize: 1 });
      try {
        const applied = await migrateToLatest(database);
        printResult(
          options,
          { applied },
          applied.length === 0 ? 'database is up to date' : applied.map((name) => `applied ${name}`),
        );
      } finally {
        await database.close();
      }
    },
  );

  program
    .command('openapi')
    .description('write the OpenAPI 3.1 document generated from the route schemas')
    .option('-o, --output <file>', 'write to this file instead of standard output')
    .action(async (options: { output?: string }) => {
      const document = await generateOpenApiDocument();
      if (options.output) writeFileSync(path.resolve(options.output), document);
      else process.stdout.write(document);
    });
}

/**
 * The OpenAPI document of a default board. It depends only on the route schemas, never on a
 * board's configuration, so the committed docs/openapi.json matches every installation.
 */
export async function generateOpenApiDocument(): Promise<string> {
  const config = configFromObject({
    database: { url: 'sqlite::memory:' },
    logging: { level: 'silent' },
    // The reader's pages are not part of the API (and `npm install` generates this before building them).
    contentServers: { web: { reader: { enabled: false } } },
  });
  const board = await openBoard(config);
  const app = await buildApp(config, { board, logger: false });
  try {
    await app.ready();
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
    await board.close();
  }
}
