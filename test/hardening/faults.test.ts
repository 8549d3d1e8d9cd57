import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { buildMultipart, fileEnvelope } from '../support/multipart.js';
import { describeEachDialect } from '../support/test-board.js';
import { api, field, listAll, login, mapConcurrently, type Session } from './support/api-client.js';
import {
  API_PREFIX,
  type BaudProcess,
  createHardeningBoard,
  type HardeningBoard,
  sleep,
} from './support/baud-process.js';

/**
 * Faults a real `baud serve` must survive: SIGKILL in the middle of a storm of posts and of an
 * upload, SIGTERM in the middle of a download. Each scenario runs against a real process over
 * real HTTP and restarts the board the way an operator (or a supervisor) would.
 */

const AREA = 'storm';
const FILE_AREA = 'uploads';
const STORAGE_TAG = 'main';

const BOARD_CONFIG = {
  messageConferences: { main: { name: 'Main', areas: { [AREA]: { name: 'Storm' } } } },
  fileBase: {
    storageTags: { [STORAGE_TAG]: 'files/main' },
    areas: { [FILE_AREA]: { name: 'Uploads', storageTags: [STORAGE_TAG], acs: { write: 'GM[users]' } } },
  },
};

const users = Array.from({ length: 4 }, (_, index) => ({
  username: `stormer${index}`,
  password: `storm-password-${index}-x`,
}));

/** Posts planned for the storm, clients posting at once, acknowledgements before the kill. */
const STORM_POSTS = 400;
const STORM_CONCURRENCY = 16;
const KILL_AFTER_ACKNOWLEDGED = 120;

interface StoredMessage {
  readonly messageId: number;
  readonly uuid: string;
  readonly fromUserName: string;
  readonly subject: string;
}

