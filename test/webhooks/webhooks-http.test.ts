import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/webhooks/webhook-signature.js';
import { API, MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, openSecondNode, type TestBoard } from '../support/test-board.js';
import { type Received, startReceiver } from '../support/webhook-receiver.js';

type Auth = { authorization: string };
const bodyOf = (delivery: Received | undefined) =>
  JSON.parse(delivery?.body ?? '{}') as { id: number; type: string; createdAt: string; data: Record<string, unknown> };

/** beyond-v1.md "Events: webhooks". */
describeEachDialect('webhooks', (dialect) => {
  let board: TestBoard;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let alice: Auth;
  let bob: Auth;
  let sysop: Auth;

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Auth, payload?: object) =>
    board.app.inject({ method, url: `${API}${url}`, headers, ...(payload === undefined ? {} : { payload }) });
  const create = (headers: Auth, payload: Record<string, unknown>) =>
    inject('POST', '/webhooks', headers, { url: receiver.url, events: ['message.created'], ...payload });
  const post = (areaTag: string, subject: string, headers = alice) =>
    inject('POST', `/messages/areas/${areaTag}/messages`, headers, { subject, message: 'text' });
  const subjectsReceived = () => receiver.received.map((delivery) => bodyOf(delivery).data.subject);

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        ...MESSAGE_TEST_CONFIG,
        events: { pollIntervalMs: 50 },
        webhooks: {
          allowPrivateTargets: true,
          timeoutSeconds: 1,
          retryBaseSeconds: 0.1,
          retryMaxSeconds: 0.2,
          maxConsecutiveFailures: 3,
          maxPerUser: 3,
        },
      },
    });
    alice = (await board.userWithToken('alice')).auth;
    bob = (await board.userWithToken('bob')).auth;
    sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await board.close();
    await receiver.close();
  });
  beforeEach(async () => {
    // Each test starts with no webhook and an empty receiver.
    await board.board.db.deleteFrom('webhooks').execute();
    receiver.received.length = 0;
    receiver.script.length = 0;
  });

  it('creates, shows, changes and deletes a webhook; the secret is shown once; others see a 404', async () => {
    const created = await create(alice, { areas: ['gen*'], description: 'bridge' });
    expect(created.statusCode).toBe(201);
    const webhook = created.json() as { id: number; secret: string };
    expect(created.headers.location).toBe(`${API}/webhooks/${webhook.id}`);
    expect(created.json()).toEqual({
      id: webhook.id,
      owner: 'alice',
      url: receiver.url,
      events: ['message.created'],
      areas: ['gen*'],
      description: 'bridge',
      createdAt: expect.any(String),
      active: true,
      deactivationReason: null,
      consecutiveFailures: 0,
      secret: expect.stringMatching(/^whsec_[\w-]{43}$/),
    });
    const shown = await inject('GET', `/webhooks/${webhook.id}`, alice);
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).not.toHaveProperty('secret');
    expect((await inject('GET', `/webhooks/${webhook.id}`, bob)).statusCode).toBe(404);
    expect((await inject('GET', '/webhooks', bob)).json()).toMatchObject({ data: [], meta: { count: 0 } });
    expect((await inject('GET', '/webhooks', sysop)).json()).toMatchObject({ data: [{ id: webhook.id }] });
    const patched = await inject('PATCH', `/webhooks/${webhook.id}`, alice, {
      events: ['file.created'],
      active: false,
    });
    expect(patched.json()).toMatchObject({
      events: ['file.created'],
      active: false,
      deactivationReason: 'deactivated by its owner',
    });
    expect((await inject('PATCH', `/webhooks/${webhook.id}`, alice, { active: true })).json()).toMatchObject({
      active: true,
      deactivationReason: null,
    });
    expect((await inject('DELETE', `/webhooks/${webhook.id}`, bob)).statusCode).toBe(404);
    expect((await inject('DELETE', `/webhooks/${webhook.id}`, alice)).statusCode).toBe(204);
    expect((await inject('GET', `/webhooks/${webhook.id}`, alice)).statusCode).toBe(404);
  });

  it('refuses bad targets, unknown types, bad globs and one webhook too many', async () => {
    const refused = async (payload: Record<string, unknown>, pointer: string) => {
      const response = await create(alice, payload);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.json().errors[0].pointer).toBe(pointer);
    };
    await refused({ url: 'ftp://example.com/hook' }, '/body/url');
    await refused({ url: 'http://user:pw@example.com/hook' }, '/body/url');
    await refused({ url: 'not a url' }, '/body/url');
    await refused({ events: ['message.edited'] }, '/body/events/0');
    await refused({ events: [] }, '/body/events');
    await refused({ areas: [''] }, '/body/areas/0');
    expect((await inject('POST', '/webhooks', alice, { url: receiver.url })).statusCode).toBe(400);
    for (let index = 0; index < 3; index += 1) expect((await create(alice, {})).statusCode).toBe(201);
    const over = await create(alice, {});
    expect(over.statusCode).toBe(409);
    expect(await board.board.db.selectFrom('webhooks').select('id').execute()).toHaveLength(3);
    expect((await inject('POST', '/webhooks', { authorization: '' } as Auth, {})).statusCode).toBe(401);
  });

  it('holds the per-user limit when creations race', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => create(bob, {})));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([...Array(3).fill(201), ...Array(9).fill(409)]);
    expect((await inject('GET', '/webhooks', bob)).json().meta.count).toBe(3);
  });

  it('delivers a signed event its owner may see, and logs the delivery', async () => {
    const { id, secret } = (await create(bob, { areas: ['general', 'members', 'secret'] })).json() as {
      id: number;
      secret: string;
    };
    await post('secret', 'Bob may not read this');
    const posted = (await post('general', 'Signed and sent')).json() as { messageId: number };
    await expect.poll(() => receiver.received.length, { timeout: 5000 }).toBe(1);
    const [delivery] = receiver.received;
    const body = bodyOf(delivery);
    expect(body).toEqual({
      id: expect.any(Number),
      type: 'message.created',
      createdAt: expect.any(String),
      data: expect.objectContaining({ messageId: posted.messageId, subject: 'Signed and sent', confTag: 'main' }),
    });
    expect(delivery?.headers['content-type']).toBe('application/json');
    expect(delivery?.headers['user-agent']).toMatch(/^baud\//);
    expect(delivery?.headers['x-baud-event']).toBe('message.created');
    const signature = String(delivery?.headers['x-baud-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(secret, delivery?.body ?? '', signature, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifyWebhookSignature(`${secret}x`, delivery?.body ?? '', signature, Math.floor(Date.now() / 1000))).toBe(
      false,
    );
    await expect
      .poll(async () => (await inject('GET', `/webhooks/${id}/deliveries`, bob)).json().data, { timeout: 3000 })
      .toEqual([
        {
          eventId: body.id,
          deliveryId: delivery?.headers['x-baud-delivery'],
          attempt: 1,
          statusCode: 200,
          durationMs: expect.any(Number),
          error: null,
          attemptedAt: expect.any(String),
        },
      ]);
  });

  it('retries a failed delivery with the same delivery id, keeps the order, then goes on', async () => {
    await create(alice, {});
    receiver.script.push(500, 503);
    await post('general', 'First');
    await post('general', 'Second');
    await expect.poll(() => subjectsReceived(), { timeout: 5000 }).toEqual(['First', 'First', 'First', 'Second']);
    const ids = receiver.received.map((delivery) => delivery.headers['x-baud-delivery']);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[1]).toBe(ids[2]);
    expect(ids[3]).not.toBe(ids[0]);
  });

  it('deactivates a webhook after too many failures in a row, and revives it on request', async () => {
    const { id } = (await create(alice, {})).json() as { id: number };
    receiver.script.push(500, 500, 500);
    await post('general', 'Never arrives');
    await expect
      .poll(async () => (await inject('GET', `/webhooks/${id}`, alice)).json(), { timeout: 5000 })
      .toMatchObject({ active: false, deactivationReason: '3 failed deliveries in a row', consecutiveFailures: 3 });
    const log = (await inject('GET', `/webhooks/${id}/deliveries`, alice)).json().data as {
      attempt: number;
      error: string;
    }[];
    expect(log.map((entry) => [entry.attempt, entry.error])).toEqual([
      [3, 'answered 500'],
      [2, 'answered 500'],
      [1, 'answered 500'],
    ]);
    expect((await inject('PATCH', `/webhooks/${id}`, alice, { active: true })).statusCode).toBe(200);
    // The three refused attempts were received too: the revived delivery is the fourth.
    await expect
      .poll(() => subjectsReceived(), { timeout: 5000 })
      .toEqual(Array.from({ length: 4 }, () => 'Never arrives'));
  });

  it('sends a test delivery on request', async () => {
    const { id } = (await create(alice, {})).json() as { id: number };
    const test = await inject('POST', `/webhooks/${id}/test`, alice);
    expect(test.statusCode).toBe(200);
    expect(test.json()).toEqual({
      deliveryId: expect.any(String),
      success: true,
      statusCode: 200,
      durationMs: expect.any(Number),
      error: null,
    });
    expect(bodyOf(receiver.received[0])).toMatchObject({ id: 0, type: 'webhook.test', data: { webhookId: id } });
  });

  it('sends each delivery once when two nodes share the board', async () => {
    const second = await openSecondNode(board);
    try {
      await create(alice, {});
      for (let index = 0; index < 10; index += 1) await post('general', `Shared ${index}`);
      await expect.poll(() => receiver.received.length, { timeout: 8000 }).toBe(10);
      // A webhook's next event goes out only once the one before it was delivered, by whichever
      // node holds its claim: when a later event has arrived, so would a duplicate of an earlier one.
      await post('general', 'Marker');
      await expect.poll(() => subjectsReceived().at(-1), { timeout: 8000 }).toBe('Marker');
      expect(subjectsReceived()).toEqual([...Array.from({ length: 10 }, (_, index) => `Shared ${index}`), 'Marker']);
      const ids = receiver.received.map((delivery) => delivery.headers['x-baud-delivery']);
      expect(new Set(ids).size).toBe(11);
    } finally {
      await second.close();
    }
  });
});

