import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CallerUser, UserCaller } from '../../src/caller.js';
import { deliveryCaller } from '../../src/webhooks/webhook-delivery.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';
import { type Received, startReceiver } from '../support/webhook-receiver.js';

const API = '/_baud/api/v1';
type Headers = Record<string, string>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const subjectsOf = (received: readonly Received[]) =>
  received.map((delivery) => (JSON.parse(delivery.body) as { data: { subject?: string } }).data.subject);

/**
 * What a webhook may carry away (issue 29, items 5, 6 and 12): never more than the credential
 * that made it could read, nothing once its owner's credentials were reset, and nothing an area
 * keeps for TLS callers over a plain-http delivery.
 */
describeEachDialect('what a webhook delivers', (dialect) => {
  let board: TestBoard;
  let receiver: Receiver;
  let marker: Receiver;
  let alice: Headers;
  let bob: Headers;

  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Headers, payload?: object) =>
    board.app.inject({ method, url: `${API}${url}`, headers, ...(payload === undefined ? {} : { payload }) });
  const createWebhook = (headers: Headers, url = receiver.url) =>
    inject('POST', '/webhooks', headers, { url, events: ['message.created'] });
  const post = (areaTag: string, subject: string, headers = alice) =>
    inject('POST', `/messages/areas/${areaTag}/messages`, headers, { subject, message: 'text' });
  const apiKey = async (username: string, scope: string) => ({
    'x-baud-api-key': (await board.board.apiKeys.generate(username, `${scope} bot`, scope)).key,
  });

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        messageConferences: {
          main: {
            name: 'Main',
            areas: {
              general: { name: 'General' },
              priv_members: { name: 'Members', acs: { read: 'GM[members]', write: 'GM[members]' } },
              tls_only: { name: 'TLS only', acs: { read: 'SC' } },
            },
          },
        },
        events: { pollIntervalMs: 50 },
        webhooks: { allowPrivateTargets: true, timeoutSeconds: 1 },
      },
    });
    alice = (await board.userWithToken('alice', { groups: ['members'] })).auth;
    bob = (await board.userWithToken('bob')).auth;
    receiver = await startReceiver();
    marker = await startReceiver();
  });
  afterAll(async () => {
    await board.close();
    await receiver.close();
    await marker.close();
  });
  beforeEach(async () => {
    await board.board.db.deleteFrom('webhooks').execute();
    receiver.received.length = 0;
    marker.received.length = 0;
  });

  it('keeps an area whose read ACS needs TLS out of a plain-http delivery', async () => {
    expect((await createWebhook(alice)).statusCode).toBe(201);
    const owner = await board.board.users.loadCallerUser((await board.board.users.getUser('alice')).userId);
    if (owner === null) throw new Error('alice is missing');
    // Alice on TLS may post and read there; the webhook's receiver is http.
    const onTls: UserCaller = {
      kind: 'user',
      user: owner,
      via: 'token',
      scopes: new Set(['read', 'write']),
      isSecure: true,
      session: null,
    };
    await board.board.messages.postMessage(onTls, 'tls_only', {
      subject: 'For TLS readers only',
      message: 'secret',
    });
    expect((await post('general', 'Plain news')).statusCode).toBe(201);
    // Deliveries keep the events' order, so the TLS-only post would have arrived first.
    await expect.poll(() => subjectsOf(receiver.received), { timeout: 5000 }).toContain('Plain news');
    expect(subjectsOf(receiver.received)).toEqual(['Plain news']);
  });

  it('refuses to make or change a webhook with an API key that may not read', async () => {
    const writeOnly = await apiKey('alice', 'write');
    const refused = await createWebhook(writeOnly);
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(refused.json()).toEqual({
      type: `${API}/errors/403`,
      title: 'Forbidden',
      status: 403,
      detail: "Webhooks deliver what their owner may read: this API key's scope needs read as well as write.",
      code: 'auth.scope-insufficient',
    });
    expect(await board.board.db.selectFrom('webhooks').select('id').execute()).toEqual([]);

    const created = await createWebhook(await apiKey('alice', 'read,write'));
    expect(created.statusCode).toBe(201);
    const { id } = created.json() as { id: number };
    // A write-only key could otherwise point someone's webhook at a receiver of its own.
    const patched = await inject('PATCH', `/webhooks/${id}`, writeOnly, { url: marker.url });
    expect(patched.statusCode).toBe(403);
    expect((await inject('GET', `/webhooks/${id}`, alice)).json()).toMatchObject({ url: receiver.url });

    // What the attack run saw: a members-only subject reaching a webhook a write-only key made.
    expect((await post('priv_members', 'Members only')).statusCode).toBe(201);
    await expect.poll(() => subjectsOf(receiver.received), { timeout: 5000 }).toEqual(['Members only']);
    expect(marker.received).toEqual([]);
  });

  it("stops the user's webhooks when their password is reset, says why, and lets them switch one on again", async () => {
    await board.userWithToken('carol');
    const stolen = await apiKey('carol', 'read,write');
    const { id } = (await createWebhook(stolen)).json() as { id: number };
    const bobs = (await createWebhook(bob, marker.url)).json() as { id: number };

    expect(await board.board.credentials.setPassword('carol', 'a brand new password')).toEqual({
      webhooksDeactivated: 1,
    });

    const sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    expect((await inject('GET', `/webhooks/${id}`, sysop)).json()).toMatchObject({
      active: false,
      deactivationReason: "its owner's password was reset",
    });
    expect((await inject('GET', `/webhooks/${bobs.id}`, sysop)).json()).toMatchObject({ active: true });
    expect((await post('general', 'After the reset', bob)).statusCode).toBe(201);
    // Bob's webhook hears the post; by then Alice's would have too.
    await expect.poll(() => subjectsOf(marker.received), { timeout: 5000 }).toEqual(['After the reset']);
    expect(receiver.received).toEqual([]);

    const login = await board.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'carol', password: 'a brand new password' },
    });
    const fresh = { authorization: `Bearer ${(login.json() as { accessToken: string }).accessToken}` };
    const revived = await inject('PATCH', `/webhooks/${id}`, fresh, { active: true });
    expect(revived.json()).toMatchObject({ active: true, deactivationReason: null });
    await expect.poll(() => subjectsOf(receiver.received), { timeout: 5000 }).toEqual(['After the reset']);
  });

  it('lets no sender in the middle of a batch switch a webhook on again once the reset stopped it', async () => {
    const dora = (await board.userWithToken('dora')).auth;
    const { id } = (await createWebhook(dora)).json() as { id: number };
    const { store } = board.board.webhookSending;
    const now = new Date().toISOString();
    const claimedUntil = new Date(Date.now() + 3_600_000).toISOString();
    // A sender of another node claims it; the reset lands while that sender is delivering.
    expect(await store.claim(id, 'other-node', now, claimedUntil)).toBe(true);
    await board.board.credentials.setPassword('dora', 'a brand new password');
    const outcome = {
      deliveredThrough: 0,
      attempts: 0,
      failingSince: null,
      consecutiveFailures: 0,
      nextAttemptAt: now,
      deactivatedAt: null,
      deactivationReason: null,
    };
    expect(await store.recordOutcome(id, 'other-node', outcome)).toBe(false);
    expect(await store.find(id)).toMatchObject({ deactivatedAt: expect.any(String) });
  });
});

describe('deliveryCaller', () => {
  const owner = { id: 1, username: 'alice', groups: [] } as unknown as CallerUser;

  it('is on a secure connection for an https receiver only, and may only read', () => {
    expect(deliveryCaller(owner, 'https://hooks.example.test/in')).toMatchObject({ isSecure: true });
    expect(deliveryCaller(owner, 'http://hooks.example.test/in')).toMatchObject({ isSecure: false });
    expect([...deliveryCaller(owner, 'https://hooks.example.test/in').scopes]).toEqual(['read']);
  });
});
