import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { actionOf } from '../../src/http/session-activity.js';
import { API, MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { openSse, type SseClient } from '../support/sse-client.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';
import { startReceiver } from '../support/webhook-receiver.js';

type Auth = { authorization: string };

/**
 * Private mail is the two people's alone (issue 33, item 2): it never shows in area lists,
 * message detail, threads, new-scan, message search, `/system/stats`, the node list, anyone
 * else's stream or webhook — and sysops read none of it through the API.
 */
describeEachDialect('private mail stays private', (dialect) => {
  let board: TestBoard;
  let base: string;
  let alice: Auth;
  let bob: Auth;
  let carol: Auth;
  let sysop: Auth;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const open: SseClient[] = [];
  let mail: { uuid: string; messageId: number };
  let statsBefore: Record<string, unknown>;

  const inject = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    headers: Auth | Record<string, never>,
    payload?: object,
  ) => board.app.inject({ method, url: `${API}${url}`, headers, ...(payload ? { payload } : {}) });
  const follow = async (headers: Auth) => {
    const client = await openSse(`${base}/events`, headers);
    open.push(client);
    await client.next((frame) => frame.retry === 3000);
    return client;
  };

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        ...MESSAGE_TEST_CONFIG,
        events: { pollIntervalMs: 50 },
        webhooks: { allowPrivateTargets: true, timeoutSeconds: 1 },
      },
    });
    alice = (await board.userWithToken('alice')).auth;
    bob = (await board.userWithToken('bob')).auth;
    carol = (await board.userWithToken('carol')).auth;
    sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    receiver = await startReceiver();
    await board.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(board.app.server.address() as AddressInfo).port}${API}`;
    await inject('POST', '/messages/areas/general/messages', alice, {
      subject: 'Public',
      message: 'A zeppelin, in public.',
    });
    statsBefore = (await inject('GET', '/system/stats', sysop)).json();
    const sent = await inject('POST', '/mail', alice, {
      to: 'bob',
      subject: 'Zeppelin secret',
      body: 'The zeppelin code is 1234.',
    });
    expect(sent.statusCode).toBe(201);
    mail = sent.json();
    const reply = await inject('POST', '/mail', bob, {
      to: 'alice',
      subject: 'Re: Zeppelin secret',
      body: 'Got the zeppelin code.',
      replyToUuid: mail.uuid,
    });
    expect(reply.statusCode).toBe(201);
  });
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });
  afterAll(async () => {
    await board?.close();
    await receiver?.close();
  });

  it('is never a message: detail and thread of a mail’s uuid answer as an unknown uuid, to its own parties too', async () => {
    const unknown = '0193a1c2-7d4e-7c3b-9f1a-2b3c4d5e6f70';
    for (const who of [alice, bob, sysop, {}]) {
      for (const path of ['', '/thread']) {
        const [ofMail, ofNothing] = await Promise.all(
          [mail.uuid, unknown].map((uuid) => inject('GET', `/messages/${uuid}${path}`, who)),
        );
        expect(ofMail?.statusCode).toBe(404);
        expect(ofMail?.json().code).toBe('message.not-found');
        expect(ofNothing?.statusCode).toBe(404);
      }
      const deleted = await inject('DELETE', `/messages/${mail.uuid}`, who);
      expect(deleted.statusCode).toBe(who === alice || who === bob || who === sysop ? 404 : 401);
    }
  });

  it('is in no area list, area, unread list or message search', async () => {
    for (const who of [alice, bob, sysop]) {
      const conferences = JSON.stringify((await inject('GET', '/messages/conferences/main', who)).json());
      expect(conferences).not.toContain('private_mail');
      expect((await inject('GET', '/messages/areas/private_mail', who)).statusCode).toBe(404);
      expect((await inject('GET', '/messages/areas/private_mail/messages', who)).statusCode).toBe(404);
      const unread = JSON.stringify((await inject('GET', '/messages/unread', who)).json());
      expect(unread).not.toContain('private_mail');
      const found = (await inject('GET', '/messages/search?q=zeppelin', who)).json();
      expect(found.data.map((hit: { subject: string }) => hit.subject)).toEqual(['Public']);
    }
  });

  it('counts in no /system/stats total', async () => {
    const after = (await inject('GET', '/system/stats', sysop)).json();
    expect(after.totalMessages).toBe(statsBefore.totalMessages);
    expect(after).toEqual({ ...statsBefore, totalCalls: after.totalCalls, callsToday: after.callsToday });
  });

  it('shows in the node list as “Reading mail” or “Writing mail”, never whose or what', async () => {
    expect(actionOf(`${API}/mail/:uuid`, 'GET')).toBe('Reading mail');
    expect(actionOf(`${API}/mail`, 'POST')).toBe('Writing mail');
    await inject('POST', '/mail', carol, { to: 'alice', subject: 'Node list test', body: 'Hidden body' });
    const nodes = JSON.stringify((await inject('GET', '/system/nodes', sysop)).json());
    expect(nodes).not.toContain('Node list test');
    expect(nodes).not.toContain('Hidden body');
  });

  it('reaches the recipient’s stream and nobody else’s, sysops included', async () => {
    const streams = {
      bob: await follow(bob),
      alice: await follow(alice),
      carol: await follow(carol),
      sysop: await follow(sysop),
    };
    const sent = await inject('POST', '/mail', alice, { to: 'bob', subject: 'Live one', body: 'Psst.' });
    const frame = await streams.bob.next((candidate) => candidate.event === 'mail.received', { timeoutMs: 1000 });
    const { body: _body, ...summary } = sent.json();
    expect(frame.data).toEqual({ ...summary, read: false });
    // A public post after the mail: once each stream has it, it would have had the mail too.
    await inject('POST', '/messages/areas/general/messages', carol, { subject: 'Marker', message: 'After the mail.' });
    for (const stream of [streams.alice, streams.carol, streams.sysop]) {
      await stream.next((candidate) => candidate.event === 'message.created');
      expect(stream.frames.some((candidate) => candidate.event === 'mail.received')).toBe(false);
    }
  });

  it('goes to the recipient’s webhooks only, never to a sysop’s', async () => {
    const hooks = new Map<Auth, number>();
    for (const who of [bob, sysop, carol]) {
      const events = ['mail.received', 'user.login'];
      const created = await inject('POST', '/webhooks', who, { url: receiver.url, events });
      expect(created.statusCode).toBe(201);
      hooks.set(who, created.json().id);
    }
    const sent = await inject('POST', '/mail', carol, { to: 'bob', subject: 'Hooked', body: 'By webhook.' });
    const login = await board.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'carol', password: 'correct horse battery' },
    });
    expect(login.statusCode).toBe(200);
    // Each webhook is sent its events in order: once a webhook has the later login, the mail's
    // event was judged for it too.
    const typesDeliveredTo = async (who: Auth) => {
      const deliveries = (await inject('GET', `/webhooks/${hooks.get(who)}/deliveries`, who)).json().data as {
        eventId: number;
      }[];
      const typeOf = new Map(
        receiver.received.map((delivery) => {
          const body = JSON.parse(delivery.body) as { id: number; type: string };
          return [body.id, body.type];
        }),
      );
      return deliveries.map((delivery) => typeOf.get(delivery.eventId)).sort();
    };
    await expect.poll(() => typesDeliveredTo(bob), { timeout: 5000 }).toEqual(['mail.received', 'user.login']);
    await expect.poll(() => typesDeliveredTo(sysop), { timeout: 5000 }).toEqual(['user.login']);
    await expect.poll(() => typesDeliveredTo(carol), { timeout: 5000 }).toEqual(['user.login']);
    const { body: _body, ...summary } = sent.json();
    const delivered = receiver.received
      .map((delivery) => JSON.parse(delivery.body) as { type: string; data: object })
      .filter((body) => body.type === 'mail.received');
    expect(delivered.map((body) => body.data)).toEqual([{ ...summary, read: false }]);
  });

  it('lets no sysop read, list, mark, delete or search another’s mail', async () => {
    expect((await inject('GET', `/mail/${mail.uuid}`, sysop)).statusCode).toBe(404);
    expect((await inject('GET', '/mail', sysop)).json().data).toEqual([]);
    expect((await inject('GET', '/mail?box=sent', sysop)).json().data).toEqual([]);
    expect((await inject('GET', '/mail/search?q=zeppelin', sysop)).json().data).toEqual([]);
    expect((await inject('DELETE', `/mail/${mail.uuid}`, sysop)).statusCode).toBe(404);
    expect((await inject('GET', `/mail/${mail.uuid}`, bob)).statusCode).toBe(200);
  });
});
