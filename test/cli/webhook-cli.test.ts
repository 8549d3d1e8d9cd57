import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliBoard } from '../support/cli-board.js';
import { runBaud } from '../support/run-baud.js';

/** `baud webhook …` and `baud events tail`, as an operator runs them. */
describe('webhook and event commands', () => {
  let dir: string;
  let config: string;
  const baud = (...args: string[]) => runBaud([...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    ({ dir, config } = createCliBoard('baud-webhook-cli-', {
      webhooks: { allowPrivateTargets: true },
      messageConferences: { main: { name: 'Main', areas: { general: { name: 'General' } } } },
      fileBase: { storageTags: { main: 'files' }, areas: { uploads: { name: 'Uploads', storageTags: ['main'] } } },
    }));
    expect((await baud('user', 'add', 'alice', '--password', 'long enough pw')).code).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('adds, lists and removes a webhook; the secret is printed once', async () => {
    const added = await baud(
      'webhook',
      'add',
      'alice',
      'http://127.0.0.1:9/hook',
      '--events',
      'message.created',
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const webhook = JSON.parse(added.stdout) as { id: number; secret: string; owner: string };
    expect(webhook).toMatchObject({ owner: 'alice', events: ['message.created'], areas: [], active: true });
    expect(webhook.secret).toMatch(/^whsec_/);
    const listed = await baud('webhook', 'list');
    expect(listed.stdout).toBe(`${webhook.id}\talice\thttp://127.0.0.1:9/hook\tmessage.created\tall areas\tactive\n`);
    expect(listed.stdout).not.toContain('whsec_');
    expect((await baud('webhook', 'deliveries', String(webhook.id))).stdout).toBe('no deliveries yet\n');
    expect((await baud('webhook', 'remove', String(webhook.id))).stdout).toBe(`removed webhook ${webhook.id}\n`);
    expect((await baud('webhook', 'list')).stdout).toBe('no webhooks\n');
  });

  it('fails with one clear line for a bad type, an unknown user or webhook', async () => {
    const badType = await baud('webhook', 'add', 'alice', 'http://127.0.0.1:9/', '--events', 'message.edited');
    expect(badType.code).toBe(1);
    expect(badType.stderr).toMatch(/^baud: .*message\.edited.*\n$/);
    const unknownUser = await baud('webhook', 'add', 'nobody', 'http://127.0.0.1:9/', '--events', 'file.created');
    expect(unknownUser.code).toBe(1);
    expect(unknownUser.stderr.split('\n')).toHaveLength(2);
    const unknownHook = await baud('webhook', 'remove', '999');
    expect(unknownHook.code).toBe(1);
    expect(unknownHook.stderr).toBe('baud: No webhook 999.\n');
  });

  it("deactivates a user's webhooks when their password is reset, and says so", async () => {
    expect((await baud('user', 'add', 'carol', '--password', 'long enough pw')).code).toBe(0);
    const { id } = JSON.parse(
      (await baud('webhook', 'add', 'carol', 'http://127.0.0.1:9/hook', '--events', 'message.created', '--json'))
        .stdout,
    ) as { id: number };
    const passwd = await baud('user', 'passwd', 'carol', '--password', 'a new long password');
    expect(passwd).toMatchObject({
      code: 0,
      stdout:
        'password changed for carol: login sessions ended, API keys revoked\n' +
        '1 webhook deactivated; carol can check each and switch it on again (PATCH /webhooks/{id} {"active": true})\n',
    });
    expect((await baud('webhook', 'list')).stdout).toContain(
      `${id}\tcarol\thttp://127.0.0.1:9/hook\tmessage.created\tall areas\tinactive (its owner's password was reset)\n`,
    );
    const again = await baud('user', 'passwd', 'carol', '--password', 'a third long password', '--json');
    expect(JSON.parse(again.stdout)).toEqual({ username: 'carol', passwordChanged: true, webhooksDeactivated: 0 });
    expect((await baud('webhook', 'remove', String(id))).code).toBe(0);
  });

  it('tails the event log from an id, filtered by type', async () => {
    const file = path.join(dir, 'readme.txt');
    writeFileSync(file, 'hello');
    expect((await baud('file', 'import', 'uploads', file)).code).toBe(0);
    const tail = await baud('events', 'tail', '--from', '0', '--types', 'file.created', '--count', '1', '--json');
    expect(tail.code, tail.stderr).toBe(0);
    expect(JSON.parse(tail.stdout)).toMatchObject({
      id: expect.any(Number),
      type: 'file.created',
      areaTag: 'uploads',
      data: { fileName: 'readme.txt', areaTag: 'uploads', byteSize: 5 },
    });
    const human = await baud('events', 'tail', '--from', '0', '--count', '1');
    expect(human.stdout).toMatch(/^\d+\t\S+\tfile\.created\tuploads\treadme\.txt\n$/);
    const { data } = JSON.parse(tail.stdout) as { data: { fileId: number } };
    expect((await baud('file', 'remove', String(data.fileId))).code).toBe(0);
    const removed = await baud('events', 'tail', '--from', '0', '--types', 'file.deleted', '--count', '1', '--json');
    expect(JSON.parse(removed.stdout)).toMatchObject({
      type: 'file.deleted',
      data: { fileId: data.fileId, areaTag: 'uploads', fileName: 'readme.txt' },
    });
    const bad = await baud('events', 'tail', '--types', 'nope');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^baud: unknown event types: nope/);
  });
});
