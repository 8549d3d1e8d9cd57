import iconv from 'iconv-lite';
import type { TerminalCharset } from './terminal-profile.js';

/** A key the caller pressed, as the screens see it. */
export type Key =
  /** One printable character (never a control character). */
  | { readonly kind: 'char'; readonly char: string }
  | {
      readonly kind:
        | 'enter'
        | 'backspace'
        | 'tab'
        /** Ctrl-C */
        | 'interrupt'
        /** Ctrl-D */
        | 'endOfInput'
        | 'up'
        | 'down'
        | 'left'
        | 'right'
        | 'home'
        | 'end'
        | 'pageUp'
        | 'pageDown'
        | 'delete';
    };

export type KeyKind = Key['kind'];

const NAMED: { readonly [Kind in Exclude<KeyKind, 'char'>]: Key } = {
  enter: { kind: 'enter' },
  backspace: { kind: 'backspace' },
  tab: { kind: 'tab' },
  interrupt: { kind: 'interrupt' },
  endOfInput: { kind: 'endOfInput' },
  up: { kind: 'up' },
  down: { kind: 'down' },
  left: { kind: 'left' },
  right: { kind: 'right' },
  home: { kind: 'home' },
  end: { kind: 'end' },
  pageUp: { kind: 'pageUp' },
  pageDown: { kind: 'pageDown' },
  delete: { kind: 'delete' },
};

/** CSI and SS3 finals of the keys we know; every other sequence is read whole and ignored. */
const FINAL_KEYS: Readonly<Record<string, Key>> = {
  A: NAMED.up,
  B: NAMED.down,
  C: NAMED.right,
  D: NAMED.left,
  H: NAMED.home,
  F: NAMED.end,
};
/** `ESC [ n ~` keys (VT220 and xterm numbering). */
const TILDE_KEYS: Readonly<Record<string, Key>> = {
  '1': NAMED.home,
  '7': NAMED.home,
  '4': NAMED.end,
  '8': NAMED.end,
  '3': NAMED.delete,
  '5': NAMED.pageUp,
  '6': NAMED.pageDown,
};

/** The finals after ESC that open a control string (OSC `]`, DCS `P`, SOS `X`, PM `^`, APC `_`). */
const STRING_INTRODUCERS: ReadonlySet<number> = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);

/** Parameter bytes kept of one sequence: enough for any key; a longer one is still read whole, not kept. */
const MAX_KEPT_PARAMS = 8;

const CP437_TABLE: readonly string[] = [
  ...iconv.decode(Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)), 'cp437'),
];

type State =
  | { readonly kind: 'ground' }
  | { readonly kind: 'escape' }
  | { readonly kind: 'csi'; params: string }
  | { readonly kind: 'ss3' }
  /** An OSC, DCS, SOS, PM or APC string: read up to its end (BEL or ST) and dropped. */
  | { readonly kind: 'string'; afterEscape: boolean }
  | { readonly kind: 'utf8'; codePoint: number; remaining: number; min: number };

const GROUND: State = { kind: 'ground' };

/** Turns the bytes a caller types into keys (see `createKeyDecoder`). */
export interface KeyDecoder {
  /** Decodes `bytes`, calling `onKey` for each key completed; a sequence may continue in the next call. */
  decode(bytes: Uint8Array, onKey: (key: Key) => void): void;
}

/**
 * A decoder of typed bytes for a terminal of `charset`: printable characters (UTF-8, or CP437
 * bytes for a BBS terminal), Enter from CR, LF or CR LF, Backspace from BS or DEL, Ctrl-C,
 * Ctrl-D, Tab, and the cursor and editing keys of VT and xterm escape sequences. Every other
 * escape sequence and control string (OSC, DCS…) is consumed and dropped, every other control
 * character too: nothing typed
 * can put a control character into text. Its state is a few fields whatever it is fed: a
 * sequence that never ends costs no memory, only the bytes it eats.
 */
