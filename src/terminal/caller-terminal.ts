import { createKeyDecoder, type Key } from './key-input.js';
import { createLineEditor, type LineEditorOptions } from './line-editor.js';
import { type Line, wrapLines } from './styled-text.js';
import type { TerminalConnection, TerminalSize } from './terminal-connection.js';
import { createTerminalWriter, type TerminalWriter } from './terminal-output.js';
import type { TerminalProfile } from './terminal-profile.js';
import type { Theme } from './theme.js';

/** Thrown into whatever waits for input when the caller is gone: it unwinds the screens. */
export class CallerGoneError extends Error {
  override readonly name = 'CallerGoneError';
  constructor() {
    super('the caller hung up');
  }
}

/** A screen's content for a terminal of `size`: drawn again whole when the window changes size. */
export type View = (size: TerminalSize) => readonly Line[];

/** Something that takes keys until it has an answer (see `CallerTerminal.runInput`). */
export interface InputHandler<T> {
  /** Takes one key; returns the answer when there is one, undefined while it goes on. */
  onKey(key: Key): T | undefined;
  /** Draws the prompt and what is typed so far on the cursor's row (after `restartLine`). */
  render(): void;
}

/**
 * Bytes one turn of the event loop decodes: a 1 MB paste is worked through 16 KiB at a time,
 * with other callers served in between.
 */
const BYTES_PER_TURN = 16 * 1024;
/** Typed bytes waiting to be decoded; past this a flood is dropped rather than held in memory. */
const MAX_PENDING_INPUT_BYTES = 1024 * 1024;
/** Keys typed ahead while nothing asks for input (the screen is loading); more are dropped. */
const MAX_TYPE_AHEAD_KEYS = 256;
/** Lines printed below a screen that a redraw shows again; the tallest window holds no more. */
const MAX_TAIL_LINES = 255;
/** Notices waiting for the next prompt while the screen is loading. */
const MAX_WAITING_NOTICES = 20;

/** The window sizes screens are drawn for, whatever a transport reports. */
const clampSize = (size: TerminalSize): TerminalSize => ({
  columns: Math.min(255, Math.max(20, Math.floor(size.columns) || 80)),
  rows: Math.min(255, Math.max(5, Math.floor(size.rows) || 24)),
});

/**
 * One caller's terminal as the screens use it: typed keys in, screens and lines out, drawn
 * again when the window changes size. It owns the decoding of input (bounded: see the limits
 * above), the current screen and prompt, and the notices that arrive while the caller types.
 */
export interface CallerTerminal {
  readonly profile: TerminalProfile;
  readonly theme: Theme;
  readonly writer: TerminalWriter;
  size(): TerminalSize;
  isGone(): boolean;
  /** Clears the screen and draws `view`; a resize draws it again. Lines printed after it go with it. */
  show(view: View): void;
  /** Writes a line below the screen (kept for a redraw). */
  print(line: Line): void;
  /** Keeps a line that is on screen already (an echoed one) for a redraw. */
  rememberLine(line: Line): void;
  /** Reads one line at a prompt: the text on Enter, null on Ctrl-C / Ctrl-D. Rejects with CallerGoneError. */
  readLine(options: LineEditorOptions): Promise<string | null>;
  /** Waits for one key `accepts` (any, if not given) at a prompt; the key is echoed when it is a character. */
  readKey(prompt: Line, accepts?: (key: Key) => boolean): Promise<Key>;
  /** Gives keys to `handler` until it answers. Rejects with CallerGoneError. */
  runInput<T>(handler: InputHandler<T>): Promise<T>;
  /** Ends the prompt waiting now (if any) as if it had answered `answer`: a pause that times out. */
  endInput(answer: unknown): void;
  /** Shows a one-line notice above the prompt, the caller's typing kept as it was. */
  notice(line: Line): void;
  /** Writes `line` (if any) and hangs up. */
  hangUp(line?: Line): void;
  /** Called whenever the caller sends anything (the idle timer). */
  onInput(listener: () => void): void;
  /** Called once when the connection is gone, whoever ended it. */
  onGone(listener: () => void): void;
}

