/**
 * What a caller's terminal can show, decided once from the type it announced:
 * - `utf8`: ANSI colour and cursor sequences, text in UTF-8 — every modern terminal (xterm,
 *   screen, tmux, linux, vt100…), and the default for a type we do not know.
 * - `cp437`: ANSI colour and cursor sequences, text in code page 437 — the PC's own character
 *   set, which BBS terminals (SyncTERM, NetRunner, qodem in BBS mode, DOS clients) expect. They
 *   announce themselves as `ansi-bbs`, `syncterm`, `pcansi` or plain `ansi`: `ansi` is what DOS
 *   and BBS clients send, while Unix terminals always give a more precise name (`xterm`, `vt…`).
 *   Their bright colours are bold ones (ANSI.SYS knows no 90–97).
 * - `ascii`: printable ASCII and line ends only, no escape sequence at all — `dumb`, or a client
 *   that named no type (a bare telnet or an SSH session without a pty). Box and line characters
 *   become `+`, `-` and `|`.
 */
export type TerminalCharset = 'utf8' | 'cp437' | 'ascii';

export interface TerminalProfile {
  readonly charset: TerminalCharset;
  /** Escape sequences (colour, clearing, erasing a line) may be sent. */
  readonly hasEscapes: boolean;
}

const CP437_TERMINAL_TYPES: ReadonlySet<string> = new Set(['ansi-bbs', 'syncterm', 'pcansi', 'ansi']);
const ASCII_TERMINAL_TYPES: ReadonlySet<string> = new Set(['dumb', '']);

/** The profile of a terminal that announced `terminalType` (lower case, '' for none). */
export function terminalProfileOf(terminalType: string): TerminalProfile {
  const type = terminalType.trim().toLowerCase();
  if (ASCII_TERMINAL_TYPES.has(type)) return { charset: 'ascii', hasEscapes: false };
  if (CP437_TERMINAL_TYPES.has(type)) return { charset: 'cp437', hasEscapes: true };
  return { charset: 'utf8', hasEscapes: true };
}
