import type { Command } from 'commander';
import { CONSOLE } from '../admin/desk-service.js';
import type { UserSummary } from '../users/user-service.js';
import { type CommonOptions, printResult, readStdin, withBoard, withCommonOptions } from './cli-context.js';

interface PasswordOptions extends CommonOptions {
  readonly password?: string;
  readonly passwordStdin?: boolean;
}

async function passwordFrom(options: PasswordOptions): Promise<string> {
  if (options.password !== undefined && options.passwordStdin) {
    throw new Error('give either --password or --password-stdin, not both');
  }
  if (options.password !== undefined) return options.password;
  if (options.passwordStdin) return readStdin();
  throw new Error('a password is required: --password <pw> or --password-stdin');
}

function describeUser(user: UserSummary): string {
  const state = user.disabled ? ' (disabled)' : user.status === 'pending' ? ' (pending)' : '';
  return `${user.userId}\t${user.username}${state}\tgroups: ${user.groups.join(',') || '-'}`;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `baud user …`: accounts, passwords, groups, applications and locks (the desk's, from the console). */
export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('manage user accounts');

  withCommonOptions(
    user
      .command('add <username>')
      .description('create a user (joins users.defaultGroups plus any --group)')
      .option('--password <password>', 'the password (visible in process lists; prefer --password-stdin)')
      .option('--password-stdin', 'read the password from standard input')
      .option('--group <group>', 'add to a group (repeatable)', collect, [])
      .option('--email <address>', 'email address'),
  ).action(async (username: string, options: PasswordOptions & { group: string[]; email?: string }) => {
    const password = await passwordFrom(options);
    const created = await withBoard(options, async (board) => {
      const account = { username, password, groups: options.group, emailAddress: options.email ?? null };
      const { username: createdName } = await board.desk.createAccount(CONSOLE, account);
      return board.users.getUser(createdName);
    });
    printResult(options, created, `created user ${describeUser(created)}`);
  });

  withCommonOptions(
    user
      .command('passwd <username>')
      .description(
        "set a user's password (ends their login sessions, revokes their API keys, removes their SSH keys and deactivates their webhooks)",
      )
      .option('--password <password>', 'the new password')
      .option('--password-stdin', 'read the new password from standard input'),
  ).action(async (username: string, options: PasswordOptions) => {
    const password = await passwordFrom(options);
    const { webhooksDeactivated } = await withBoard(options, (board) =>
      board.credentials.setPassword(username, password),
    );
    printResult(options, { username, passwordChanged: true, webhooksDeactivated }, [
      `password changed for ${username}: login sessions ended, API keys revoked`,
      ...(webhooksDeactivated === 0
        ? []
        : [
            `${webhooksDeactivated} webhook${webhooksDeactivated === 1 ? '' : 's'} deactivated; ` +
              `${username} can check each and switch it on again (PATCH /webhooks/{id} {"active": true})`,
          ]),
    ]);
  });

  const group = user.command('group').description('manage group membership');
  for (const [verb, description] of [
    ['add', 'add a user to a group'],
    ['remove', 'remove a user from a group'],
  ] as const) {
    withCommonOptions(group.command(`${verb} <username> <group>`).description(description)).action(
      async (username: string, groupName: string, options: CommonOptions) => {
        const updated = await withBoard(options, async (board) => {
          await (verb === 'add' ? board.desk.joinGroup : board.desk.leaveGroup)(CONSOLE, username, groupName);
          return board.users.getUser(username);
        });
        printResult(options, updated, describeUser(updated));
      },
    );
  }

  withCommonOptions(user.command('list').description('list users')).action(async (options: CommonOptions) => {
    const users = await withBoard(options, (board) => board.users.listUsers());
    printResult(options, users, users.length === 0 ? 'no users' : users.map(describeUser));
  });

  // `disable` and `enable` are the names these had before the desk had its words for them.
  for (const [verb, alias, description] of [
    ['lock', 'disable', 'lock a user out (ends every session at once; API keys stop working)'],
    ['unlock', 'enable', 'let a locked user in again'],
    ['approve', null, 'approve an application (the user joins users.defaultGroups)'],
  ] as const) {
    const command = user.command(`${verb} <username>`).description(description);
    if (alias) command.alias(alias);
    withCommonOptions(command).action(async (username: string, options: CommonOptions) => {
      const updated = await withBoard(options, async (board) => {
        await board.desk[verb](CONSOLE, username);
        return board.users.getUser(username);
      });
      printResult(options, updated, describeUser(updated));
    });
  }

  withCommonOptions(
    user.command('reject <username>').description('reject an application: the account is deleted, its name free again'),
  ).action(async (username: string, options: CommonOptions) => {
    await withBoard(options, (board) => board.desk.reject(CONSOLE, username));
    printResult(options, { username, rejected: true }, `rejected ${username}: the application is deleted`);
  });

  withCommonOptions(
    user
      .command('totp-reset <username>')
      .description("turn a user's two-factor login off (a lost phone): the next login asks for the password alone"),
  ).action(async (username: string, options: CommonOptions) => {
    await withBoard(options, (board) => board.desk.resetTotp(CONSOLE, username));
    printResult(options, { username, totpEnabled: false }, `two-factor login is off for ${username}`);
  });
}
