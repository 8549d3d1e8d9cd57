import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnsiColour,
  type AnsiRun,
  MAX_SCREEN_ROWS,
  renderAnsiScreen,
  SCREEN_COLUMNS,
  screenToPlainText,
} from '../../src/text/ansi-screen.js';
import { pipeCodesToAnsi } from '../../src/text/pipe-codes.js';

const ESC = '\u001b';

function run(text: string, fg: AnsiColour = 7, bg: AnsiColour = 0, isBold = false, isUnderline = false): AnsiRun {
  return { text, fg, bg, isBold, isUnderline };
}

/** The screen's characters, one string per row. */
function screenLines(text: string): string[] {
  return renderAnsiScreen(text).map((row) => row.map((r) => r.text).join(''));
}

describe('renderAnsiScreen: text', () => {
  it('passes plain text through as one run per line', () => {
    expect(renderAnsiScreen('Hello, world\nsecond line')).toEqual([[run('Hello, world')], [run('second line')]]);
  });

  it('keeps CP437 box drawing and block characters', () => {
    expect(screenLines('┌─┐\n│█│\n└▀┘░▒▓')).toEqual(['┌─┐', '│█│', '└▀┘░▒▓']);
  });

  it('returns no rows for empty text', () => {
    expect(renderAnsiScreen('')).toEqual([]);
  });

  it('treats CRLF like LF', () => {
    expect(screenLines('one\r\ntwo\r\n')).toEqual(['one', 'two']);
  });

  it('returns to column 1 on a lone CR and overwrites', () => {
    expect(screenLines('abcdef\rXY')).toEqual(['XYcdef']);
  });

  it('keeps an empty line between lines and trims trailing empty lines', () => {
    expect(screenLines('a\n\nb\n\n\n')).toEqual(['a', '', 'b']);
  });

  it('keeps leading empty lines', () => {
    expect(screenLines('\n\nx')).toEqual(['', '', 'x']);
  });

  it('trims trailing spaces on the default background', () => {
    expect(screenLines('text   \nmore ')).toEqual(['text', 'more']);
  });

  it('moves to the next tab stop of 8 columns on TAB', () => {
    expect(screenLines('a\tb\tc')).toEqual(['a       b       c']);
  });

  it('moves back one column on backspace', () => {
    expect(screenLines('ab\bX')).toEqual(['aX']);
  });

  it('keeps characters outside the BMP whole in one cell', () => {
    expect(screenLines('a😀b')).toEqual(['a😀b']);
  });
});

describe('renderAnsiScreen: wrapping at 80 columns', () => {
  it('wraps the 81st character to the next row', () => {
    expect(screenLines(`${'x'.repeat(80)}y`)).toEqual(['x'.repeat(80), 'y']);
  });

  it('leaves no blank row after a full line ended by CRLF', () => {
    expect(screenLines(`${'x'.repeat(80)}\r\ny`)).toEqual(['x'.repeat(80), 'y']);
  });

  it('wraps a long line over several rows', () => {
    expect(screenLines('0123456789'.repeat(17))).toEqual([
      '0123456789'.repeat(8),
      '0123456789'.repeat(8),
      '0123456789',
    ]);
  });
});

