import { describe, expect, it } from 'vitest';
import { pipeCodesToAnsi } from '../../src/text/pipe-codes.js';

const ESC = '\u001b';

describe('pipeCodesToAnsi', () => {
  it.each([
    ['|00', `${ESC}[22;30m`],
    ['|01', `${ESC}[22;34m`],
    ['|02', `${ESC}[22;32m`],
    ['|03', `${ESC}[22;36m`],
    ['|04', `${ESC}[22;31m`],
    ['|05', `${ESC}[22;35m`],
    ['|06', `${ESC}[22;33m`],
    ['|07', `${ESC}[22;37m`],
  ])('translates dark foreground %s from PC attribute order to ANSI order', (code, sgr) => {
    expect(pipeCodesToAnsi(code)).toBe(sgr);
  });

  it.each([
    ['|08', `${ESC}[1;30m`],
    ['|09', `${ESC}[1;34m`],
    ['|10', `${ESC}[1;32m`],
    ['|11', `${ESC}[1;36m`],
    ['|12', `${ESC}[1;31m`],
    ['|13', `${ESC}[1;35m`],
    ['|14', `${ESC}[1;33m`],
    ['|15', `${ESC}[1;37m`],
  ])('translates bright foreground %s to bold plus the colour', (code, sgr) => {
    expect(pipeCodesToAnsi(code)).toBe(sgr);
  });

  it.each([
    ['|16', `${ESC}[25;40m`],
    ['|17', `${ESC}[25;44m`],
    ['|18', `${ESC}[25;42m`],
    ['|19', `${ESC}[25;46m`],
    ['|20', `${ESC}[25;41m`],
    ['|21', `${ESC}[25;45m`],
    ['|22', `${ESC}[25;43m`],
    ['|23', `${ESC}[25;47m`],
  ])('translates background %s', (code, sgr) => {
    expect(pipeCodesToAnsi(code)).toBe(sgr);
  });

  it('translates codes between text', () => {
    expect(pipeCodesToAnsi('a|12b|17c')).toBe(`a${ESC}[1;31mb${ESC}[25;44mc`);
  });

  it.each([
    ['a pipe between words', 'a | b'],
    ['a pipe before letters', '|CR and |XY'],
    ['codes past 23', '|24 |31 |99'],
    ['a double pipe', 'a || b'],
    ['a pipe and one digit at the end', 'x|1'],
    ['a pipe at the end', 'x|'],
    ['an empty text', ''],
  ])('keeps %s literal', (_name, text) => {
    expect(pipeCodesToAnsi(text)).toBe(text);
  });

  it('reads a code right after a literal pipe', () => {
    expect(pipeCodesToAnsi('||07')).toBe(`|${ESC}[22;37m`);
    expect(pipeCodesToAnsi('|1|07')).toBe(`|1${ESC}[22;37m`);
  });

  it('translates a code that ends the text', () => {
    expect(pipeCodesToAnsi('end|15')).toBe(`end${ESC}[1;37m`);
  });
});
