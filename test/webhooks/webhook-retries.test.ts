import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { API, MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { startReceiver } from '../support/webhook-receiver.js';

/** Retries, give-up and lost claims, on a fake clock: nothing here waits for real hours. */
describeEachDialect('webhook retries', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** Receives the logins that show the sender has looked (`expectNoAttemptNow`). */
  let markers: Awaited<ReturnType<typeof startReceiver>>;
  let username: string;
  let auth: { authorization: string };

  // Sysops, so that the fresh login a day later (tokens expire) still sees the webhook.
  const login = async (name: string) => {
    username = name;
    auth = (await board.userWithToken(name, { groups: ['sysops'] })).auth;
  };
  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    board.app.inject({ method, url: `${API}${url}`, headers: auth, ...(payload ? { payload } : {}) });
  const createWebhook = async () =>
    ((await inject('POST', '/webhooks', { url: receiver.url, events: ['message.created'] })).json() as { id: number })
      .id;
  const deliveriesOf = async (id: number) =>
    (await inject('GET', `/webhooks/${id}/deliveries`)).json().data as { attempt: number; error: string | null }[];
  const leaseOwnerOf = async (id: number) =>
    (await board.board.db.selectFrom('webhooks').select('leaseOwner').where('id', '=', id).executeTakeFirstOrThrow())
      .leaseOwner;

  /**
   * Proves that the sender, looking with the clock where it stands now, sends webhook `id`
   * nothing: a webhook for logins is made, then a login. The look that delivers that login began
   * after both and would have claimed `id` too, had it been due; a claim is held until its
   * attempt is recorded, so once `id`'s claim is back to `leaseOwner`, any attempt would be in.
   */
  async function expectNoAttemptNow(id: number, leaseOwner: string | null = null): Promise<void> {
    const attempts = receiver.received.length;
    await expect.poll(() => leaseOwnerOf(id)).toBe(leaseOwner);
    const marker = await inject('POST', '/webhooks', { url: markers.url, events: ['user.login'] });
    expect(marker.statusCode).toBe(201);
    const logins = markers.received.length;
    const loggedIn = await board.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username, password: 'correct horse battery' },
    });
    expect(loggedIn.statusCode).toBe(200);
    await expect.poll(() => markers.received.length).toBe(logins + 1);
    await expect.poll(() => leaseOwnerOf(id)).toBe(leaseOwner);
    expect(receiver.received).toHaveLength(attempts);
    await inject('DELETE', `/webhooks/${(marker.json() as { id: number }).id}`);
  }

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        ...MESSAGE_TEST_CONFIG,
        events: { pollIntervalMs: 25 },
        webhooks: { allowPrivateTargets: true, timeoutSeconds: 1, retryBaseSeconds: 60, retryMaxSeconds: 600 },
      },
    });
    receiver = await startReceiver();
    markers = await startReceiver();
  });
  afterAll(async () => {
    await board.close();
    await receiver.close();
    await markers.close();
  });
  beforeEach(async () => {
    await board.board.db.deleteFrom('webhooks').execute();
    receiver.received.length = 0;
    receiver.script.length = 0;
    await login(`user${Date.now()}`);
  });

  it('never follows a redirect, waits out each backoff, and gives up after 24 hours of failures', async () => {
    const id = await createWebhook();
    const failuresRecorded = async () =>
      ((await inject('GET', `/webhooks/${id}`)).json() as { consecutiveFailures: number }).consecutiveFailures;
    receiver.script.push(302, 500, 500, 500);
    expect((await inject('POST', '/messages/areas/general/messages', { subject: 'S', message: 'm' })).statusCode).toBe(
      201,
    );
    await expect.poll(() => receiver.received.length).toBe(1);
    await expect.poll(async () => (await deliveriesOf(id))[0]?.error).toBe('answered 302');
    await expect.poll(failuresRecorded).toBe(1);
    // Not again before the first backoff (60 s ± 20%) has passed on the clock.
    await expectNoAttemptNow(id);
    clock.advance(47_000);
    await expectNoAttemptNow(id);
    clock.advance(26_000);
    await expect.poll(() => receiver.received.length).toBe(2);
    // The next attempt is scheduled from the clock when this one's outcome is recorded: wait for
    // that before moving the clock (moving it earlier pushed the next attempt back; seen in CI).
    await expect.poll(failuresRecorded).toBe(2);
    // The second backoff doubles: 120 s ± 20%.
    clock.advance(95_000);
    await expectNoAttemptNow(id);
    clock.advance(50_000);
    await expect.poll(() => receiver.received.length).toBe(3);
    await expect.poll(failuresRecorded).toBe(3);
    // A day of failures later, the next failure deactivates it.
    clock.advance(25 * 3_600_000);
    await login(`later${Date.now()}`);
    await expect.poll(() => receiver.received.length).toBe(4);
    const ids = receiver.received.map((delivery) => delivery.headers['x-baud-delivery']);
    expect(new Set(ids).size).toBe(1);
    await expect
      .poll(async () => (await inject('GET', `/webhooks/${id}`)).json())
      .toMatchObject({ active: false, deactivationReason: 'failing for 24 hours', consecutiveFailures: 4 });
    expect((await deliveriesOf(id)).map((entry) => entry.attempt)).toEqual([4, 3, 2, 1]);
  });

  it('leaves a delivery claimed by a node that died to another node once the claim lapses', async () => {
    const id = await createWebhook();
    // A node took the webhook (its claim runs for the timeout plus 30 s) and was killed.
    const until = new Date(clock.now().getTime() + 31_000).toISOString();
    await board.board.db
      .updateTable('webhooks')
      .set({ leaseOwner: 'a-node-that-was-killed', leaseUntil: until })
      .where('id', '=', id)
      .execute();
    await inject('POST', '/messages/areas/general/messages', { subject: 'Claimed', message: 'm' });
    await expectNoAttemptNow(id, 'a-node-that-was-killed');
    clock.advance(32_000);
    await expect.poll(() => receiver.received.length).toBe(1);
    await expectNoAttemptNow(id);
  });
});
