import type { Span, Style } from './styled-text.js';

/**
 * The colours of the terminal screens, by what a piece of text is rather than where it is: the
 * one place a sysop's theme will change (screens never name a colour themselves). Palette
 * numbers as on a PC: 0 black, 1 red, 2 green, 3 yellow, 4 blue, 5 magenta, 6 cyan, 7 grey;
 * +8 the bright ones.
 */
export interface Theme {
  /** A screen's heading, the board's name. */
  readonly title: Style;
  /** A menu key, a number to pick by. */
  readonly key: Style;
  /** Menu entries, list rows. */
  readonly label: Style;
  /** Column headings, secondary facts (dates, sizes). */
  readonly muted: Style;
  /** Field names in a message header or a profile. */
  readonly field: Style;
  /** What the caller is asked. */
  readonly prompt: Style;
  /** What the caller types. */
  readonly input: Style;
  /** A refusal or failure, one line. */
  readonly error: Style;
  /** Something done. */
  readonly success: Style;
  /** A notice: new mail, a new message in the area being read. */
  readonly notice: Style;
  /** Quoted lines in the editor. */
  readonly quote: Style;
}

export const DEFAULT_THEME: Theme = Object.freeze({
  title: { fg: 14 },
  key: { fg: 11 },
  label: { fg: 7 },
  muted: { fg: 8 },
  field: { fg: 3 },
  prompt: { fg: 10 },
  input: { fg: 15 },
  error: { fg: 9 },
  success: { fg: 10 },
  notice: { fg: 13 },
  quote: { fg: 6 },
});

/** Text drawn as `role` of `theme`. */
export function themed(theme: Theme, role: keyof Theme, text: string): Span {
  return { text, style: theme[role] };
}
