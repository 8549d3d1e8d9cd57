import { describe, expect, it } from 'vitest';
import { presentText, stripAnsi } from '../../src/text/strip-ansi.js';

describe('stripAnsi', () => {
  it.each([
    ['CSI colour', '\u001b[1;31mred\u001b[0m text', 'red text'],
    ['cursor movement', 'a\u001b[2Jb\u001b[10;5Hc', 'abc'],
    ['OSC title', '\u001b]0;title\u0007after', 'after'],
    ['pipe colour codes 00-23', '|00a|07b|15c|23d', 'abcd'],
    ['pipe-like text that is not a colour code', '|24 and |99 and a|b', '|24 and |99 and a|b'],
    ['C0 controls except TAB CR LF', 'a\u0000b\u0007c\td\re\nf\u007f', 'abc\td\re\nf'],
    ['a lone ESC at the end', 'xy\u001b', 'xy'],
    ['plain text untouched, no trimming', '  hello — wörld  ', '  hello — wörld  '],
  ])('removes %s', (_name, input, expected) => {
    expect(stripAnsi(input)).toBe(expected);
  });

  it('returns raw text when stripping is off', () => {
    expect(presentText('\u001b[1mbold|03', false)).toBe('\u001b[1mbold|03');
    expect(presentText('\u001b[1mbold|03', true)).toBe('bold');
  });
});