describe('renderAnsiScreen: colours', () => {
  it('sets the 8 foreground and background colours', () => {
    expect(renderAnsiScreen(`${ESC}[31ma${ESC}[44mb${ESC}[37;40mc`)).toEqual([[run('a', 1), run('b', 1, 4), run('c')]]);
  });

  it('brightens the foreground on bold, as a DOS terminal does', () => {
    expect(renderAnsiScreen(`${ESC}[1;34mblue${ESC}[22mdark`)).toEqual([[run('blue', 12), run('dark', 4)]]);
  });

  it('brightens the default foreground on bold alone', () => {
    expect(renderAnsiScreen(`${ESC}[1mwhite`)).toEqual([[run('white', 15)]]);
  });

  it('keeps bold set across a colour change', () => {
    expect(renderAnsiScreen(`${ESC}[1;31mr${ESC}[32mg`)).toEqual([[run('r', 9), run('g', 10)]]);
  });

  it('brightens the background on blink (iCE colours)', () => {
    expect(renderAnsiScreen(`${ESC}[5;41mice${ESC}[25mdark`)).toEqual([[run('ice', 7, 9), run('dark', 7, 1)]]);
  });

  it('sets bright colours with 90–97 and 100–107', () => {
    expect(renderAnsiScreen(`${ESC}[93;104my`)).toEqual([[run('y', 11, 12)]]);
  });

  it('marks bold that cannot brighten an already bright colour', () => {
    expect(renderAnsiScreen(`${ESC}[1;91mb`)).toEqual([[run('b', 9, 0, true)]]);
  });

  it('resets with 0 and with an empty SGR', () => {
    expect(renderAnsiScreen(`${ESC}[1;31;44ma${ESC}[0mb${ESC}[32mc${ESC}[md`)).toEqual([
      [run('a', 9, 4), run('b'), run('c', 2), run('d')],
    ]);
  });

  it('resets foreground and background alone with 39 and 49', () => {
    expect(renderAnsiScreen(`${ESC}[31;42ma${ESC}[39mb${ESC}[49mc`)).toEqual([
      [run('a', 1, 2), run('b', 7, 2), run('c')],
    ]);
  });

  it('reads 256 colours: the first 16 as palette entries, the rest as hex', () => {
    expect(renderAnsiScreen(`${ESC}[38;5;9ma${ESC}[38;5;208;48;5;16mb${ESC}[38;5;244mc`)).toEqual([
      [run('a', 9), run('b', '#ff8700', '#000000'), run('c', '#808080', '#000000')],
    ]);
  });

  it('reads truecolour, with semicolons and with colons', () => {
    expect(renderAnsiScreen(`${ESC}[38;2;255;128;0ma${ESC}[48:2::1:2:3mb${ESC}[38:2:4:5:6mc`)).toEqual([
      [run('a', '#ff8000'), run('b', '#ff8000', '#010203'), run('c', '#040506', '#010203')],
    ]);
  });

  it("reads PabloDraw's truecolour sequence", () => {
    expect(renderAnsiScreen(`${ESC}[1;255;0;0t${ESC}[0;0;0;255tx`)).toEqual([[run('x', '#ff0000', '#0000ff')]]);
  });

  it('ignores an extended colour with values out of range', () => {
    expect(renderAnsiScreen(`${ESC}[38;5;300ma${ESC}[38;2;1;2ma`)).toEqual([[run('aa')]]);
  });

  it('swaps foreground and background on reverse, after brightening', () => {
    expect(renderAnsiScreen(`${ESC}[1;31;44;7mr${ESC}[27mn`)).toEqual([[run('r', 4, 9), run('n', 9, 4)]]);
  });

  it('underlines and stops underlining', () => {
    expect(renderAnsiScreen(`${ESC}[4mu${ESC}[24mn`)).toEqual([[run('u', 7, 0, false, true), run('n')]]);
  });

  it('draws concealed text in the background colour', () => {
    expect(renderAnsiScreen(`${ESC}[8;44mhidden`)).toEqual([[run('hidden', 4, 4)]]);
  });

  it('merges cells of the same colours into one run', () => {
    expect(renderAnsiScreen(`${ESC}[31mab${ESC}[31mcd${ESC}[0;31mef`)).toEqual([[run('abcdef', 1)]]);
  });

  it('keeps a coloured background on trailing spaces', () => {
    expect(renderAnsiScreen(`a${ESC}[44m  `)).toEqual([[run('a'), run('  ', 7, 4)]]);
  });
});

