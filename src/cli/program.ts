import { Command } from 'commander';
import { BAUD_VERSION } from '../version.js';
import { registerApiKeyCommands } from './api-key-commands.js';
import { registerAuditCommands } from './audit-commands.js';
import { registerBoardCommands } from './board-commands.js';
import { registerConfigCommands } from './config-commands.js';
import { registerEventCommands } from './event-commands.js';
import { registerFileCommands } from './file-commands.js';
import { registerFtnCommands } from './ftn-commands.js';
import { registerImportCommands } from './import-commands.js';
import { registerMessageCommands } from './message-commands.js';
import { registerReaderCommands } from './reader-commands.js';
import { registerUserCommands } from './user-commands.js';
import { registerWebhookCommands } from './webhook-commands.js';

/** The `baud` command line: one registration call per domain. */
export function createProgram(): Command {
  const program = new Command('baud')
    .description('baud — a bulletin board system server with a JSON REST API')
    .version(BAUD_VERSION)
    .showHelpAfterError()
    .exitOverride();
  registerBoardCommands(program);
  registerConfigCommands(program);
  registerUserCommands(program);
  registerApiKeyCommands(program);
  registerAuditCommands(program);
  registerMessageCommands(program);
  registerFileCommands(program);
  registerWebhookCommands(program);
  registerEventCommands(program);
  registerReaderCommands(program);
  registerImportCommands(program);
  registerFtnCommands(program);
  return program;
}
