import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSshPublicKey } from '../../src/auth/ssh-public-key.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { API, bearer, login, PASSWORD } from './auth-helpers.js';
import {
  dsaKeyLine,
  FINGERPRINT_BY_SSH_KEYGEN,
  KEY_MADE_BY_SSH_KEYGEN,
  keyLine,
  newSshKey,
  sshString,
} from './ssh-key-fixtures.js';

const ED25519 = newSshKey('ed25519', 'bob@desk');
const ECDSA_256 = newSshKey('ecdsa-256', 'phone');
const ECDSA_384 = newSshKey('ecdsa-384');
const ECDSA_521 = newSshKey('ecdsa-521', 'yubikey slot 2');
const RSA_2048 = newSshKey('rsa-2048', 'work');
const RSA_1024 = newSshKey('rsa-1024', 'old');

const WHAT_TO_PASTE =
  'Paste one line of your public key file, such as the contents of ~/.ssh/id_ed25519.pub (it starts with "ssh-ed25519").';
const MAKE_A_KEY = 'Make an Ed25519 key with `ssh-keygen -t ed25519` and paste the contents of ~/.ssh/id_ed25519.pub.';

/** The problem body of a refused key: `detail` is also the message at `/publicKey` (or `/label`). */
function refusal(code: string, detail: string, pointer = '/publicKey') {
  const message = pointer === '/label' ? detail.replace(/^The label /, '').replace(/\.$/, '') : detail;
  return {
    type: '/_baud/api/v1/errors/400',
    title: 'Bad Request',
    status: 400,
    detail,
    code,
    errors: [{ pointer, message }],
  };
}

describe('parsing a pasted public key', () => {
  it('gives a key ssh-keygen made the fingerprint ssh-keygen shows, and its comment', () => {
    const key = parseSshPublicKey(`  ${KEY_MADE_BY_SSH_KEYGEN}\n`);
    expect(key.type).toBe('ssh-ed25519');
    expect(key.fingerprint).toBe(FINGERPRINT_BY_SSH_KEYGEN);
    expect(key.comment).toBe('alice@laptop');
  });

  it('takes each accepted type, a CRLF line end and a comment with spaces', () => {
    for (const key of [ED25519, ECDSA_256, ECDSA_384, ECDSA_521, RSA_2048]) {
      const parsed = parseSshPublicKey(`${key.line}\r\n`);
      expect({ type: parsed.type, fingerprint: parsed.fingerprint }).toEqual({
        type: key.type,
        fingerprint: key.fingerprint,
      });
      expect(parsed.blob.equals(key.blob)).toBe(true);
    }
    expect(parseSshPublicKey(ECDSA_521.line).comment).toBe('yubikey slot 2');
  });
});

