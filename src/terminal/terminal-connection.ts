/**
 * One caller's terminal, whatever carries it: the SSH and telnet servers each turn their
 * protocol into this, and the caller session (screens, login prompt, notices) only ever sees
 * this. Bytes in are what the caller typed, with the transport's own commands removed (telnet
 * IAC sequences); bytes out are written as given (the session encodes text for the terminal).
 */
export interface TerminalConnection {
  readonly transport: 'ssh' | 'telnet';
  /** The caller's IP address (the login throttle's address window, the connection caps). */
  readonly remoteAddress: string;
  /** Encrypted (SSH) or not (telnet): recorded on the login session like the API's TLS flag. */
  readonly isSecure: boolean;
  /** What the client calls its terminal (`xterm-256color`, `ansi`, `dumb`…), lower case; '' when it said nothing. */
  readonly terminalType: string;
  /** The window in character cells, clamped by the transport to 20–255 columns and 5–255 rows. */
  readonly size: TerminalSize;
  /** What the caller typed, in the order typed. */
  onData(listener: (bytes: Buffer) => void): void;
  /** The window changed size (SSH window-change, telnet NAWS); `size` already holds the new one. */
  onResize(listener: () => void): void;
  /** The connection is gone (caller hung up, network dropped, or `end` was called). Called once. */
  onClose(listener: () => void): void;
  write(bytes: Buffer | string): void;
  /** Hangs up after writing what was written; `onClose` listeners run. */
  end(): void;
}

export interface TerminalSize {
  readonly columns: number;
  readonly rows: number;
}
