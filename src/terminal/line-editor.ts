import type { Key } from './key-input.js';
import { type Line, lineColumns, type Style } from './styled-text.js';
import type { TerminalWriter } from './terminal-output.js';
import { charColumns, tailToColumns, textColumns } from './text-width.js';

/** Characters one typed line holds at most, unless a prompt asks for fewer. */
export const MAX_LINE_CHARACTERS = 500;

export interface LineEditorOptions {
  readonly prompt: Line;
  /** Characters (code points) the line may hold; what is typed beyond is not taken. */
  readonly maxLength?: number;
  /** Nothing typed is shown (passwords, codes). */
  readonly isHidden?: boolean;
  /** Text the line starts with, which the caller may rub out and change (a reply's subject). */
  readonly initial?: string;
  /** How what is typed is drawn. */
  readonly inputStyle?: Style;
  /**
   * Characters that answer at once when typed first, without Enter (a list's command keys,
   * beside numbers that need Enter): the answer is that character.
   */
  readonly isHotkey?: (char: string) => boolean;
}

/** What a line editor needs of the terminal it runs on. */
export interface EditorTerminal {
  readonly writer: TerminalWriter;
  /** The terminal's width now (it may change while the caller types). */
  columns(): number;
}

/** One line being typed at a prompt: the keys it takes, and how to draw it again. */
export interface LineEditor {
  /** Takes one key; returns the line on Enter, null on Ctrl-C or Ctrl-D, undefined while typing goes on. */
  onKey(key: Key): string | null | undefined;
  /** Draws the prompt and what is typed on the cursor's row (after `restartLine`). */
  render(): void;
}

/**
 * A line editor with echo (the transports turn the terminal's local echo off): printable
 * characters are added up to the cap, Backspace rubs out the last one, Enter ends the line,
 * Ctrl-C or Ctrl-D gives up. Other keys (arrows, Tab) do nothing. A line wider than the screen
 * scrolls sideways, so the prompt and the input always share one row and can be drawn again
 * whole after a notice or a resize.
 */
export function createLineEditor(terminal: EditorTerminal, options: LineEditorOptions): LineEditor {
  const { writer } = terminal;
  const maxLength = Math.min(options.maxLength ?? MAX_LINE_CHARACTERS, MAX_LINE_CHARACTERS);
  const isHidden = options.isHidden ?? false;
  const chars: string[] = [...(options.initial ?? '')].slice(0, maxLength);
  const promptColumns = lineColumns(options.prompt);
  let shownColumns = isHidden ? 0 : textColumns(chars.join(''));

  /** Columns left for the input on the prompt's row (one kept free for the cursor). */
  const room = () => Math.max(1, terminal.columns() - promptColumns - 1);

  function render(): void {
    writer.spans(options.prompt);
    if (isHidden) return;
    const visible = writer.profile.hasEscapes ? tailToColumns(chars.join(''), room()) : chars.join('');
    shownColumns = textColumns(visible);
    writer.spans([{ text: visible, ...(options.inputStyle ? { style: options.inputStyle } : {}) }]);
  }

  function redraw(): void {
    writer.restartLine();
    render();
  }

  function add(char: string): void {
    if (chars.length >= maxLength) return;
    chars.push(char);
    if (isHidden) return;
    const width = charColumns(char);
    // Scrolling sideways needs escapes; an ASCII terminal wraps the line itself.
    if (writer.profile.hasEscapes && shownColumns + width > room()) {
      redraw();
      return;
    }
    shownColumns += width;
    writer.spans([{ text: char, ...(options.inputStyle ? { style: options.inputStyle } : {}) }]);
  }

  function rubOut(): void {
    const char = chars.pop();
    if (char === undefined || isHidden) return;
    const width = charColumns(char);
    const wasScrolled = textColumns(chars.join('')) + width > shownColumns;
    if (writer.profile.hasEscapes && wasScrolled) {
      redraw();
      return;
    }
    shownColumns -= width;
    for (let column = 0; column < width; column += 1) writer.rubOut();
  }

  return {
    onKey(key) {
      switch (key.kind) {
        case 'char':
          if (chars.length === 0 && options.isHotkey?.(key.char)) {
            add(key.char);
            writer.newLine();
            return key.char;
          }
          add(key.char);
          return undefined;
        case 'backspace':
          rubOut();
          return undefined;
        case 'enter':
          writer.newLine();
          return chars.join('');
        case 'interrupt':
        case 'endOfInput':
          writer.newLine();
          return null;
        default:
          return undefined;
      }
    },
    render,
  };
}
