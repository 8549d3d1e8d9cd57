import type { Command } from 'commander';
import type { ApiKeyRecord } from '../auth/api-key-service.js';
import { BadRequestError } from '../errors.js';
import { type CommonOptions, printResult, withBoard, withCommonOptions } from './cli-context.js';

function describeKey(key: ApiKeyRecord): string {
  const state = key.revokedAt ? `revoked ${key.revokedAt}` : `last used ${key.lastUsedAt ?? 'never'}`;
  return `${key.id}\t${key.username}\t${key.scope}\t${key.label}\tcreated ${key.createdAt}\t${state}`;
}

function parseKeyId(text: string): number {
  if (!/^[1-9]\d{0,15}$/.test(text))
    throw new BadRequestError('api-key.invalid-id', `"${text}" is not an API key id (a positive integer)`);
  return Number(text);
}

/** The `rest` command group, created once whoever registers under it first. */
function restCommand(program: Command): Command {
  return (
    program.commands.find((command) => command.name() === 'rest') ??
    program.command('rest').description('manage the REST API')
  );
}

/** `baud rest api-key generate | list | revoke`: keys for bots and integrations. */
export function registerApiKeyCommands(program: Command): void {
  const apiKey = restCommand(program).command('api-key').description('manage API keys (shown once, stored hashed)');

  withCommonOptions(
    apiKey
      .command('generate <username>')
      .description('create an API key for a user; the key is printed once and cannot be shown again')
      .requiredOption('--label <text>', 'what the key is for')
      .requiredOption('--scope <scope>', 'read, write or read,write'),
  ).action(async (username: string, options: CommonOptions & { label: string; scope: string }) => {
    const generated = await withBoard(options, (board) =>
      board.apiKeys.generate(username, options.label, options.scope),
    );
    printResult(options, generated, [
      describeKey(generated),
      `key: ${generated.key}`,
      'Store this key now: it is not kept and cannot be shown again.',
    ]);
  });

  withCommonOptions(apiKey.command('list [username]').description('list API keys (never the keys themselves)')).action(
    async (username: string | undefined, options: CommonOptions) => {
      const keys = await withBoard(options, (board) => board.apiKeys.list(username));
      printResult(options, keys, keys.length === 0 ? 'no API keys' : keys.map(describeKey));
    },
  );

  withCommonOptions(apiKey.command('revoke <id>').description('revoke an API key at once')).action(
    async (id: string, options: CommonOptions) => {
      const keyId = parseKeyId(id);
      const revoked = await withBoard(options, (board) => board.apiKeys.revoke(keyId));
      printResult(options, revoked, `revoked ${describeKey(revoked)}`);
    },
  );
}
