import { describe, expect, it } from 'vitest';
import { toAscii } from '../../src/terminal/ascii-text.js';
import { encodeForTerminal, renderLine } from '../../src/terminal/terminal-output.js';
import { terminalProfileOf } from '../../src/terminal/terminal-profile.js';

const ESC = '\u001b';
const UTF8 = terminalProfileOf('xterm-256color');
const CP437 = terminalProfileOf('syncterm');
const ASCII = terminalProfileOf('dumb');

describe('terminalProfileOf', () => {
  it.each([
    ['xterm-256color', 'utf8', true],
    ['screen', 'utf8', true],
    ['vt100', 'utf8', true],
    ['ansi', 'cp437', true],
    ['ANSI-BBS', 'cp437', true],
    ['syncterm', 'cp437', true],
    ['pcansi', 'cp437', true],
    ['dumb', 'ascii', false],
    ['', 'ascii', false],
  ])('takes %j for %s', (type, charset, hasEscapes) => {
    expect(terminalProfileOf(type)).toEqual({ charset, hasEscapes });
  });
});

describe('renderLine', () => {
  it('writes a style change as one SGR sequence and resets at the end', () => {
    expect(renderLine([{ text: 'a' }, { text: 'b', style: { fg: 9 } }, { text: 'c', style: { fg: 9 } }], UTF8)).toBe(
      `a${ESC}[0;91mbc${ESC}[0m`,
    );
  });

  it('gives a BBS terminal bright colours as bold, and 24-bit colour as the nearest of its sixteen', () => {
    expect(renderLine([{ text: 'x', style: { fg: 14, bg: 4 } }], CP437)).toBe(`${ESC}[0;1;36;44mx${ESC}[0m`);
    expect(renderLine([{ text: 'x', style: { fg: '#fe0000' } }], CP437)).toBe(`${ESC}[0;31mx${ESC}[0m`);
    expect(renderLine([{ text: 'x', style: { fg: '#ff5050' } }], CP437)).toBe(`${ESC}[0;1;31mx${ESC}[0m`);
    expect(renderLine([{ text: 'x', style: { fg: '#fe0000' } }], UTF8)).toBe(`${ESC}[0;38;2;254;0;0mx${ESC}[0m`);
  });

  it('drops every control character of the text: only the writer sends controls', () => {
    const hostile = `a${ESC}]0;owned\u0007b${ESC}[2Jc\u009b31md\r\ne\u0000`;
    expect(renderLine([{ text: hostile }], UTF8)).toBe('a]0;ownedb[2Jc31mde');
  });

  it('sends an ASCII terminal no escape at all, and ASCII only', () => {
    const rendered = renderLine([{ text: '┌─ Café “quoted” — ok ─┐', style: { fg: 12 } }, { text: '│█░│' }], ASCII);
    expect(rendered).toBe('+- Cafe "quoted" - ok -+|##|');
  });
});

describe('encodeForTerminal', () => {
  it('encodes a BBS terminal’s text in CP437, with ASCII stand-ins for what it lacks', () => {
    expect([...encodeForTerminal('é─█ “x”…€', CP437)]).toEqual([0x82, 0xc4, 0xdb, 0x20, 0x22, 0x78, 0x22, 0x2e, 0x3f]);
  });

  it('encodes UTF-8 as UTF-8', () => {
    expect(encodeForTerminal('é─', UTF8)).toEqual(Buffer.from('é─', 'utf8'));
  });
});

describe('toAscii', () => {
  it('keeps ASCII as it is', () => {
    expect(toAscii('plain text 123 ~!')).toBe('plain text 123 ~!');
  });

  it('turns box drawing into + - |, blocks into #, drops accents and marks the rest', () => {
    expect(toAscii('╔═╗║╚╝╱▓ñ漢e\u0301')).toBe('+-+|++/#n?e');
  });
});
