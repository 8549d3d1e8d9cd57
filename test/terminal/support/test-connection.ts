import type { TerminalConnection, TerminalSize } from '../../../src/terminal/terminal-connection.js';

/**
 * A terminal connection driven by a test, as the SSH and telnet servers would hand one to the
 * session: the test types bytes, resizes the window and hangs up; everything the session writes
 * is kept, and `onWrite` listeners hear of each write (to wait for output without sleeping).
 */
export interface TestConnection extends TerminalConnection {
  size: TerminalSize;
  /** The caller types: text as UTF-8, or raw bytes as given. */
  type(input: string | Buffer): void;
  /** The window changes size (SSH window-change, telnet NAWS). */
  resize(columns: number, rows: number): void;
  /** The caller drops the line (network gone): the session is told its connection closed. */
  drop(): void;
  /** Every byte the session wrote, in order. */
  written(): Buffer;
  readonly isClosed: boolean;
  /** Whether the session itself hung up (`end`). */
  readonly wasEnded: boolean;
  /** Hears of each write and of the close; returns the unsubscribe. */
  onWrite(listener: () => void): () => void;
}

export function createTestConnection(
  options: {
    terminalType?: string;
    columns?: number;
    rows?: number;
    transport?: 'ssh' | 'telnet';
    remoteAddress?: string;
  } = {},
): TestConnection {
  const dataListeners: ((bytes: Buffer) => void)[] = [];
  const resizeListeners: (() => void)[] = [];
  const closeListeners: (() => void)[] = [];
  const writeListeners: (() => void)[] = [];
  const chunks: Buffer[] = [];
  let isClosed = false;
  let wasEnded = false;

  const close = () => {
    if (isClosed) return;
    isClosed = true;
    for (const listener of closeListeners) listener();
    for (const listener of [...writeListeners]) listener();
  };

  return {
    transport: options.transport ?? 'telnet',
    remoteAddress: options.remoteAddress ?? '127.0.0.1',
    isSecure: (options.transport ?? 'telnet') === 'ssh',
    terminalType: options.terminalType ?? 'xterm-256color',
    size: { columns: options.columns ?? 80, rows: options.rows ?? 24 },
    onData(listener) {
      dataListeners.push(listener);
    },
    onResize(listener) {
      resizeListeners.push(listener);
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    write(bytes) {
      if (isClosed) return;
      chunks.push(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes));
      for (const listener of [...writeListeners]) listener();
    },
    end() {
      wasEnded = true;
      // A transport closes once it has written what it holds: after this turn, as a socket would.
      setImmediate(close);
    },
    type(input) {
      if (isClosed) throw new Error('the connection is closed: nobody is there to type');
      const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
      for (const listener of dataListeners) listener(bytes);
    },
    resize(columns, rows) {
      this.size = { columns, rows };
      for (const listener of resizeListeners) listener();
    },
    drop: close,
    written: () => Buffer.concat(chunks),
    get isClosed() {
      return isClosed;
    },
    get wasEnded() {
      return wasEnded;
    },
    onWrite(listener) {
      writeListeners.push(listener);
      return () => {
        const index = writeListeners.indexOf(listener);
        if (index >= 0) writeListeners.splice(index, 1);
      };
    },
  };
}
