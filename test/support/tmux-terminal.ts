import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe } from 'vitest';

const run = promisify(execFile);

/** The Debian programs the real-client tests drive (`.ci/run` installs them when missing). */
const REQUIRED_PROGRAMS = ['/usr/bin/tmux', '/usr/bin/ssh', '/usr/bin/telnet'] as const;

/**
 * `describe` for tests that drive real terminal clients inside tmux: skipped with a loud message
 * when a program is missing, except under CI, where a missing client fails like a missing database.
 */
export function describeWithTerminalClients(name: string, body: () => void): void {
  const missing = REQUIRED_PROGRAMS.filter((program) => !existsSync(program));
  if (missing.length === 0 || process.env.CI === 'true') {
    describe(name, body);
    return;
  }
  console.warn(
    `\n*** SKIPPING terminal client tests "${name}": ${missing.join(', ')} not found. ` +
      'Install them with: apt-get install -y tmux openssh-client telnet ***\n',
  );
  describe.skip(name, body);
}

/** A real terminal (a tmux pane of a fixed size) running one program, read like a person reads it. */
export interface TmuxTerminal {
  /** Types text as keys; `\r` is Enter. */
  type(text: string): Promise<void>;
  /** Presses named keys (`Enter`, `BSpace`, `C-c`…), as tmux names them. */
  press(...keys: string[]): Promise<void>;
  /** What the pane shows now, one string per row, trailing spaces trimmed. */
  screen(): Promise<string[]>;
  /** What the pane shows with its colours, as ANSI escape sequences (`capture-pane -e`). */
  screenWithColours(): Promise<string>;
  /** Waits until the screen holds `text` (polls; fails with the last screen after `timeoutMs`). */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string[]>;
  /** Changes the pane's size (the program sees a window change). */
  resize(columns: number, rows: number): Promise<void>;
  /** The program has exited (the pane is dead). */
  hasExited(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Starts `command` in a new detached tmux session of `columns` × `rows` on a private tmux server
 * (its own socket), so tests never touch a user's tmux. The pane stays after the program exits,
 * so its last screen can still be read.
 */
export async function openTmuxTerminal(
  command: readonly string[],
  options: { columns?: number; rows?: number; env?: Record<string, string>; term?: string } = {},
): Promise<TmuxTerminal> {
  const socket = `baud-test-${randomBytes(6).toString('hex')}`;
  const session = 'caller';
  const tmux = (...args: string[]) => run('tmux', ['-L', socket, ...args]);
  const environment = Object.entries(options.env ?? {}).flatMap(([name, value]) => ['-e', `${name}=${value}`]);
  await run(
    'tmux',
    [
      '-L',
      socket,
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      String(options.columns ?? 80),
      '-y',
      String(options.rows ?? 24),
      ...environment,
      ...command,
    ],
    { env: { ...process.env, TERM: options.term ?? 'xterm-256color' } },
  );
  await tmux('set-option', '-t', session, 'remain-on-exit', 'on');
  // tmux leaves its socket file behind when its server is killed: close() removes it.
  const socketPath = (await tmux('display-message', '-p', '#{socket_path}')).stdout.trim();

  async function screen(): Promise<string[]> {
    const { stdout } = await tmux('capture-pane', '-p', '-t', session);
    // Every row ends with a newline, the last one too: no row follows it.
    return stdout
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => line.trimEnd());
  }

  return {
    async type(text) {
      await tmux('send-keys', '-t', session, '-l', text);
    },
    async press(...keys) {
      await tmux('send-keys', '-t', session, ...keys);
    },
    screen,
    async screenWithColours() {
      const { stdout } = await tmux('capture-pane', '-p', '-e', '-t', session);
      return stdout;
    },
    async waitFor(text, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rows = await screen();
        const shown = rows.join('\n');
        if (typeof text === 'string' ? shown.includes(text) : text.test(shown)) return rows;
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${String(text)}; it shows:\n${shown}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async resize(columns, rows) {
      await tmux('resize-window', '-t', session, '-x', String(columns), '-y', String(rows));
    },
    async hasExited() {
      const { stdout } = await tmux('display-message', '-p', '-t', session, '#{pane_dead}');
      return stdout.trim() === '1';
    },
    async close() {
      try {
        execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
      } catch {
        // Already gone: the server exits with its last session.
      }
      rmSync(socketPath, { force: true });
    },
  };
}
