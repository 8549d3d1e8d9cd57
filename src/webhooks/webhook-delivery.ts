import { createHash, createHmac } from 'node:crypto';
import type { CallerUser, UserCaller } from '../caller.js';
import type { BoardEvent } from '../events/event-log.js';
import { BAUD_VERSION } from '../version.js';
import { signWebhookBody } from './webhook-signature.js';

/** The event a test delivery sends (`POST /webhooks/{id}/test`); it is not in the event log. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** What goes over the wire for one event: the same bytes on every retry, except the signature's time. */
export interface DeliveryRequest {
  readonly deliveryId: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Whom a delivery to `url` shows what its owner may see: the owner with the `read` scope (making or
 * changing a webhook needs it), on a secure connection only when the receiver is https — an http
 * delivery crosses the network in clear, so an area whose read ACS asks for TLS (`SC`) stays out.
 */
export function deliveryCaller(owner: CallerUser, url: string): UserCaller {
  return {
    kind: 'user',
    user: owner,
    via: 'apiKey',
    scopes: new Set(['read']),
    isSecure: new URL(url).protocol === 'https:',
    session: null,
  };
}

/**
 * A webhook's signing secret: derived from the board's webhook secret and the webhook's own salt,
 * so the database holds no usable secret per webhook, and a new salt is a new secret.
 */
export function webhookSecret(boardSecret: Uint8Array, webhookId: number, salt: string): string {
  return `whsec_${createHmac('sha256', boardSecret).update(`${webhookId}.${salt}`).digest('base64url')}`;
}

/**
 * The delivery id of an event for a webhook: the same on every retry (receivers dedupe by it),
 * different for every webhook and event.
 */
export function deliveryIdOf(webhookId: number, eventId: number | string): string {
  const hex = createHash('sha256').update(`baud-delivery:${webhookId}:${eventId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The POST of `event` to a webhook: `{ id, type, createdAt, data }`, signed `t=…,v1=…` over "<t>.<body>". */
export function deliveryRequest(
  event: Pick<BoardEvent, 'id' | 'createdAt' | 'data'> & { readonly type: string },
  deliveryId: string,
  secret: string,
  now: Date,
): DeliveryRequest {
  const body = JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });
  return {
    deliveryId,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': `baud/${BAUD_VERSION}`,
      'x-baud-event': event.type,
      'x-baud-delivery': deliveryId,
      'x-baud-signature': signWebhookBody(secret, body, Math.floor(now.getTime() / 1000)),
    },
  };
}