describeEachDialect('faults of a real server process', (dialect) => {
  let board: HardeningBoard;
  let server: BaudProcess | null = null;

  beforeAll(async () => {
    board = createHardeningBoard(dialect, BOARD_CONFIG);
    await board.addUsers(users);
  }, 60_000);
  afterAll(async () => {
    await board?.destroy();
  });

  async function runningServer(): Promise<BaudProcess> {
    if (server === null || server.hasExited()) server = await board.start();
    return server;
  }

  async function sessionsOn(running: BaudProcess): Promise<Session[]> {
    return Promise.all(users.map((user) => login(running.apiUrl, user.username, user.password)));
  }

  function storageDirectory(): string {
    return path.join(board.dir, 'files/main');
  }

  /** Stored files of the storage directory: everything but the uploads-in-progress folder. */
  function storedEntries(): string[] {
    return readdirSync(storageDirectory()).filter((name) => name !== INCOMING_DIRECTORY);
  }

  function incomingEntries(): string[] {
    const incoming = path.join(storageDirectory(), INCOMING_DIRECTORY);
    return existsSync(incoming) ? readdirSync(incoming) : [];
  }

  it('loses no acknowledged post when killed with SIGKILL in the middle of a storm of posts', async () => {
    const first = await runningServer();
    const sessions = await sessionsOn(first);

    const acknowledged = new Map<string, { subject: string; body: string; username: string }>();
    const failures: string[] = [];
    const statusesBeforeKill: number[] = [];
    let sent = 0;
    let killed = false;
    let inFlightAtKill = 0;
    let inFlight = 0;
    let next = 0;

    const worker = async () => {
      while (!killed && next < STORM_POSTS) {
        const index = next++;
        const userIndex = index % users.length;
        const session = sessions[userIndex];
        const user = users[userIndex];
        if (!session || !user) throw new Error('no session');
        const subject = `storm #${index}`;
        const body = `storm post ${index} by ${user.username}`;
        sent += 1;
        inFlight += 1;
        try {
          const answer = await api(first.apiUrl, `/messages/areas/${AREA}/messages`, {
            method: 'POST',
            token: session.accessToken,
            json: { subject, message: body },
          });
          if (!killed) statusesBeforeKill.push(answer.status);
          if (answer.status === 201) {
            acknowledged.set(field<string>(answer.json, 'uuid'), { subject, body, username: user.username });
            if (!killed && acknowledged.size >= KILL_AFTER_ACKNOWLEDGED) {
              // kill -9 right here, while the other clients' posts are still on the wire.
              killed = true;
              inFlightAtKill = inFlight - 1;
              first.signal('SIGKILL');
            }
          } else {
            failures.push(`status ${answer.status}`);
          }
        } catch (error) {
          failures.push((error as Error).message);
        } finally {
          inFlight -= 1;
        }
      }
    };
    await Promise.all(Array.from({ length: STORM_CONCURRENCY }, worker));
    const exit = await first.exited;
    expect(killed).toBe(true);
    expect(exit.signal).toBe('SIGKILL');
    // Every answer that came back before the kill was a 201: the storm itself broke nothing.
    expect(statusesBeforeKill.filter((status) => status !== 201)).toEqual([]);

    const second = await runningServer();
    const [reader] = await sessionsOn(second);
    const token = reader?.accessToken ?? '';
    const listed = await listAll<StoredMessage>(second.apiUrl, `/messages/areas/${AREA}/messages`, token);
    const listedUuids = new Set(listed.map((message) => message.uuid));
    const lost = [...acknowledged.keys()].filter((uuid) => !listedUuids.has(uuid));
    expect(lost).toEqual([]);
    // No duplicates, and the keyset order still holds.
    expect(listedUuids.size).toBe(listed.length);
    expect(new Set(listed.map((message) => message.subject)).size).toBe(listed.length);
    const outOfOrder = listed.filter(
      (message, index) => index > 0 && message.messageId <= (listed[index - 1]?.messageId ?? 0),
    );
    expect(outOfOrder).toEqual([]);

    // Every acknowledged message is readable, with the text that was sent.
    const unreadable = (
      await mapConcurrently([...acknowledged], 16, async ([uuid, sentMessage]) => {
        const read = await api(second.apiUrl, `/messages/${uuid}`, { token });
        const isIntact =
          read.status === 200 &&
          field<string>(read.json, 'subject') === sentMessage.subject &&
          field<string>(read.json, 'body') === sentMessage.body &&
          field<string>(read.json, 'fromUserName') === sentMessage.username;
        return isIntact ? null : `${uuid}: ${read.status} ${read.text.slice(0, 200)}`;
      })
    ).filter((problem) => problem !== null);
    expect(unreadable).toEqual([]);

    // The counters were written in the same transactions as the messages they count.
    const area = await api(second.apiUrl, `/messages/areas/${AREA}`, { token });
    expect(field<number>(area.json, 'messageCount')).toBe(listed.length);
    const secondSessions = await sessionsOn(second);
    for (const [index, user] of users.entries()) {
      const me = await api(second.apiUrl, '/users/me', { token: secondSessions[index]?.accessToken ?? '' });
      const stored = listed.filter((message) => message.fromUserName === user.username).length;
      expect(field<number>(me.json, 'postCount'), `postCount of ${user.username}`).toBe(stored);
    }

    // And the board takes posts again.
    const after = await api(second.apiUrl, `/messages/areas/${AREA}/messages`, {
      method: 'POST',
      token,
      json: { subject: 'after the crash', message: 'still here' },
    });
    expect(after.status).toBe(201);
    const areaAfter = await api(second.apiUrl, `/messages/areas/${AREA}`, { token });
    expect(field<number>(areaAfter.json, 'messageCount')).toBe(listed.length + 1);

    console.log(
      `faults [${dialect}]: 1 SIGKILL during a storm of ${STORM_POSTS} posts (${STORM_CONCURRENCY} clients): ` +
        `${sent} sent, ${acknowledged.size} acknowledged, ${inFlightAtKill} in flight at the kill, ` +
        `${lost.length} lost, ${listed.length - acknowledged.size} stored without acknowledgement, ` +
        `${listed.length} stored = messageCount, 0 duplicates`,
    );
  }, 180_000);

  it('leaves no file record and no stored file when killed with SIGKILL during an upload', async () => {
    const running = await runningServer();
    const [uploader] = await sessionsOn(running);
    const storedBefore = storedEntries();
    const incomingBefore = incomingEntries();

    const declaredFileBytes = 16 * 1024 * 1024;
    const envelope = fileEnvelope('killed-midway.bin', [{ name: 'desc', value: 'never finished' }]);
    const contentLength = envelope.head.length + declaredFileBytes + envelope.tail.length;
    let answered: number | null = null;
    let clientError: string | null = null;
    const upload = request(`${running.apiUrl}/files/areas/${FILE_AREA}`, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${uploader?.accessToken ?? ''}`,
        'content-type': envelope.contentType,
        'content-length': String(contentLength),
      },
    });
    upload.on('response', (response) => {
      answered = response.statusCode ?? 0;
      response.resume();
    });
    upload.on('error', (error) => {
      clientError = error.message;
    });
    upload.write(envelope.head);

    // Send slowly (64 KiB every 20 ms) until the server is demonstrably writing a temp file.
    const chunk = randomBytes(64 * 1024);
    let sentBytes = 0;
    let partBytes = 0;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && answered === null && clientError === null) {
      if (!upload.write(chunk)) await new Promise((resolve) => upload.once('drain', resolve));
      sentBytes += chunk.length;
      await sleep(20);
      partBytes = incomingEntries()
        .filter((name) => !incomingBefore.includes(name))
        .reduce((total, name) => total + statSync(path.join(storageDirectory(), INCOMING_DIRECTORY, name)).size, 0);
      if (sentBytes >= 2 * 1024 * 1024 && partBytes > 0) break;
    }
    expect(answered).toBeNull();
    expect(clientError).toBeNull();
    expect(partBytes).toBeGreaterThan(0);

    const exit = await running.kill();
    expect(exit.signal).toBe('SIGKILL');
    upload.destroy();
    expect(answered).toBeNull();
    // Nothing but the temp file in .incoming was written before the kill.
    expect(storedEntries()).toEqual(storedBefore);

    const restarted = await runningServer();
    const [reader] = await sessionsOn(restarted);
    const token = reader?.accessToken ?? '';
    const area = await api(restarted.apiUrl, `/files/areas/${FILE_AREA}`, { token });
    expect(area.status).toBe(200);
    expect(field<number>(area.json, 'fileCount')).toBe(0);
    expect(await listAll(restarted.apiUrl, `/files/areas/${FILE_AREA}/files`, token)).toEqual([]);
    // The first file id there could have been: no record, no bytes behind it.
    expect((await api(restarted.apiUrl, '/files/1', { token })).status).toBe(404);
    expect((await api(restarted.apiUrl, '/files/1/download', { token })).status).toBe(404);
    expect(storedEntries()).toEqual(storedBefore);
    const leftoverTemps = incomingEntries().filter((name) => !incomingBefore.includes(name));
    // Only upload temp files (swept after their grace period) may remain, nothing else.
    expect(leftoverTemps.filter((name) => !/^\.upload-[0-9a-f-]+\.part$/.test(name))).toEqual([]);

    console.log(
      `faults [${dialect}]: 1 SIGKILL during a slow ${declaredFileBytes / 1024 / 1024} MiB upload after ` +
        `${(sentBytes / 1024 / 1024).toFixed(2)} MiB sent (${(partBytes / 1024 / 1024).toFixed(2)} MiB in the temp file): ` +
        `0 file records, 0 stored files outside ${INCOMING_DIRECTORY}, ${leftoverTemps.length} temp file(s) left in ` +
        `${INCOMING_DIRECTORY} for the grace-period sweep`,
    );
  }, 180_000);

  it('finishes a download in progress on SIGTERM, refuses new requests, then exits with code 0', async () => {
    const running = await runningServer();
    const [uploader] = await sessionsOn(running);
    const token = uploader?.accessToken ?? '';
    const fileBytes = 24 * 1024 * 1024;
    const content = randomBytes(fileBytes);
    const expectedSha256 = createHash('sha256').update(content).digest('hex');
    const { body, contentType } = buildMultipart([{ name: 'file', fileName: 'big.bin', value: content }]);
    const uploaded = await api(running.apiUrl, `/files/areas/${FILE_AREA}`, {
      method: 'POST',
      token,
      headers: { 'content-type': contentType },
      body,
    });
    expect(uploaded.status).toBe(201);
    const fileId = field<number>(uploaded.json, 'fileId');
    expect(field<string>(uploaded.json, 'sha256')).toBe(expectedSha256);

    // Read at 6 MiB/s: the 24 MiB take ~4 s. The loopback socket buffers hold a few MiB at most,
    // so the server is still streaming the file for seconds after the signal; a process that
    // quit early would leave the download short and the hash wrong.
    const bytesPerSecond = 6 * 1024 * 1024;
    const signalAfterBytes = 2 * 1024 * 1024;
    const refusals: string[] = [];
    let signalledAt = 0;
    let refusalsDone: Promise<void> = Promise.resolve();
    const started = performance.now();
    const download = await new Promise<{ status: number; bytes: number; sha256: string; complete: boolean }>(
      (resolve, reject) => {
        const hash = createHash('sha256');
        let received = 0;
        const get = request(`${running.apiUrl}/files/${fileId}/download`, {
          agent: false,
          headers: { authorization: `Bearer ${token}` },
        });
        get.on('error', reject);
        get.on('response', (response) => {
          response.on('data', (data: Buffer) => {
            hash.update(data);
            received += data.length;
            if (signalledAt === 0 && received >= signalAfterBytes) {
              signalledAt = performance.now();
              running.signal('SIGTERM');
              refusalsDone = probeDuringShutdown(running, refusals);
            }
            const aheadMs = (received / bytesPerSecond) * 1000 - (performance.now() - started);
            if (aheadMs > 0) {
              response.pause();
              setTimeout(() => response.resume(), aheadMs);
            }
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              bytes: received,
              sha256: hash.digest('hex'),
              complete: response.complete,
            }),
          );
          response.on('error', reject);
        });
        get.end();
      },
    );
    const downloadEndedAt = performance.now();
    await refusalsDone;

    expect(signalledAt).toBeGreaterThan(0);
    expect(download).toEqual({ status: 200, bytes: fileBytes, sha256: expectedSha256, complete: true });
    // The download outlived the signal by a clear margin: it really was in flight.
    expect(downloadEndedAt - signalledAt).toBeGreaterThan(1000);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.filter((outcome) => outcome !== '503' && outcome !== 'ECONNREFUSED')).toEqual([]);

    const exit = await Promise.race([running.exited, sleep(30_000).then(() => null)]);
    const exitedAt = performance.now();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(running.stderr()).toMatch(/SIGTERM received/);
    server = null;

    const refusedCounts = refusals.reduce<Record<string, number>>((counts, outcome) => {
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      return counts;
    }, {});
    console.log(
      `faults [${dialect}]: SIGTERM during a ${fileBytes / 1024 / 1024} MiB download read at ` +
        `${bytesPerSecond / 1024 / 1024} MiB/s: download complete with the right SHA-256 ` +
        `${((downloadEndedAt - signalledAt) / 1000).toFixed(1)} s after the signal; ` +
        `${refusals.length} new requests during shutdown refused (${JSON.stringify(refusedCounts)}); ` +
        `exit code 0 ${((exitedAt - downloadEndedAt) / 1000).toFixed(1)} s after the last byte`,
    );
  }, 120_000);
});

/**
 * Once the server has logged the signal, sends fresh-connection requests every 150 ms for
 * ~1.5 s and records how each ended: a status code, or the connection error code.
 *
 * The first probe waits 100 ms after the log line: a request that lands in the few
 * milliseconds between the signal and the listener closing can be reset (ECONNRESET) rather
 * than answered 503 or refused — a known, reported race (see the hardening report), kept out
 * of this test so that it cannot flake.
 */
async function probeDuringShutdown(running: BaudProcess, outcomes: string[]): Promise<void> {
  await running.waitForOutput(/SIGTERM received/, 10_000);
  await sleep(100);
  for (let attempt = 0; attempt < 10 && !running.hasExited(); attempt++) {
    outcomes.push(await probe(`${running.origin}${API_PREFIX}/system/info`));
    await sleep(150);
  }
}

function probe(url: string): Promise<string> {
  return new Promise((resolve) => {
    const get = request(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(String(response.statusCode)));
    });
    get.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    get.setTimeout(5000, () => get.destroy(new Error('timeout')));
    get.end();
  });
}
