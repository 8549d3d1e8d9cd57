import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { presentText, stripAnsi } from '../../src/text/strip-ansi.js';

describe('stripAnsi', () => {
  // Text with nothing to strip is returned after one scan. A NUL appended takes any text down the
  // full path (and goes itself, ending no sequence): both paths must agree on every text.
  it('answers alike whether or not it takes the one-scan shortcut', () => {
    const hostile = fc.constantFrom(
      ...['\u001b', '\u009b', '\u009d', '\u0090', '\u009c', '\u0007', '\u0000', '\u007f', '\t', '\n', '\r'],
      ...['[', ']', ';', '\\', '|', '0', '1', '2', '3', '9', 'm', 'H', 'P', 'a', ' ', 'é'],
    );
    const texts = fc.oneof(
      fc.array(hostile, { maxLength: 24 }).map((parts) => parts.join('')),
      fc.string(),
    );
    fc.assert(
      fc.property(texts, (text) => {
        expect(stripAnsi(text)).toBe(stripAnsi(`${text}\u0000`));
      }),
      { numRuns: 20_000 },
    );
  });

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
