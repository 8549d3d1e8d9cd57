import type { TerminalConnection, TerminalSize } from './terminal-connection.js';

/** What a terminal is taken to be until the client says otherwise. */
export const DEFAULT_TERMINAL_SIZE: TerminalSize = { columns: 80, rows: 24 };

const MIN_COLUMNS = 20;
const MIN_ROWS = 5;
const MAX_CELLS = 255;

/**
 * Typing held until the session listens: a caller (or a script) may type before the session has
 * drawn its first screen. Beyond this it is dropped; nobody types 4 KiB at a login prompt.
 */
const MAX_HELD_BYTES = 4096;

/**
 * The window a client reported, clamped to 20–255 × 5–255. A 0 keeps that side as it was: both
 * NAWS (RFC 1073) and SSH's pty-req use it for "not known", and a terminal of 20×5 would be a
 * worse guess than the one we had.
 */
export function reportedTerminalSize(
  reported: { readonly columns: number; readonly rows: number },
  current: TerminalSize,
): TerminalSize {
  const clamp = (value: number, min: number, known: number) =>
    value === 0 ? known : Math.min(MAX_CELLS, Math.max(min, Math.trunc(value)));
  return {
    columns: clamp(reported.columns, MIN_COLUMNS, current.columns),
    rows: clamp(reported.rows, MIN_ROWS, current.rows),
  };
}

/**
 * A terminal type as a client named it, made safe to show and log: printable ASCII, lower case,
 * at most 40 characters (RFC 1091's limit).
 */
export function terminalTypeName(said: string): string {
  return said
    .replace(/[^\x21-\x7e]/g, '')
    .slice(0, 40)
    .toLowerCase();
}

/** A TerminalConnection and the hooks its transport drives it with. */
export interface TransportConnection {
  readonly connection: TerminalConnection;
  /** The caller typed `bytes`. */
  receive(bytes: Buffer): void;
  /** The client reported a new window size. */
  resize(reported: { readonly columns: number; readonly rows: number }): void;
  /** The transport is gone: the close listeners run (once, however often this is called). */
  closed(): void;
  readonly isClosed: boolean;
}

/**
 * Builds the TerminalConnection a transport hands to the caller session: the listener lists,
 * close-once, and typing held until the session listens. `write` and `hangUp` are the
 * transport's own; neither is called once the connection is closed.
 */
export function createTransportConnection(init: {
  readonly transport: TerminalConnection['transport'];
  readonly remoteAddress: string;
  readonly isSecure: boolean;
  readonly terminalType: string;
  readonly size: TerminalSize;
  write(bytes: Buffer | string): void;
  hangUp(): void;
}): TransportConnection {
  const dataListeners: ((bytes: Buffer) => void)[] = [];
  const resizeListeners: (() => void)[] = [];
  const closeListeners: (() => void)[] = [];
  let held: Buffer[] = [];
  let heldBytes = 0;
  let size = init.size;
  let isClosed = false;
  let isHangingUp = false;

  const handOut = (bytes: Buffer) => {
    for (const listener of dataListeners) listener(bytes);
  };

  const connection: TerminalConnection = {
    transport: init.transport,
    remoteAddress: init.remoteAddress,
    isSecure: init.isSecure,
    terminalType: init.terminalType,
    get size() {
      return size;
    },
    onData(listener) {
      dataListeners.push(listener);
      if (dataListeners.length === 1 && held.length > 0) {
        // After the session's set-up has returned, not inside its call to onData.
        queueMicrotask(() => {
          const waiting = held;
          held = [];
          heldBytes = 0;
          for (const bytes of waiting) handOut(bytes);
        });
      }
    },
    onResize(listener) {
      resizeListeners.push(listener);
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    write(bytes) {
      if (!isClosed && !isHangingUp) init.write(bytes);
    },
    end() {
      if (isClosed || isHangingUp) return;
      isHangingUp = true;
      init.hangUp();
    },
  };

  return {
    connection,
    receive(bytes) {
      if (isClosed || bytes.length === 0) return;
      if (dataListeners.length > 0 && held.length === 0) {
        handOut(bytes);
      } else if (heldBytes + bytes.length <= MAX_HELD_BYTES) {
        held.push(bytes);
        heldBytes += bytes.length;
      }
    },
    resize(reported) {
      if (isClosed) return;
      const next = reportedTerminalSize(reported, size);
      if (next.columns === size.columns && next.rows === size.rows) return;
      size = next;
      for (const listener of resizeListeners) listener();
    },
    closed() {
      if (isClosed) return;
      isClosed = true;
      for (const listener of closeListeners) listener();
    },
    get isClosed() {
      return isClosed;
    },
  };
}
