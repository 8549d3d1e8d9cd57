import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { configFromObject } from '../../src/config/load-config.js';
import type { Dialect } from '../../src/db/database.js';
import { serveBoard } from '../../src/setup/serve-board.js';
import { loadOrCreateHostKey } from '../../src/terminal/ssh-host-key.js';
import { SHUTDOWN_GOODBYE } from '../../src/terminal/terminal-servers.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';
import { connectRaw } from './support/raw-connection.js';
import { createRecordingSessions } from './support/recording-session.js';
import { printedText } from './support/telnet-client.js';

const WAIT = { timeout: 10_000, interval: 20 };

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

describeEachDialect('terminal servers in baud serve', (dialect: Dialect) => {
  const cleanUps: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  });

  /** A configuration on a fresh database, serving HTTP on `webPort` and SSH and telnet on free ports. */
  function configFor(terminal: Record<string, unknown>, webPort = 0) {
    const dir = mkdtempSync(path.join(tmpdir(), 'baud-serve-terminal-'));
    const schema = `baud_test_${randomBytes(6).toString('hex')}`;
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'baud.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    cleanUps.push(async () => {
      if (dialect === 'postgres') await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    });
    const config = configFromObject({
      paths: { dataDir: dir },
      database: { url },
      logging: { level: 'silent' },
      contentServers: {
        web: { port: webPort, reader: { enabled: false } },
        ssh: { enabled: true, address: '127.0.0.1', port: 0 },
        telnet: { enabled: true, address: '127.0.0.1', port: 0 },
        ...terminal,
      },
    });
    return { config, dir };
  }

  it('serves SSH and telnet beside HTTP, and says goodbye to terminal callers first when it stops', async () => {
    const { config, dir } = configFor({});
    const sessions = createRecordingSessions();
    const running = await serveBoard(config, { startSession: sessions.startSession });
    let isStopped = false;
    cleanUps.push(async () => {
      if (!isStopped) await running.stop();
    });
    const hostKey = await loadOrCreateHostKey(path.join(dir, 'ssh_host_ed25519_key'));
    expect(hostKey.wasCreated).toBe(false);
    expect(running.ssh).toEqual({ address: '127.0.0.1', port: expect.any(Number), fingerprint: hostKey.fingerprint });
    expect(running.telnet).toEqual({ address: '127.0.0.1', port: expect.any(Number) });

    const sshCaller = await connectRaw(running.ssh?.port ?? 0);
    await vi.waitFor(() => expect(sshCaller.received().toString('latin1')).toMatch(/^SSH-2\.0-baud\r\n/), WAIT);
    const telnetCaller = await connectRaw(running.telnet?.port ?? 0);
    // WONT TERMINAL-TYPE: the session starts without waiting for one.
    telnetCaller.socket.write(Buffer.from([255, 252, 24]));
    await vi.waitFor(() => expect(printedText(telnetCaller.received())).toContain('login:'), WAIT);
    const stopping = running.stop().then(() => {
      isStopped = true;
    });
    await telnetCaller.closed;
    expect(printedText(telnetCaller.received())).toMatch(new RegExp(`login:\\r\\n\\r\\n${SHUTDOWN_GOODBYE}\\r\\n$`));
    await sshCaller.closed;
    await stopping;
    await expect(fetch(`${running.url}/system/info`)).rejects.toThrow();
  });

  it('stops start-up on a host key it cannot read, naming the path, and leaves the HTTP port free', async () => {
    const webPort = await freePort();
    const { config, dir } = configFor({}, webPort);
    const keyPath = path.join(dir, 'ssh_host_ed25519_key');
    mkdirSync(keyPath);
    const sessions = createRecordingSessions();
    await expect(serveBoard(config, { startSession: sessions.startSession })).rejects.toThrow(
      `contentServers.ssh.hostKeyPath: ${keyPath}: cannot be read (EISDIR)`,
    );
    const again = net.createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(webPort, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => again.close(() => resolve()));
  });
});