describeEachDialect('webhook targets', (dialect) => {
  let board: TestBoard;
  let auth: Auth;
  beforeAll(async () => {
    board = await createTestBoard(dialect);
    auth = (await board.userWithToken('alice')).auth;
  });
  afterAll(() => board.close());

  const createWithUrl = (url: string) =>
    board.app.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      headers: auth,
      payload: { url, events: ['message.created'] },
    });

  it.each([
    'http://127.0.0.1:9/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.1.2.3/hook',
    'http://[::1]/hook',
    'http://localhost/hook',
    'http://[::127.0.0.1]/hook',
    'http://[::ffff:0:7f00:1]/hook',
    'http://[2002:7f00:1::]/hook',
    'http://[64:ff9b:1::a00:1]/hook',
  ])('refuses %s unless the sysop allows private targets', async (url) => {
    const response = await createWithUrl(url);
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([{ pointer: '/body/url', message: 'not an allowed target' }]);
  });

  it('gives the same answer for every refused address, never the one a host name resolved to', async () => {
    const literal = await createWithUrl('http://10.1.2.3/hook');
    const named = await createWithUrl('http://localhost/hook');
    expect(named.statusCode).toBe(400);
    expect(named.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(named.json().detail).toBe('Webhook URL refused: not an allowed target.');
    const { instance: _literalInstance, ...literalProblem } = literal.json();
    const { instance: _namedInstance, ...namedProblem } = named.json();
    expect(namedProblem).toEqual(literalProblem);
    expect(named.body).not.toMatch(/127\.0\.0\.1|::1|loopback/);
  });
});
