import type { Command } from 'commander';
import { BadRequestError } from '../errors.js';
import { commaList } from '../events/event-filter.js';
import { EVENT_TYPES } from '../events/event-log.js';
import type { DeliveryView, WebhookView } from '../webhooks/webhook-service.js';
import { type CommonOptions, printResult, withBoard, withCommonOptions } from './cli-context.js';

/** Rows the listing commands show at most. */
const LIST_LIMIT = 100;

function describeWebhook(webhook: WebhookView): string {
  const state = webhook.active ? 'active' : `inactive (${webhook.deactivationReason ?? 'stopped'})`;
  const areas = webhook.areas.length === 0 ? 'all areas' : webhook.areas.join(',');
  return `${webhook.id}\t${webhook.owner}\t${webhook.url}\t${webhook.events.join(',')}\t${areas}\t${state}`;
}

function describeDelivery(delivery: DeliveryView): string {
  const outcome = delivery.error ?? `answered ${delivery.statusCode}`;
  return `${delivery.attemptedAt}\tevent ${delivery.eventId}\tattempt ${delivery.attempt}\t${outcome}\t${delivery.durationMs} ms\t${delivery.deliveryId}`;
}

export function parseId(text: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(text))
    throw new BadRequestError('cli.invalid-argument', `"${text}" is not a ${what} id (a positive integer)`);
  return Number(text);
}

/** `baud webhook list | add | remove | deliveries`: the operator's view of every webhook. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('manage webhooks (deliveries are sent by the running nodes)');

  withCommonOptions(webhook.command('list').description('list every webhook')).action(
    async (options: CommonOptions) => {
      const page = await withBoard(options, (board) => board.webhooks.listAll({ limit: LIST_LIMIT, afterKey: null }));
      printResult(options, page.items, page.items.length === 0 ? 'no webhooks' : page.items.map(describeWebhook));
    },
  );

  withCommonOptions(
    webhook
      .command('add <username> <url>')
      .description('add a webhook for a user: it hears what that user may read; the signing secret is printed once')
      .requiredOption('--events <types>', `comma-separated: ${EVENT_TYPES.join(', ')}`)
      .option('--areas <globs>', 'comma-separated area globs (default: all areas)')
      .option('--description <text>', 'what it is for'),
  ).action(
    async (
      username: string,
      url: string,
      options: CommonOptions & { events: string; areas?: string; description?: string },
    ) => {
      const created = await withBoard(options, async (board) => {
        const { userId } = await board.users.getUser(username);
        return board.webhooks.createFor(userId, {
          url,
          events: commaList(options.events),
          areas: commaList(options.areas),
          description: options.description,
        });
      });
      printResult(options, created, [
        describeWebhook(created),
        `secret: ${created.secret}`,
        'Give this secret to the receiver now: it is not shown again.',
      ]);
    },
  );

  withCommonOptions(webhook.command('remove <id>').description('remove a webhook')).action(
    async (id: string, options: CommonOptions) => {
      const webhookId = parseId(id, 'webhook');
      await withBoard(options, (board) => board.webhooks.removeById(webhookId));
      printResult(options, { removed: webhookId }, `removed webhook ${webhookId}`);
    },
  );

  withCommonOptions(
    webhook.command('deliveries <id>').description('the latest delivery attempts of a webhook, newest first'),
  ).action(async (id: string, options: CommonOptions) => {
    const webhookId = parseId(id, 'webhook');
    const page = await withBoard(options, (board) =>
      board.webhooks.deliveriesById(webhookId, { limit: LIST_LIMIT, afterKey: null }),
    );
    printResult(options, page.items, page.items.length === 0 ? 'no deliveries yet' : page.items.map(describeDelivery));
  });
}