export function createKeyDecoder(charset: TerminalCharset): KeyDecoder {
  let state: State = GROUND;
  /** The previous byte was a CR: an LF (or NUL, telnet's CR NUL) right after it is the same Enter. */
  let afterCarriageReturn = false;

  function character(codePoint: number, onKey: (key: Key) => void): void {
    // C1 controls arrive as UTF-8 too; surrogates and out-of-range values are not characters.
    if (codePoint < 0xa0 || (codePoint >= 0xd800 && codePoint <= 0xdfff) || codePoint > 0x10ffff) return;
    onKey({ kind: 'char', char: String.fromCodePoint(codePoint) });
  }

  function control(byte: number, onKey: (key: Key) => void): void {
    switch (byte) {
      case 0x0d:
        onKey(NAMED.enter);
        return;
      case 0x0a:
        onKey(NAMED.enter);
        return;
      case 0x08:
      case 0x7f:
        onKey(NAMED.backspace);
        return;
      case 0x09:
        onKey(NAMED.tab);
        return;
      case 0x03:
        onKey(NAMED.interrupt);
        return;
      case 0x04:
        onKey(NAMED.endOfInput);
        return;
      case 0x1b:
        state = { kind: 'escape' };
        return;
    }
  }

  function ground(byte: number, onKey: (key: Key) => void): void {
    const wasCarriageReturn = afterCarriageReturn;
    afterCarriageReturn = byte === 0x0d;
    if (wasCarriageReturn && (byte === 0x0a || byte === 0x00)) return;
    if (byte < 0x20 || byte === 0x7f) {
      control(byte, onKey);
      return;
    }
    if (byte < 0x80) {
      onKey({ kind: 'char', char: String.fromCharCode(byte) });
      return;
    }
    if (charset === 'cp437') {
      onKey({ kind: 'char', char: CP437_TABLE[byte] as string });
      return;
    }
    // UTF-8 lead bytes; a stray continuation byte or an invalid lead is dropped.
    if (byte >= 0xc2 && byte <= 0xdf) state = { kind: 'utf8', codePoint: byte & 0x1f, remaining: 1, min: 0x80 };
    else if (byte >= 0xe0 && byte <= 0xef) state = { kind: 'utf8', codePoint: byte & 0x0f, remaining: 2, min: 0x800 };
    else if (byte >= 0xf0 && byte <= 0xf4) state = { kind: 'utf8', codePoint: byte & 0x07, remaining: 3, min: 0x10000 };
  }

  /** Feeds one byte; true when the byte must be read again in the ground state (it ended a broken sequence). */
  function step(byte: number, onKey: (key: Key) => void): boolean {
    switch (state.kind) {
      case 'ground':
        ground(byte, onKey);
        return false;
      case 'escape':
        if (byte === 0x5b) state = { kind: 'csi', params: '' };
        else if (byte === 0x4f) state = { kind: 'ss3' };
        else if (STRING_INTRODUCERS.has(byte)) state = { kind: 'string', afterEscape: false };
        else if (byte === 0x1b) state = { kind: 'escape' };
        else {
          state = GROUND;
          // Alt with a printable key is ignored whole; a control character after ESC still counts.
          return byte < 0x20 || byte >= 0x7f;
        }
        return false;
      case 'csi':
        if (byte >= 0x30 && byte <= 0x3f) {
          if (state.params.length < MAX_KEPT_PARAMS) state.params += String.fromCharCode(byte);
          return false;
        }
        if (byte >= 0x20 && byte <= 0x2f) return false;
        if (byte >= 0x40 && byte <= 0x7e) {
          const final = String.fromCharCode(byte);
          const { params } = state;
          state = GROUND;
          const key =
            final === '~' ? TILDE_KEYS[params] : params === '' || params === '1' ? FINAL_KEYS[final] : undefined;
          if (key) onKey(key);
          return false;
        }
        state = GROUND;
        return true;
      case 'ss3': {
        state = GROUND;
        const key = FINAL_KEYS[String.fromCharCode(byte)];
        if (key) onKey(key);
        return byte < 0x20;
      }
      case 'string':
        // Ended by BEL or ST (ESC backslash). Any other control ends it too and counts as typed,
        // so a stray ESC ] cannot swallow what the caller types next: Enter still works. An ESC
        // not followed by a backslash starts a sequence of its own.
        if (state.afterEscape) {
          if (byte === 0x5c) {
            state = GROUND;
            return false;
          }
          state = { kind: 'escape' };
          return true;
        }
        if (byte === 0x1b) state.afterEscape = true;
        else if (byte === 0x07) state = GROUND;
        else if (byte < 0x20) {
          state = GROUND;
          return true;
        }
        return false;
      case 'utf8': {
        if ((byte & 0xc0) !== 0x80) {
          state = GROUND;
          return true;
        }
        state.codePoint = (state.codePoint << 6) | (byte & 0x3f);
        state.remaining -= 1;
        if (state.remaining === 0) {
          const { codePoint, min } = state;
          state = GROUND;
          if (codePoint >= min) character(codePoint, onKey);
        }
        return false;
      }
    }
  }

  return {
    decode(bytes, onKey) {
      for (const byte of bytes) {
        if (step(byte, onKey)) step(byte, onKey);
      }
    },
  };
}
