// Pipe codes number colours in PC text-mode attribute order (1 blue, 4 red); SGR numbers
// them in ANSI order (1 red, 4 blue). Index: pipe colour 0–7 → ANSI colour 0–7.
const PIPE_TO_ANSI_COLOUR: readonly number[] = [0, 4, 2, 6, 1, 5, 3, 7];

// The same set `strip-ansi.ts` removes, so the reader's plain mode and
// the API's stripped text agree. `|24`–`|99` are not colours and stay as written.
const PIPE_COLOUR_CODE = /\|(\d\d)/g;

const ESC = '\u001b';

/**
 * Translates Renegade/Mystic/ENiGMA½ pipe colour codes into SGR escape sequences, so pipe-coded
 * and ANSI text go through the one screen:
 * `|00`–`|15` set the foreground (8–15 are the bright ones, expressed as bold like a DOS
 * terminal does), `|16`–`|23` set background 0–7. Everything else stays literal, including
 * `||`: ENiGMA½'s own two converters disagree on it (one reads `||` as an escaped `|`, the
 * other does not), and the server's `stripAnsi` keeps it, so we keep it too.
 *
 * @example pipeCodesToAnsi('|12Hi|07') === '\u001b[1;31mHi\u001b[22;37m'
 */
export function pipeCodesToAnsi(text: string): string {
  if (!text.includes('|')) return text;
  return text.replace(PIPE_COLOUR_CODE, (code, digits: string) => {
    const value = Number(digits);
    if (value <= 15) {
      const ansiColour = PIPE_TO_ANSI_COLOUR[value % 8] ?? 7;
      // 22 turns bold off again so `|12|04` ends dark red, not bright red.
      return `${ESC}[${value >= 8 ? 1 : 22};${30 + ansiColour}m`;
    }
    if (value <= 23) {
      const ansiColour = PIPE_TO_ANSI_COLOUR[value - 16] ?? 0;
      // 25 turns blink off: with iCE colours blink means a bright background, and |16–|23 are dark.
      return `${ESC}[25;${40 + ansiColour}m`;
    }
    return code;
  });
}
