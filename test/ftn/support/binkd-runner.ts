import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Debian's binkd: the mailer most FTN hubs run. */
export const BINKD = '/usr/sbin/binkd';

/** Whether binkd is installed here (`binkd -v` answers). */
export function isBinkdInstalled(): boolean {
  try {
    execFileSync(BINKD, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A free loopback port (taken and given back: binkd needs a number in its configuration). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

export interface BinkdNodeOptions {
  /** binkd's own address, 5D (`21:1/100@fsxnet`). */
  readonly address: string;
  /** The one link binkd knows: us. */
  readonly link: {
    readonly address: string;
    /** The session password binkd expects from us and sends us. */
    readonly password: string;
    /** Where binkd calls us (`-p -P`); not needed when we call it. */
    readonly port?: number;
  };
}

/**
 * A binkd node in a temp directory, run as whoever runs the tests: its configuration, outbound,
 * inbounds and log all inside the directory (nothing in /etc or /var, no root). Files put in
 * `obox` are what it sends us; what we send lands in `inbound`, partial files in `tempInbound`.
 */
export interface BinkdNode {
  readonly dir: string;
  readonly inbound: string;
  readonly tempInbound: string;
  readonly obox: string;
  /** Runs binkd as a server only (`-s`) until `stop`; resolves to its port once it listens. */
  serve(): Promise<number>;
  /** Has binkd call the link once (`-p -P <link>`) and resolves to its exit code when it is done. */
  poll(extraArgs?: readonly string[]): Promise<number | null>;
  /** binkd's log so far (loglevel 7), for assertions and for failures' messages. */
  log(): string;
  /** Stops a serving binkd (SIGTERM to the one process this started, then SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** Stops it and deletes the directory. */
  remove(): Promise<void>;
}

export function createBinkdNode(options: BinkdNodeOptions): BinkdNode {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-binkd-'));
  const directories = {
    outbound: path.join(dir, 'outbound'),
    inbound: path.join(dir, 'inbound'),
    insecure: path.join(dir, 'inbound-insecure'),
    tempInbound: path.join(dir, 'temp-inbound'),
    obox: path.join(dir, 'obox'),
  };
  for (const directory of Object.values(directories)) mkdirSync(directory);
  const logFile = path.join(dir, 'binkd.log');
  const configFile = path.join(dir, 'binkd.conf');
  let serving: ChildProcess | null = null;
  let output = '';

  const writeConfig = (port: number) => {
    const zone = options.address.split(':')[0];
    const linkHost = options.link.port === undefined ? '-' : `127.0.0.1:${options.link.port}`;
    writeFileSync(
      configFile,
      [
        `domain fsxnet ${directories.outbound} ${zone}`,
        `address ${options.address}`,
        'sysname "binkd test hub"',
        'sysop "Test Sysop"',
        'location "Loopback"',
        'nodeinfo TCP,BINKP',
        `log ${logFile}`,
        'loglevel 7',
        'conlog 3',
        `iport ${port}`,
        'listen 127.0.0.1',
        'timeout 30s',
        `inbound ${directories.inbound}`,
        `inbound-nonsecure ${directories.insecure}`,
        `temp-inbound ${directories.tempInbound}`,
        `node ${options.link.address} ${linkHost} ${options.link.password} - ${directories.obox}`,
        '',
      ].join('\n'),
    );
  };

  const start = (args: readonly string[]): ChildProcess => {
    const child = spawn(BINKD, [...args, configFile], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    return child;
  };

  const node: BinkdNode = {
    dir,
    inbound: directories.inbound,
    tempInbound: directories.tempInbound,
    obox: directories.obox,

    async serve() {
      const port = await freePort();
      writeConfig(port);
      const child = start(['-s']);
      serving = child;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`binkd did not listen within 15 s:\n${output}`)), 15_000);
        const look = () => {
          if (output.includes(`listen on 127.0.0.1:${port}`)) {
            clearTimeout(timer);
            child.stdout?.off('data', look);
            child.stderr?.off('data', look);
            resolve();
          }
        };
        child.stdout?.on('data', look);
        child.stderr?.on('data', look);
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`binkd exited (${code}) before listening:\n${output}`));
        });
        look();
      });
      return port;
    },

    async poll(extraArgs = []) {
      writeConfig(await freePort());
      const child = start([...extraArgs, '-p', '-P', options.link.address]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`binkd's poll did not end within 30 s:\n${node.log()}`));
        }, 30_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
    },

    log() {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return output;
      }
    },

    async stop() {
      const child = serving;
      serving = null;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },

    async remove() {
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return node;
}

/** The names in binkd's directory `directory`, sorted. */
export function binkdFiles(directory: string): string[] {
  return readdirSync(directory).sort();
}
