import { describe, expect, it } from 'vitest';
import { plainTextLines, singleLine, storedTextLines } from '../../src/terminal/message-text.js';

const ESC = '\u001b';

describe('storedTextLines', () => {
  it('keeps SGR and pipe colours as styles, bold as the bright colour, as the web reader does', () => {
    expect(storedTextLines(`${ESC}[1;31mRed${ESC}[0m plain |09blue`)).toEqual([
      [{ text: 'Red', style: { fg: 9 } }, { text: ' plain ' }, { text: 'blue', style: { fg: 12 } }],
    ]);
  });

  it('applies the cursor moves of ANSI art on the screen and passes none of them on', () => {
    expect(storedTextLines(`ab${ESC}[5Cc\n${ESC}[1Ad${ESC}[1;9He`)).toEqual([[{ text: 'db     ce' }]]);
  });

  it('drops titles, device strings, bells and every other control', () => {
    const hostile = `one${ESC}]0;owned\u0007two${ESC}P1$r\u001b\\three\u0007${ESC}[?1049hfour${ESC}cfive\u009b2J`;
    expect(storedTextLines(hostile)).toEqual([[{ text: 'onetwothreefourfive2J' }]]);
  });

  it('stops at DOS end of file (a SAUCE record follows)', () => {
    expect(storedTextLines('art\u001aSAUCE00 title')).toEqual([[{ text: 'art' }]]);
  });
});

describe('singleLine', () => {
  it('strips sequences and joins lines', () => {
    expect(singleLine(`  ${ESC}[1mHello${ESC}[0m\r\n\tworld\u0007 `)).toBe('Hello world');
  });
});

describe('plainTextLines', () => {
  it('gives the text as shown, without colours, one line per row', () => {
    expect(plainTextLines(`${ESC}[32mgreen${ESC}[0m\n\nlast  `)).toEqual(['green', '', 'last']);
  });
});
