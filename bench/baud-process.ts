import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopChild } from './child-processes.js';
import type { Cleanup } from './cleanup.js';

/** How to run the compiled `baud` command against one board. */
export interface BaudInstallation {
  readonly baudCommand: string;
  readonly configPath: string;
}

/**
 * Runs `baud <args> --config <file> --json` as an operator would and returns its parsed JSON
 * output. Each stderr line goes to `onStderrLine` (progress of long commands); `onSpawn` gets the
 * process id at once (to watch its memory); a non-zero exit fails with the command's own message.
 */
export function runBaudCommand<T>(
  baud: BaudInstallation,
  args: readonly string[],
  options: { input?: string; onStderrLine?: (line: string) => void; onSpawn?: (pid: number) => void } = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(baud.baudCommand, [...args, '--config', baud.configPath, '--json'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onStderrLine?.(line);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`baud ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      try {
        resolve(JSON.parse(stdout) as T);
      } catch {
        reject(new Error(`baud ${args.join(' ')} printed no JSON: ${stdout.slice(0, 300)}`));
      }
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Where a node takes SSH callers, as its `SSH:` line says. */
export interface SshEndpoint {
  readonly address: string;
  readonly port: number;
  /** The host key's `SHA256:…` fingerprint, which a caller checks before logging in. */
  readonly fingerprint: string;
}

/** The endpoint of `  SSH:    ssh -p PORT user@host   (host key SHA256:…)` in `baud serve`'s output, if there is one. */
function sshEndpointIn(output: string): SshEndpoint | null {
  const match = /^\s*SSH:\s+ssh -p (\d+) \S+@(\S+)\s+\(host key (\S+)\)/m.exec(output);
  if (!match?.[1] || !match[2] || !match[3]) return null;
  return { address: match[2], port: Number(match[1]), fingerprint: match[3] };
}

export interface RunningServer {
  readonly pid: number;
  /** The API base URL the server printed (`…/_baud/api/v1`). */
  readonly apiUrl: string;
  /** The SSH server the node printed, or null when its configuration leaves SSH off. */
  readonly ssh: SshEndpoint | null;
  readonly process: ChildProcess;
  /** SIGTERM (in-flight requests finish), SIGKILL after the grace period. */
  stop(): Promise<void>;
}

/**
 * Starts `baud serve` as its own process. Its stdout and stderr (the request log included)
 * go to `logFile`, as they would to a journal, so reading them costs the orchestrator nothing;
 * the `API:` and `SSH:` lines are read back from there (one write prints them together).
 */
export async function startBaudServer(
  baud: BaudInstallation,
  logFile: string,
  cleanup: Cleanup,
  timeoutMs = 60_000,
): Promise<RunningServer> {
  const log = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(baud.baudCommand, ['serve', '--config', baud.configPath], {
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  const server = child;
  const stop = cleanup.defer(`stop baud serve (pid ${server.pid})`, () => stopChild(server, 10_000));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = readFileSync(logFile, 'utf8');
    const match = /^\s*API:\s+(\S+)/m.exec(text);
    if (match?.[1] && server.pid !== undefined) {
      return { pid: server.pid, apiUrl: match[1], ssh: sshEndpointIn(text), process: server, stop };
    }
    if (server.exitCode !== null || server.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`baud serve did not start:\n${text.slice(-2000)}`);
    }
    await sleep(50);
  }
}