describe('renderAnsiScreen: cursor movement', () => {
  it('turns cursor forward into spaces in the default colours', () => {
    expect(renderAnsiScreen(`a${ESC}[3Cb${ESC}[Cc`)).toEqual([[run('a   b c')]]);
  });

  it('moves back with D and overwrites', () => {
    expect(screenLines(`abcdef${ESC}[3DXY`)).toEqual(['abcXYf']);
  });

  it('moves up with A and down with B, keeping the column', () => {
    expect(screenLines(`line1\nline2${ESC}[AX${ESC}[2BY`)).toEqual(['line1X', 'line2', '      Y']);
  });

  it('does not move above the first row or left of the first column', () => {
    expect(screenLines(`${ESC}[5A${ESC}[9Dx`)).toEqual(['x']);
  });

  it('positions with row;col H and f, counting from 1', () => {
    expect(screenLines(`${ESC}[3;5Hx${ESC}[1;2fy`)).toEqual([' y', '', '    x']);
  });

  it('homes the cursor with a bare H', () => {
    expect(screenLines(`abc\ndef${ESC}[HX`)).toEqual(['Xbc', 'def']);
  });

  it('sets the column with G and the row with d', () => {
    expect(screenLines(`${ESC}[10Gx${ESC}[2dy`)).toEqual(['         x', '          y']);
  });

  it('restores the cursor saved with s/u and with ESC 7/8', () => {
    expect(screenLines(`ab${ESC}[s\ncd${ESC}[uX`)).toEqual(['abX', 'cd']);
    expect(screenLines(`ab${ESC}7\ncd${ESC}8X`)).toEqual(['abX', 'cd']);
  });

  it('clears the screen and homes the cursor on 2J', () => {
    expect(screenLines(`old text\nmore${ESC}[2Jnew`)).toEqual(['new']);
  });

  it('erases below the cursor on J', () => {
    expect(screenLines(`abc\ndef\nghi${ESC}[2;2H${ESC}[J`)).toEqual(['abc', 'd']);
  });

  it('erases to the end of the line on K', () => {
    expect(screenLines(`abcdef${ESC}[4D${ESC}[K`)).toEqual(['ab']);
  });

  it('erases the start of the line on 1K and the whole line on 2K', () => {
    expect(screenLines(`abcdef${ESC}[3D${ESC}[1K`)).toEqual(['    ef']);
    expect(screenLines(`abc\ndef${ESC}[2K\nghi`)).toEqual(['abc', '', 'ghi']);
  });

  it('fills erased cells with the current background', () => {
    expect(renderAnsiScreen(`${ESC}[44m${ESC}[K`)).toEqual([[run(' '.repeat(80), 7, 4)]]);
  });

  it('stops cursor forward at column 80 instead of wrapping', () => {
    expect(screenLines(`${ESC}[200Cx`)).toEqual([`${' '.repeat(79)}x`]);
  });
});

