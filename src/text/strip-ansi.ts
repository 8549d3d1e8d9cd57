import stripAnsiSequences from 'strip-ansi';

// BBS "pipe codes" |00–|23 select colours in ENiGMA-style boards.
const PIPE_COLOUR_CODE = /\|(?:[01]\d|2[0-3])/g;
// C0 controls except TAB, LF, CR; plus DEL. ESC left over from a malformed sequence goes too.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
// What every sequence above starts with: a C0 control (ESC among them), DEL, the 8-bit CSI, a pipe.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is looked for
const MAY_NEED_STRIPPING = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u009B|]/;

/**
 * Removes what a plain-text client cannot show: ANSI escape sequences (CSI, OSC, …), pipe
 * colour codes `|00`–`|23`, and C0 control characters other than TAB, CR and LF.
 * Nothing else changes: no trimming, no other normalisation.
 */
export function stripAnsi(text: string): string {
  // Most text has none of it: one scan instead of four (search indexing strips every message).
  if (!MAY_NEED_STRIPPING.test(text)) return text;
  return stripAnsiSequences(text).replace(PIPE_COLOUR_CODE, '').replace(CONTROL_CHARACTERS, '');
}

/** Applies `stripAnsi` when the caller asked for it (`?stripAnsi=true`, the default). */
export function presentText(text: string, shouldStrip: boolean): string {
  return shouldStrip ? stripAnsi(text) : text;
}