interface WaitingInput {
  readonly handler: InputHandler<unknown>;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export function createCallerTerminal(
  connection: TerminalConnection,
  options: { profile: TerminalProfile; theme: Theme },
): CallerTerminal {
  const { profile, theme } = options;
  const writer = createTerminalWriter(connection, profile);
  const decoder = createKeyDecoder(profile.charset);
  const inputListeners: (() => void)[] = [];
  const goneListeners: (() => void)[] = [];
  let isGone = false;
  /** `end` was called: the transport closes (and calls onClose) when it has written what it holds. */
  let isHangingUp = false;
  let view: View | null = null;
  let tail: Line[] = [];
  let waiting: WaitingInput | null = null;
  let typeAhead: Key[] = [];
  let waitingNotices: Line[] = [];
  const chunks: Buffer[] = [];
  let pendingBytes = 0;
  let isDecoding = false;

  const size = () => clampSize(connection.size);

  function deliver(key: Key): void {
    if (waiting === null) {
      if (typeAhead.length < MAX_TYPE_AHEAD_KEYS) typeAhead.push(key);
      return;
    }
    const current = waiting;
    const answer = current.handler.onKey(key);
    if (answer !== undefined && waiting === current) {
      waiting = null;
      current.resolve(answer);
    }
  }

  /** Decodes at most BYTES_PER_TURN of what is waiting, then lets the event loop go on. */
  function decodeSome(): void {
    let budget = BYTES_PER_TURN;
    while (budget > 0 && chunks.length > 0 && !isGone) {
      const chunk = chunks[0] as Buffer;
      const part = chunk.length <= budget ? chunk : chunk.subarray(0, budget);
      if (part === chunk) chunks.shift();
      else chunks[0] = chunk.subarray(budget);
      budget -= part.length;
      pendingBytes -= part.length;
      decoder.decode(part, deliver);
    }
    if (chunks.length > 0 && !isGone) setImmediate(decodeSome);
    else isDecoding = false;
  }

  connection.onData((bytes) => {
    if (isGone || bytes.length === 0) return;
    for (const listener of inputListeners) listener();
    // What does not fit is dropped: a caller typing faster than this is flooding, not typing.
    const kept = bytes.subarray(0, Math.max(0, MAX_PENDING_INPUT_BYTES - pendingBytes));
    if (kept.length === 0) return;
    chunks.push(kept);
    pendingBytes += kept.length;
    if (!isDecoding) {
      isDecoding = true;
      decodeSome();
    }
  });

  function drawScreen(): void {
    const { columns, rows } = size();
    let used = 0;
    if (view !== null) {
      const lines = wrapLines(view(size()), columns);
      for (const line of lines) writer.line(line);
      used = lines.length;
    }
    // What was printed below the screen, as much of its end as fits above the prompt.
    const tailRows = wrapLines(tail, columns);
    const room = Math.max(0, rows - 1 - used);
    for (const line of tailRows.slice(Math.max(0, tailRows.length - room))) writer.line(line);
  }

  // Window changes arriving together (a window dragged wider, a client sending NAWS in a loop)
  // make one redraw: a screen written per event would turn each small packet into a screenful.
  let isRedrawScheduled = false;
  connection.onResize(() => {
    if (isGone || isRedrawScheduled) return;
    isRedrawScheduled = true;
    setImmediate(() => {
      isRedrawScheduled = false;
      if (isGone) return;
      writer.clearScreen();
      drawScreen();
      waiting?.handler.render();
    });
  });

  connection.onClose(() => {
    if (isGone) return;
    isGone = true;
    chunks.length = 0;
    pendingBytes = 0;
    typeAhead = [];
    const current = waiting;
    waiting = null;
    current?.reject(new CallerGoneError());
    for (const listener of goneListeners) listener();
  });

  function addToTail(line: Line): void {
    tail.push(line);
    if (tail.length > MAX_TAIL_LINES) tail = tail.slice(tail.length - MAX_TAIL_LINES);
  }

  function runInput<T>(handler: InputHandler<T>): Promise<T> {
    if (isGone) return Promise.reject(new CallerGoneError());
    if (waiting !== null) return Promise.reject(new Error('a prompt is waiting already'));
    return new Promise<T>((resolve, reject) => {
      waiting = { handler, resolve: resolve as (value: unknown) => void, reject };
      for (const line of waitingNotices) {
        writer.line(line);
        addToTail(line);
      }
      waitingNotices = [];
      handler.render();
      // Keys typed while the screen was loading go to the prompt now, in order.
      const queued = typeAhead;
      typeAhead = [];
      for (let index = 0; index < queued.length; index += 1) {
        if (waiting === null) {
          typeAhead = queued.slice(index);
          break;
        }
        deliver(queued[index] as Key);
      }
    });
  }

  return {
    profile,
    theme,
    writer,
    size,
    isGone: () => isGone,

    show(next) {
      view = next;
      tail = [];
      writer.clearScreen();
      drawScreen();
    },

    print(line) {
      addToTail(line);
      writer.line(line);
    },

    rememberLine: addToTail,

    readLine(editorOptions) {
      const editor = createLineEditor({ writer, columns: () => size().columns }, editorOptions);
      return runInput(editor);
    },

    readKey(prompt, accepts = () => true) {
      return runInput<Key>({
        onKey(key) {
          if (!accepts(key)) return undefined;
          if (key.kind === 'char') writer.spans([{ text: key.char, style: theme.input }]);
          writer.newLine();
          return key;
        },
        render() {
          writer.spans(prompt);
        },
      });
    },

    runInput,

    endInput(answer) {
      const current = waiting;
      if (current === null) return;
      waiting = null;
      writer.newLine();
      current.resolve(answer);
    },

    notice(line) {
      if (isGone) return;
      if (waiting === null) {
        if (waitingNotices.length < MAX_WAITING_NOTICES) waitingNotices.push(line);
        return;
      }
      writer.restartLine();
      writer.line(line);
      addToTail(line);
      waiting.handler.render();
    },

    hangUp(line) {
      if (isGone || isHangingUp) return;
      isHangingUp = true;
      if (line) writer.line(line);
      writer.flush();
      connection.end();
    },

    onInput(listener) {
      inputListeners.push(listener);
    },

    onGone(listener) {
      goneListeners.push(listener);
    },
  };
}