describe('renderAnsiScreen: hostile and malformed input', () => {
  it('clamps a huge position to the text length and column 80', () => {
    const rows = renderAnsiScreen(`${ESC}[99999;99999Hx`);
    expect(rows).toHaveLength(15);
    expect(rows[14]).toEqual([run(`${' '.repeat(79)}x`)]);
  });

  it('clamps huge counts', () => {
    const text = `${ESC}[999999999C${ESC}[999999999Bx${ESC}[${'9'.repeat(400)}Cy`;
    const rows = renderAnsiScreen(text);
    expect(rows.length).toBeLessThanOrEqual(text.length);
    expect(rows.every((row) => row.reduce((width, r) => width + [...r.text].length, 0) <= SCREEN_COLUMNS)).toBe(true);
  });

  it(`stops after ${MAX_SCREEN_ROWS} rows`, () => {
    const rows = renderAnsiScreen('x\n'.repeat(MAX_SCREEN_ROWS + 100));
    expect(rows).toHaveLength(MAX_SCREEN_ROWS);
    expect(rows[MAX_SCREEN_ROWS - 1]).toEqual([run('x')]);
  });

  it('cuts the text at the DOS end-of-file character and its SAUCE record', () => {
    const sauce = `\u001aSAUCE00${'Title'.padEnd(35)}${'x'.repeat(86)}`;
    expect(screenLines(`art\n${sauce}`)).toEqual(['art']);
    expect(screenLines('before\u001aafter')).toEqual(['before']);
  });

  it('cuts a SAUCE record that has no end-of-file character before it', () => {
    const record = `SAUCE00${'x'.repeat(121)}`;
    expect(screenLines(`art${record}`)).toEqual(['art']);
  });

  it.each([
    ['private mode sequences', `a${ESC}[?7hb${ESC}[?25l${ESC}[=7hc`, 'abc'],
    ['unknown CSI finals', `a${ESC}[2Xb${ESC}[5@c${ESC}[1;1rd`, 'abcd'],
    ['CSI with intermediates', `a${ESC}[1 qb`, 'ab'],
    ['an OSC title ended by BEL', `a${ESC}]0;title\u0007b`, 'ab'],
    ['an OSC ended by ST', `a${ESC}]8;;http://x${ESC}\\b`, 'ab'],
    ['an unended OSC, keeping the text after it', `a${ESC}]0;title`, 'a0;title'],
    ['a charset designation', `a${ESC}(Bb`, 'ab'],
    ['a two-character escape', `a${ESC}cb`, 'ab'],
    ['a lone ESC at the end', `ab${ESC}`, 'ab'],
    ['an unfinished CSI at the end', `ab${ESC}[31;4`, 'ab'],
    ['an unfinished CSI before a newline', `ab${ESC}[3\ncd`, 'ab\ncd'],
    ['an ESC before non-ASCII text', `a${ESC}█b`, 'a█b'],
    ['control characters', 'a\u0000b\u0007c\u000bd\u007fe\u009bf', 'abcdef'],
    ['SGR with letters in it', `a${ESC}[3x1mb`, 'a1mb'],
  ])('drops %s', (_name, text, expected) => {
    expect(screenToPlainText(renderAnsiScreen(text))).toBe(expected);
  });

  it('never throws and keeps every row within 80 cells and the row limits, for any input', () => {
    const ansiPiece = fc.oneof(
      fc.string(),
      fc.constantFrom('\n', '\r', '\r\n', '\t', '\b', '\u001a', ESC, `${ESC}[`, `${ESC}]`, '|', '█', '😀'),
      fc
        .tuple(
          fc.array(fc.oneof(fc.nat({ max: 300 }), fc.constant(99999), fc.constant('')), { maxLength: 6 }),
          fc.constantFrom(...'mABCDEFGHJKSTdfhlstu'),
        )
        .map(([params, final]) => `${ESC}[${params.join(';')}${final}`),
    );
    fc.assert(
      fc.property(fc.array(ansiPiece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const rows = renderAnsiScreen(pipeCodesToAnsi(text));
        expect(rows.length).toBeLessThanOrEqual(Math.max(1, pipeCodesToAnsi(text).length));
        for (const row of rows) {
          const cells = row.reduce((width, r) => width + [...r.text].length, 0);
          expect(cells).toBeLessThanOrEqual(SCREEN_COLUMNS);
        }
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        for (const row of renderAnsiScreen(text)) {
          expect(row.reduce((width, r) => width + [...r.text].length, 0)).toBeLessThanOrEqual(SCREEN_COLUMNS);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('screenToPlainText', () => {
  it('removes every sequence and pipe code and keeps the lines', () => {
    const text = `|12Title|07\r\n${ESC}[1;44m██${ESC}[0m ${ESC}[2Cend\r\n\r\n|17last line${ESC}[K`;
    expect(screenToPlainText(renderAnsiScreen(pipeCodesToAnsi(text)))).toBe('Title\n██   end\n\nlast line');
  });

  it('returns an empty string for no rows', () => {
    expect(screenToPlainText([])).toBe('');
  });
});
