import type { Command } from 'commander';
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
  const state = user.disabled ? ' (disabled)' : '';
  return `${user.userId}\t${user.username}${state}\tgroups: ${user.groups.join(',') || '-'}`;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `baud user …`: accounts, passwords, groups, enabling. */
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
    const created = await withBoard(options, (board) =>
      board.credentials.createAccount({
        username,
        password,
        groups: options.group,
        emailAddress: options.email ?? null,
      }),
    );
    printResult(options, created, `created user ${describeUser(created)}`);
  });

  withCommonOptions(
    user
      .command('passwd <username>')
      .description(
        "set a user's password (ends their login sessions, revokes their API keys and deactivates their webhooks)",
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
        const updated = await withBoard(options, (board) =>
          verb === 'add' ? board.users.addGroup(username, groupName) : board.users.removeGroup(username, groupName),
        );
        printResult(options, updated, describeUser(updated));
      },
    );
  }

  withCommonOptions(user.command('list').description('list users')).action(async (options: CommonOptions) => {
    const users = await withBoard(options, (board) => board.users.listUsers());
    printResult(options, users, users.length === 0 ? 'no users' : users.map(describeUser));
  });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    withCommonOptions(
      user
        .command(`${verb} <username>`)
        .description(disabled ? 'disable a user (ends their sessions)' : 'enable a user'),
    ).action(async (username: string, options: CommonOptions) => {
      const updated = await withBoard(options, (board) => board.users.setDisabled(username, disabled));
      printResult(options, updated, describeUser(updated));
    });
  }
}
