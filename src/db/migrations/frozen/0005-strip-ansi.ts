/**
 * FROZEN: the ANSI stripping of 0005-search's index, as src/text/strip-ansi.ts did it (with
 * strip-ansi 7.2.0 and ansi-regex 6.6.0) when that migration was made self-contained. Never
 * change it and never import it from app code: a migration must build the same index on every
 * upgrade, whatever the app's code and dependencies have become since.
 */

// ansi-regex 6.6.0's pattern, as strip-ansi 7.2.0 applies it.
const ST = String.raw`(?:\u001B\u005C|\u009C)`;
const STRING_CONTROLS = String.raw`\u0018\u001A\u001B\u0080-\u009F`;
const OSC = String.raw`(?:\u001B\]|\u009D)[^\u0007${STRING_CONTROLS}]*(?:\u0007|${ST})`;
const CONTROL_STRING = String.raw`(?:\u001B[PX^_k]|[\u0090\u0098\u009E\u009F])[^${STRING_CONTROLS}]*${ST}`;
const LINUX_PALETTE = String.raw`\u001B\](?:P[\dA-Fa-f]{7}|R)(?:\u0007|${ST})?`;
const CSI = String.raw`(?:\u001B\[|\u009B)[\u0030-\u003F]*[\u0020-\u002F]*[\u0040-\u007E]`;
const ESCAPE = String.raw`\u001B(?:[\u0020-\u002F]+[\u0030-\u007E]|[\dA-PR-TZcf-oq-uy=><~|}])`;
const ANSI_SEQUENCE = new RegExp(`${LINUX_PALETTE}|${OSC}|${CONTROL_STRING}|${CSI}|${ESCAPE}`, 'g');

// BBS "pipe codes" |00–|23 select colours in ENiGMA-style boards.
const PIPE_COLOUR_CODE = /\|(?:[01]\d|2[0-3])/g;
// C0 controls except TAB, LF, CR; plus DEL. ESC left over from a malformed sequence goes too.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/** Removes ANSI escape sequences, pipe colour codes `|00`–`|23` and C0 controls but TAB, CR and LF. */
export function stripAnsi(text: string): string {
  // Every sequence starts with ESC (7-bit) or CSI (8-bit).
  const withoutSequences = text.includes('\u001B') || text.includes('\u009B') ? text.replace(ANSI_SEQUENCE, '') : text;
  return withoutSequences.replace(PIPE_COLOUR_CODE, '').replace(CONTROL_CHARACTERS, '');
}