describeEachDialect('SSH keys of your own account', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    for (const username of ['alice', 'bob', 'carol', 'dave', 'erin', 'fred', 'gina', 'hana', 'ivan']) {
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    }
  });
  afterAll(() => board.close());

  async function session(username: string, password = PASSWORD) {
    const { response, accessToken } = await login(board, username, password);
    expect(response.statusCode, response.body).toBe(200);
    return bearer(accessToken);
  }

  const add = (headers: Record<string, string>, payload: object) =>
    board.app.inject({ method: 'POST', url: `${API}/users/me/ssh-keys`, headers, payload });
  const list = (headers: Record<string, string>) =>
    board.app.inject({ method: 'GET', url: `${API}/users/me/ssh-keys`, headers });
  const remove = (headers: Record<string, string>, id: number | string) =>
    board.app.inject({ method: 'DELETE', url: `${API}/users/me/ssh-keys/${id}`, headers });
  const auditOf = async (target: string) =>
    (await board.board.db.selectFrom('auditLog').selectAll().where('target', '=', target).orderBy('id').execute()).map(
      ({ actor, action, detail }) => ({ actor, action, detail }),
    );

  /** Adds `line` and answers the key as the 201 shows it. */
  async function added(headers: Record<string, string>, publicKey: string, label?: string) {
    const response = await add(headers, label === undefined ? { publicKey } : { publicKey, label });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: number; type: string; fingerprint: string; label: string; createdAt: string };
  }

  it('adds a key: 201 with Location, its type, OpenSSH fingerprint and the line comment as label; audited', async () => {
    const headers = await session('alice');
    const response = await add(headers, { publicKey: KEY_MADE_BY_SSH_KEYGEN });
    expect(response.statusCode, response.body).toBe(201);
    const key = response.json();
    expect(key).toEqual({
      id: expect.any(Number),
      type: 'ssh-ed25519',
      fingerprint: FINGERPRINT_BY_SSH_KEYGEN,
      label: 'alice@laptop',
      createdAt: clock.now().toISOString(),
    });
    expect(response.headers.location).toBe(`${API}/users/me/ssh-keys/${key.id}`);
    const listed = await list(headers);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      data: [key],
      meta: { count: 1, limit: 20, nextCursor: null },
      pagination: { next: null },
    });
    expect(await auditOf('alice')).toEqual([
      {
        actor: 'alice',
        action: 'user.ssh-key-added',
        detail: `SSH key ${key.id} "alice@laptop" (ssh-ed25519 ${FINGERPRINT_BY_SSH_KEYGEN}) added`,
      },
    ]);
  });

  it('takes Ed25519, ECDSA of each curve and RSA of 2048 bits, and lists them newest first', async () => {
    const headers = await session('bob');
    const keys = [];
    for (const key of [ED25519, ECDSA_256, ECDSA_384, ECDSA_521, RSA_2048]) {
      const body = await added(headers, key.line);
      expect({ type: body.type, fingerprint: body.fingerprint }).toEqual({
        type: key.type,
        fingerprint: key.fingerprint,
      });
      keys.push(body);
      clock.advance(1000);
    }
    expect(keys.map((key) => key.label)).toEqual(['bob@desk', 'phone', '', 'yubikey slot 2', 'work']);
    const listed = (await list(headers)).json();
    expect(listed.data).toEqual([...keys].reverse());
    expect(listed.meta.count).toBe(5);
  });

  it('labels a key as given (trimmed), or by its comment when the label is blank, cut to 100 characters', async () => {
    const headers = await session('carol');
    expect((await added(headers, newSshKey('ed25519', 'c@home').line, '  travel laptop  ')).label).toBe(
      'travel laptop',
    );
    expect((await added(headers, newSshKey('ed25519', 'c@home').line, '   ')).label).toBe('c@home');
    const long = `${'ä'.repeat(99)}bc`;
    expect((await added(headers, newSshKey('ed25519', long).line)).label).toBe(`${'ä'.repeat(99)}b`);
    // A comment's control characters would be commands on a terminal: they become spaces.
    expect((await added(headers, `${keyLine('ssh-ed25519', newSshKey('ed25519').blob)} a\u001b[2Jb`)).label).toBe(
      'a [2Jb',
    );
    expect((await added(headers, newSshKey('ed25519').line, 'é'.repeat(100))).label).toBe('é'.repeat(100));
    expect((await add(headers, { publicKey: newSshKey('ed25519').line, label: 'x'.repeat(101) })).json()).toEqual(
      refusal('ssh-key.invalid-label', 'The label must be at most 100 characters.', '/label'),
    );
    expect((await add(headers, { publicKey: newSshKey('ed25519').line, label: 'tab\there' })).json()).toEqual(
      refusal('ssh-key.invalid-label', 'The label must not hold control characters.', '/label'),
    );
  });

  it('refuses what is not one accepted public key with 400, saying what to paste', async () => {
    const headers = await session('dave');
    const ed25519Blob = newSshKey('ed25519').blob;
    const refusals: [string, object][] = [
      ['', refusal('ssh-key.malformed', `The public key is empty. ${WHAT_TO_PASTE}`)],
      [' \n ', refusal('ssh-key.malformed', `The public key is empty. ${WHAT_TO_PASTE}`)],
      ['hello world', refusal('ssh-key.malformed', `This is not an OpenSSH public key. ${WHAT_TO_PASTE}`)],
      [FINGERPRINT_BY_SSH_KEYGEN, refusal('ssh-key.malformed', `This is not an OpenSSH public key. ${WHAT_TO_PASTE}`)],
      ['ssh-ed25519', refusal('ssh-key.malformed', `The line has no key after "ssh-ed25519". ${WHAT_TO_PASTE}`)],
      [
        `${ED25519.line}\n${ECDSA_256.line}`,
        refusal(
          'ssh-key.malformed',
          `Paste one key, on one line (add each of several keys on its own). ${WHAT_TO_PASTE}`,
        ),
      ],
      [
        ED25519.privateKey,
        refusal(
          'ssh-key.private-key',
          'This is a private key, which must stay on your computer: the board did not keep it. Paste the public key ' +
            'instead, the contents of the file of the same name ending in .pub, such as ~/.ssh/id_ed25519.pub.',
        ),
      ],
      [
        dsaKeyLine(),
        refusal('ssh-key.unsupported-type', `DSA keys are not accepted: OpenSSH itself gave them up. ${MAKE_A_KEY}`),
      ],
      [
        RSA_1024.line,
        refusal('ssh-key.rsa-too-short', `This RSA key has 1024 bits; at least 2048 are needed. ${MAKE_A_KEY}`),
      ],
      [
        keyLine('sk-ssh-ed25519@openssh.com', Buffer.concat([sshString('sk-ssh-ed25519@openssh.com'), ed25519Blob])),
        refusal(
          'ssh-key.unsupported-type',
          'Keys of type "sk-ssh-ed25519@openssh.com" are not accepted; these are: ssh-ed25519, ecdsa-sha2-nistp256, ' +
            `ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-rsa (RSA of 2048 bits or more). ${MAKE_A_KEY}`,
        ),
      ],
      [
        keyLine('ssh-ed25519-cert-v01@openssh.com', ed25519Blob),
        refusal('ssh-key.unsupported-type', `Certificates are not accepted, only plain public keys. ${WHAT_TO_PASTE}`),
      ],
      [
        // The line says ECDSA, the blob is an Ed25519 key.
        keyLine('ecdsa-sha2-nistp256', ed25519Blob),
        refusal(
          'ssh-key.malformed',
          `The line says "ecdsa-sha2-nistp256" but its key data is of type "ssh-ed25519". ${WHAT_TO_PASTE}`,
        ),
      ],
      [
        `ssh-ed25519 ${ed25519Blob.toString('base64').slice(0, -3)}`,
        refusal(
          'ssh-key.malformed',
          `The key after the type is not valid base64: was the line cut or changed? ${WHAT_TO_PASTE}`,
        ),
      ],
      [
        keyLine('ssh-ed25519', ed25519Blob.subarray(0, ed25519Blob.length - 4)),
        refusal('ssh-key.malformed', `The key data is cut short: was the line cut? ${WHAT_TO_PASTE}`),
      ],
      [
        keyLine('ssh-ed25519', Buffer.concat([ed25519Blob, sshString('more')])),
        refusal('ssh-key.malformed', `The key data goes on past the key. ${WHAT_TO_PASTE}`),
      ],
      [
        // An ECDSA "key" whose point is not on the curve.
        keyLine(
          'ecdsa-sha2-nistp256',
          Buffer.concat([
            sshString('ecdsa-sha2-nistp256'),
            sshString('nistp256'),
            sshString(Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)])),
          ]),
        ),
        refusal('ssh-key.malformed', `The key data is not a valid key. ${WHAT_TO_PASTE}`),
      ],
      [
        '---- BEGIN SSH2 PUBLIC KEY ----\nAAAAC3NzaC1lZDI1NTE5AAAAIMgpVmIgPR8JIQ0x4dj1WdGlgO0ZIUnR81f3lX5XC1be\n---- END SSH2 PUBLIC KEY ----',
        refusal(
          'ssh-key.malformed',
          "This is a key in the SSH2 (RFC 4716) format: turn it into OpenSSH's with `ssh-keygen -i -f key.pub`. " +
            WHAT_TO_PASTE,
        ),
      ],
      [
        `${ED25519.line} ${'x'.repeat(16 * 1024)}`,
        refusal('ssh-key.too-large', `The public key is over 16 KiB, far more than one key. ${WHAT_TO_PASTE}`),
      ],
    ];
    for (const [publicKey, problem] of refusals) {
      const response = await add(headers, { publicKey });
      expect({ status: response.statusCode, body: response.json() }, publicKey.slice(0, 60)).toEqual({
        status: 400,
        body: problem,
      });
    }
    // A PEM private key says so too, whatever its kind.
    const pem = await add(headers, {
      publicKey: '-----BEGIN RSA PRIVATE KEY-----\nMIIEow…\n-----END RSA PRIVATE KEY-----',
    });
    expect(pem.json().code).toBe('ssh-key.private-key');
    expect((await add(headers, { label: 'no key' })).json().code).toBe('request.invalid-body');
    expect((await list(headers)).json().data).toEqual([]);
    expect(await auditOf('dave')).toEqual([]);
  });

  it('refuses the same key twice with 409, whatever its comment, and a 21st key', async () => {
    const headers = await session('erin');
    const first = await added(headers, ED25519.line, 'desk');
    const again = await add(headers, { publicKey: `${keyLine(ED25519.type, ED25519.blob)} other comment` });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      type: '/_baud/api/v1/errors/409',
      title: 'Conflict',
      status: 409,
      detail: `You have registered this key already (id ${first.id}, "desk").`,
      code: 'ssh-key.duplicate',
    });
    for (let count = 1; count < 20; count += 1) await added(headers, newSshKey('ed25519').line);
    const beyond = await add(headers, { publicKey: newSshKey('ed25519').line });
    expect(beyond.statusCode).toBe(409);
    expect(beyond.json()).toEqual({
      type: '/_baud/api/v1/errors/409',
      title: 'Conflict',
      status: 409,
      detail: 'You have 20 SSH keys already: remove one first.',
      code: 'ssh-key.limit-reached',
    });
    expect((await list(headers)).json().meta.count).toBe(20);
    // Another user may register a key erin has: it is theirs to prove with.
    expect((await added(await session('fred'), ED25519.line)).fingerprint).toBe(ED25519.fingerprint);
    // Room again once one goes.
    expect((await remove(headers, first.id)).statusCode).toBe(204);
    await added(headers, ED25519.line);
  });

  it("removes a key with 204; an unknown id and someone else's answer the same 404", async () => {
    const gina = await session('gina');
    const fred = await session('fred');
    const ginas = await added(gina, ECDSA_256.line);
    const kept = await added(gina, RSA_2048.line);
    const freds = (await list(fred)).json().data[0];

    const notFound = {
      type: '/_baud/api/v1/errors/404',
      title: 'Not Found',
      status: 404,
      detail: 'You have no SSH key with this id.',
      code: 'ssh-key.not-found',
    };
    const others = await remove(gina, freds.id);
    expect(others.statusCode).toBe(404);
    expect(others.json()).toEqual(notFound);
    expect((await remove(gina, 2_000_000)).json()).toEqual(notFound);
    expect((await remove(gina, 'abc')).json().code).toBe('request.invalid-path');
    expect((await remove(gina, 0)).json().code).toBe('request.invalid-path');

    const removed = await remove(gina, ginas.id);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expect((await remove(gina, ginas.id)).json()).toEqual(notFound);
    expect((await list(gina)).json().data).toEqual([kept]);
    expect((await list(fred)).json().data).toEqual([freds]);
    expect((await auditOf('gina')).map((entry) => entry.action)).toEqual([
      'user.ssh-key-added',
      'user.ssh-key-added',
      'user.ssh-key-removed',
    ]);
    expect((await auditOf('gina'))[2]).toEqual({
      actor: 'gina',
      action: 'user.ssh-key-removed',
      detail: `SSH key ${ginas.id} "phone" (ecdsa-sha2-nistp256 ${ECDSA_256.fingerprint}) removed`,
    });
  });

  it('keeps the limit and the one-of-each rule when adds race: 25 keys at once give 20, one key 5 times gives 1', async () => {
    const headers = await session('hana');
    const raced = await Promise.all(
      Array.from({ length: 25 }, () => add(headers, { publicKey: newSshKey('ed25519').line })),
    );
    expect(raced.map((response) => response.statusCode).sort()).toEqual([
      ...Array<number>(20).fill(201),
      ...Array<number>(5).fill(409),
    ]);
    expect((await list(headers)).json().meta.count).toBe(20);
    const ivan = await session('ivan');
    const same = await Promise.all(Array.from({ length: 5 }, () => add(ivan, { publicKey: ECDSA_384.line })));
    expect(same.map((response) => response.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    expect((await list(ivan)).json().meta.count).toBe(1);
  });

  it('lets an API key list the keys with scope read, but never add or remove one (403, as for the password)', async () => {
    const own = await session('alice');
    const [existing] = (await list(own)).json().data;
    const { key } = await board.board.apiKeys.generate('alice', 'bot', 'read,write');
    const apiKey = { 'x-baud-api-key': key };
    const listed = await list(apiKey);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toEqual([existing]);
    const readOnly = { 'x-baud-api-key': (await board.board.apiKeys.generate('alice', 'reader', 'read')).key };
    expect((await list(readOnly)).statusCode).toBe(200);

    const forbidden = (doing: string) => ({
      type: '/_baud/api/v1/errors/403',
      title: 'Forbidden',
      status: 403,
      detail: `Only a login session may ${doing} SSH keys, not an API key: log in and send its access token.`,
      code: 'account.login-session-required',
    });
    const adding = await add(apiKey, { publicKey: newSshKey('ed25519').line });
    expect(adding.statusCode).toBe(403);
    expect(adding.json()).toEqual(forbidden('add'));
    const removing = await remove(apiKey, existing.id);
    expect(removing.statusCode).toBe(403);
    expect(removing.json()).toEqual(forbidden('remove'));
    expect((await list(own)).json().data).toEqual([existing]);

    for (const answer of [await list({}), await add({}, { publicKey: ED25519.line }), await remove({}, existing.id)]) {
      expect(answer.statusCode).toBe(401);
      expect(answer.json().code).toBe('auth.required');
    }
  });

  it("removes the user's SSH keys with a password change, their own and the console's, and says so in the audit log", async () => {
    const headers = await session('bob');
    const bobsKeys = (await list(headers)).json().data;
    expect(bobsKeys).toHaveLength(5);
    const fredsKeys = (await list(await session('fred'))).json().data;

    const changed = await board.app.inject({
      method: 'PUT',
      url: `${API}/users/me/password`,
      headers,
      payload: { currentPassword: PASSWORD, newPassword: 'a brand new password' },
    });
    expect(changed.statusCode).toBe(204);
    expect((await list(headers)).json().data).toEqual([]);
    expect((await list(await session('fred'))).json().data).toEqual(fredsKeys);
    expect((await auditOf('bob')).at(-1)).toEqual({
      actor: 'bob',
      action: 'user.password-changed',
      detail: 'changed by the user; other login sessions ended, API keys revoked; 5 SSH keys removed',
    });

    await added(headers, ED25519.line);
    expect(await board.board.credentials.setPassword('bob', 'the sysop chose this')).toEqual({
      webhooksDeactivated: 0,
    });
    const bobsRows = await board.board.db
      .selectFrom('sshKeys')
      .innerJoin('users', 'users.id', 'sshKeys.userId')
      .select('sshKeys.id')
      .where('users.username', '=', 'bob')
      .execute();
    expect(bobsRows).toEqual([]);
    expect((await auditOf('bob')).at(-1)).toEqual({
      actor: null,
      action: 'user.password-changed',
      detail: 'set at the console; login sessions ended, API keys revoked; 1 SSH key removed',
    });
  });
});
