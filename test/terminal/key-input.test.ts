import { describe, expect, it } from 'vitest';
import { createKeyDecoder, type Key } from '../../src/terminal/key-input.js';
import type { TerminalCharset } from '../../src/terminal/terminal-profile.js';

/** The keys `chunks` decode to, fed one after another to one decoder. */
function keysOf(charset: TerminalCharset, ...chunks: (string | number[])[]): string[] {
  const decoder = createKeyDecoder(charset);
  const keys: string[] = [];
  const name = (key: Key) => (key.kind === 'char' ? key.char : `<${key.kind}>`);
  for (const chunk of chunks) {
    decoder.decode(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : Buffer.from(chunk), (key) =>
      keys.push(name(key)),
    );
  }
  return keys;
}

const utf8 = (text: string) => [...Buffer.from(text, 'utf8')];

describe('createKeyDecoder', () => {
  it('reads printable characters as themselves', () => {
    expect(keysOf('utf8', 'aZ 9~')).toEqual(['a', 'Z', ' ', '9', '~']);
  });

  it('reads CR, LF and CR LF (and telnet CR NUL) each as one Enter', () => {
    expect(keysOf('utf8', 'a\rb\nc\r\nd\r\u0000e')).toEqual([
      'a',
      '<enter>',
      'b',
      '<enter>',
      'c',
      '<enter>',
      'd',
      '<enter>',
      'e',
    ]);
    expect(keysOf('utf8', 'a\r', '\nb')).toEqual(['a', '<enter>', 'b']);
    expect(keysOf('utf8', '\r\r')).toEqual(['<enter>', '<enter>']);
  });

  it('reads BS and DEL as Backspace, and Ctrl-C, Ctrl-D and Tab', () => {
    expect(keysOf('utf8', '\b\u007f\u0003\u0004\t')).toEqual([
      '<backspace>',
      '<backspace>',
      '<interrupt>',
      '<endOfInput>',
      '<tab>',
    ]);
  });

  it('drops every other control character', () => {
    expect(keysOf('utf8', 'a\u0000\u0001\u0007\u000b\u000c\u001a\u001cb')).toEqual(['a', 'b']);
  });

  it('recognises cursor and editing keys of VT and xterm sequences', () => {
    expect(
      keysOf(
        'utf8',
        '\u001b[A\u001b[B\u001b[C\u001b[D\u001bOA\u001b[H\u001b[F\u001b[1~\u001b[4~\u001b[3~\u001b[5~\u001b[6~',
      ),
    ).toEqual([
      '<up>',
      '<down>',
      '<right>',
      '<left>',
      '<up>',
      '<home>',
      '<end>',
      '<home>',
      '<end>',
      '<delete>',
      '<pageUp>',
      '<pageDown>',
    ]);
  });

  it('consumes other escape sequences whole, even split over chunks', () => {
    expect(keysOf('utf8', 'a\u001b[?25', 'h\u001b[38;5;1mb\u001b[1;5Cc\u001bxd\u001b[2', '00~e')).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
    ]);
  });

  it('drops control strings (OSC, DCS, APC) whole, ended by BEL or ST', () => {
    expect(keysOf('utf8', 'a\u001b]0;title\u0007b\u001bP1$r\u001b\\c\u001b_x', 'yz\u001b\\d')).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  it('ends an unended control string at the next control, which still counts', () => {
    expect(keysOf('utf8', '\u001b]0;never ended\rok', '\u001b]x\u001b[Ay')).toEqual(['<enter>', 'o', 'k', '<up>', 'y']);
  });

  it('keeps a control character that breaks off a sequence', () => {
    expect(keysOf('utf8', '\u001b[12\r', '\u001b\u0003x')).toEqual(['<enter>', '<interrupt>', 'x']);
  });

  it('reads an escape flood without keys and goes on after it', () => {
    const flood = `\u001b[${'9'.repeat(200_000)}`;
    expect(keysOf('utf8', flood, 'mok')).toEqual(['o', 'k']);
    expect(keysOf('utf8', '\u001b'.repeat(100_000), '[Aok')).toEqual(['<up>', 'o', 'k']);
  });

  it('decodes UTF-8, a character split over chunks included', () => {
    const euro = utf8('€');
    expect(keysOf('utf8', utf8('héllo 😀'))).toEqual(['h', 'é', 'l', 'l', 'o', ' ', '😀']);
    expect(keysOf('utf8', euro.slice(0, 1), euro.slice(1, 2), euro.slice(2))).toEqual(['€']);
  });

  it('drops broken UTF-8, overlong forms, surrogates and C1 controls', () => {
    expect(keysOf('utf8', [0x61, 0x80, 0xc0, 0xaf, 0x62, 0xed, 0xa0, 0x80, 0xc2, 0x9b, 0xe2, 0x82, 0x63])).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('reads bytes from 128 up as CP437 on a BBS terminal', () => {
    expect(keysOf('cp437', [0x82, 0xc4, 0xdb, 0x41, 0x7f])).toEqual(['é', '─', '█', 'A', '<backspace>']);
  });
});
