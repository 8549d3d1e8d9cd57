import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BaudClient, BaudProblem, createBaudClient } from '../../clients/typescript/src/index.js';
import { base32Decode, timeStepAt, totpCode } from '../../src/auth/totp.js';
import { MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const PASSWORD = 'correct horse battery';

/** Issue 22: the typed client (clients/typescript) against a real listening server. */
describeEachDialect('the typed client', (dialect) => {
  let board: TestBoard;
  let baseUrl: string;
  let client: BaudClient;

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        ...MESSAGE_TEST_CONFIG,
        fileBase: {
          storageTags: { main: 'files' },
          areas: { uploads: { name: 'Uploads', storageTags: ['main'], acs: { write: 'GM[users]' } } },
        },
      },
    });
    await board.userWithToken('alice', { password: PASSWORD, groups: ['users'] });
    await seedMessages(board, 'general', 60);
    await board.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(board.app.server.address() as AddressInfo).port}`;
    client = createBaudClient({ baseUrl });
  });
  afterAll(() => board.close());

  it('reads what anonymous callers may, typed, and throws problems as BaudProblem', async () => {
    const { data } = await client.api.GET('/_baud/api/v1/system/info');
    expect(data?.boardName).toBe('baud');
    const missing = client.api.GET('/_baud/api/v1/messages/areas/{areaTag}', { params: { path: { areaTag: 'nope' } } });
    await expect(missing).rejects.toBeInstanceOf(BaudProblem);
    await expect(missing).rejects.toMatchObject({
      status: 404,
      title: 'Not Found',
      code: 'message.area-not-found',
    });
    await expect(client.api.GET('/_baud/api/v1/users/me')).rejects.toMatchObject({
      status: 401,
      code: 'auth.required',
    });
  });

  it('logs in, walks every page of an area, posts, refreshes and logs out', async () => {
    await client.login('alice', PASSWORD);
    expect(client.isLoggedIn).toBe(true);
    const me = await client.api.GET('/_baud/api/v1/users/me');
    expect(me.data?.username).toBe('alice');
    const subjects: string[] = [];
    for await (const message of client.items('/_baud/api/v1/messages/areas/{areaTag}/messages', {
      path: { areaTag: 'general' },
      query: { limit: 25 },
    })) {
      subjects.push(message.subject);
    }
    expect(subjects).toHaveLength(60);
    expect(subjects[0]).toBe('Seed 1');
    const posted = await client.api.POST('/_baud/api/v1/messages/areas/{areaTag}/messages', {
      params: { path: { areaTag: 'general' } },
      body: { subject: 'From the client', message: 'Typed all the way.' },
    });
    expect(posted.response.status).toBe(201);
    expect(posted.data?.subject).toBe('From the client');
    const bad = client.api.POST('/_baud/api/v1/messages/areas/{areaTag}/messages', {
      params: { path: { areaTag: 'general' } },
      body: { subject: '', message: 'x' },
    });
    await expect(bad).rejects.toMatchObject({
      status: 400,
      code: 'request.invalid-body',
      errors: [{ pointer: '/body/subject' }],
    });
    await client.refresh();
    expect((await client.api.GET('/_baud/api/v1/users/me')).data?.username).toBe('alice');
    await client.logout();
    expect(client.isLoggedIn).toBe(false);
    await expect(client.refresh()).rejects.toMatchObject({ status: 401 });
  });

  it('sends, lists, reads and marks private mail, typed', async () => {
    await board.userWithToken('bob', { password: PASSWORD });
    const alice = createBaudClient({ baseUrl });
    await alice.login('alice', PASSWORD);
    const sent = await alice.api.POST('/_baud/api/v1/mail', {
      body: { to: 'bob', subject: 'Typed mail', body: 'From the client.' },
    });
    expect(sent.response.status).toBe(201);
    const bob = createBaudClient({ baseUrl });
    await bob.login('bob', PASSWORD);
    const inbox: string[] = [];
    for await (const mail of bob.items('/_baud/api/v1/mail', { query: { box: 'inbox', limit: 10 } })) {
      inbox.push(mail.subject);
    }
    expect(inbox).toEqual(['Typed mail']);
    const uuid = sent.data?.uuid ?? '';
    const read = await bob.api.PATCH('/_baud/api/v1/mail/{uuid}', { params: { path: { uuid } }, body: { read: true } });
    expect(read.data?.read).toBe(true);
    expect((await bob.api.GET('/_baud/api/v1/users/me')).data?.unreadMail).toBe(0);
    await expect(
      alice.api.PATCH('/_baud/api/v1/mail/{uuid}', { params: { path: { uuid } }, body: { read: true } }),
    ).rejects.toMatchObject({ status: 404, code: 'mail.not-found' });
  });

  it('refreshes once for callers that ask at the same time, so the rotated cookie is not reused', async () => {
    let refreshes = 0;
    const counting = createBaudClient({
      baseUrl,
      fetch: (input, init) => {
        if (String(input instanceof Request ? input.url : input).endsWith('/auth/refresh')) refreshes++;
        return fetch(input, init);
      },
    });
    await counting.login('alice', PASSWORD);
    await Promise.all([counting.refresh(), counting.refresh()]);
    expect(refreshes).toBe(1);
    expect((await counting.api.GET('/_baud/api/v1/users/me')).data?.username).toBe('alice');
  });

  it('uploads a file and authenticates with an API key', async () => {
    const key = await board.board.apiKeys.generate('alice', 'client test', 'read,write');
    const keyed = createBaudClient({ baseUrl, apiKey: key.key });
    const note = new Blob(['hello from the client']);
    const uploaded = await keyed.upload('uploads', note, 'note.txt', { desc: 'A note' });
    expect(uploaded).toMatchObject({ fileName: 'note.txt', byteSize: 21, desc: 'A note', uploadByUsername: 'alice' });
    await expect(keyed.upload('uploads', note, 'again.txt')).rejects.toMatchObject({ status: 409 });
    await expect(createBaudClient({ baseUrl }).upload('uploads', note, 'x.txt')).rejects.toMatchObject({
      status: 401,
    });
    const downloaded = await keyed.download(uploaded.fileId);
    expect(Buffer.from(await downloaded.arrayBuffer()).toString()).toBe('hello from the client');
    await expect(createBaudClient({ baseUrl }).download(999_999)).rejects.toMatchObject({ status: 404 });
  });

  it('tells its owner when the session ended under it: a silent refresh refused', async () => {
    let ended = 0;
    const shortLived = createBaudClient({ baseUrl, refreshMarginSeconds: 24 * 3600, onSessionEnd: () => ended++ });
    await shortLived.login('alice', PASSWORD);
    // Another client ends every session of alice's: the refresh cookie is dead.
    const other = createBaudClient({ baseUrl });
    await other.login('alice', PASSWORD);
    await board.board.db.updateTable('refreshFamilies').set({ revokedAt: new Date().toISOString() }).execute();
    // The margin makes every request refresh first; the refusal ends the session.
    await expect(shortLived.api.GET('/_baud/api/v1/users/me')).rejects.toMatchObject({ status: 401 });
    expect(ended).toBe(1);
    expect(shortLived.isLoggedIn).toBe(false);
  });

  it('follows the event stream', async () => {
    // The stream is open once the server has answered; a post then reaches it.
    let answered: () => void = () => {};
    const streamAnswered = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const reader = createBaudClient({
      baseUrl,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (String(input).includes('/events')) answered();
        return response;
      },
    });
    await reader.login('alice', PASSWORD);
    const controller = new AbortController();
    const stream = reader.events({ types: ['message.created'], signal: controller.signal });
    const first = stream.next();
    await streamAnswered;
    await reader.api.POST('/_baud/api/v1/messages/areas/{areaTag}/messages', {
      params: { path: { areaTag: 'general' } },
      body: { subject: 'Live', message: 'Heard by the stream.' },
    });
    const { value } = await first;
    expect(value).toMatchObject({ type: 'message.created', data: { subject: 'Live', areaTag: 'general' } });
    expect(typeof value?.id).toBe('number');
    controller.abort();
    await stream.return(undefined);
  });

  it('turns two-factor login on and logs in with the code once the problem says otpRequired', async () => {
    await board.board.credentials.createAccount({ username: 'tina', password: PASSWORD });
    const tina = createBaudClient({ baseUrl });
    await tina.login('tina', PASSWORD);
    const enrolled = await tina.api.POST('/_baud/api/v1/users/me/totp', { body: { password: PASSWORD } });
    const key = base32Decode(enrolled.data?.secret ?? '') ?? Buffer.alloc(0);
    const codeAt = (stepOffset: number) => totpCode(key, timeStepAt(new Date()) + stepOffset);
    // Confirmed with the previous step's code, so the current step's is still unused.
    const confirmed = await tina.api.POST('/_baud/api/v1/users/me/totp/confirm', { body: { code: codeAt(-1) } });
    expect(confirmed.data?.recoveryCodes).toHaveLength(10);
    expect((await tina.api.GET('/_baud/api/v1/users/me')).data?.totpEnabled).toBe(true);

    const other = createBaudClient({ baseUrl });
    const refused = other.login('tina', PASSWORD);
    await expect(refused).rejects.toBeInstanceOf(BaudProblem);
    await expect(refused).rejects.toMatchObject({ status: 401, code: 'auth.otp-required', otpRequired: true });
    expect(other.isLoggedIn).toBe(false);
    const code = codeAt(0);
    await other.login('tina', PASSWORD, code);
    expect((await other.api.GET('/_baud/api/v1/users/me')).data?.username).toBe('tina');
    // The same code again: accepted once only.
    await expect(createBaudClient({ baseUrl }).login('tina', PASSWORD, code)).rejects.toMatchObject({
      status: 401,
      code: 'auth.invalid-otp',
      otpRequired: false,
    });
  });
});
