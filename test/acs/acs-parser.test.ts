import { describe, expect, it } from 'vitest';
import type { AcsExpression } from '../../src/acs/acs-parser.js';
import { AcsSyntaxError, parseAcs } from '../../src/acs/acs-parser.js';

const gm = (...groups: string[]): AcsExpression => ({ kind: 'condition', code: 'GM', groups });
const id = (...userIds: number[]): AcsExpression => ({ kind: 'condition', code: 'ID', userIds });
const and = (...operands: AcsExpression[]): AcsExpression => ({ kind: 'and', operands });
const or = (...operands: AcsExpression[]): AcsExpression => ({ kind: 'or', operands });
const not = (operand: AcsExpression): AcsExpression => ({ kind: 'not', operand });
const A = gm('a');
const B = gm('b');
const C = gm('c');

function syntaxError(source: string): AcsSyntaxError {
  try {
    parseAcs(source);
  } catch (error) {
    if (error instanceof AcsSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(source)} to be rejected`);
}

describe('parseAcs', () => {
  describe('empty input', () => {
    it.each(['', ' ', '\t\n  '])('treats %j as everyone authenticated', (source) => {
      expect(parseAcs(source)).toEqual({ kind: 'everyone' });
    });
  });

  describe('codes', () => {
    it.each<[string, AcsExpression]>([
      ['GM[users]', gm('users')],
      ['GM[users,sysops]', gm('users', 'sysops')],
      ['GM[ users , sysops ]', gm('users', 'sysops')],
      ['GM [users]', gm('users')],
      ['ID1', id(1)],
      ['ID 1', id(1)],
      ['ID[1,2,3]', id(1, 2, 3)],
      ['ID[ 7 ]', id(7)],
      ['AS2', { kind: 'condition', code: 'AS', accountStatus: 2 }],
      ['AS 1', { kind: 'condition', code: 'AS', accountStatus: 1 }],
      ['PV[theme,dark]', { kind: 'condition', code: 'PV', name: 'theme', value: 'dark' }],
      ['PV[ theme , dark mode ]', { kind: 'condition', code: 'PV', name: 'theme', value: 'dark mode' }],
      ['WD0', { kind: 'condition', code: 'WD', weekdays: [0] }],
      ['WD 6', { kind: 'condition', code: 'WD', weekdays: [6] }],
      ['WD[0,6]', { kind: 'condition', code: 'WD', weekdays: [0, 6] }],
      ['SC', { kind: 'condition', code: 'SC' }],
    ])('parses %s', (source, expected) => {
      expect(parseAcs(source)).toEqual(expected);
    });

    it.each([
      'AG',
      'NC',
      'NP',
      'AA',
      'UP',
      'DL',
      'BU',
      'BD',
      'NR',
      'KR',
      'PC',
      'AC',
      'AP',
      'MM',
    ])('parses threshold code %s with and without a space', (code) => {
      expect(parseAcs(`${code}5`)).toEqual({ kind: 'condition', code, min: 5 });
      expect(parseAcs(`${code} 42`)).toEqual({ kind: 'condition', code, min: 42 });
      expect(parseAcs(`${code}0`)).toEqual({ kind: 'condition', code, min: 0 });
    });

    it.each([
      'LC',
      'NN',
      'TH',
      'TW',
      'TT',
      'TM',
      'EC',
      'AF',
    ])('parses terminal-only code %s with an optional number', (code) => {
      expect(parseAcs(code)).toEqual({ kind: 'condition', code, argument: null });
      expect(parseAcs(`${code}3`)).toEqual({ kind: 'condition', code, argument: 3 });
      expect(parseAcs(`${code} 80`)).toEqual({ kind: 'condition', code, argument: 80 });
    });

    it('reads two-letter codes back to back without a separator', () => {
      expect(parseAcs('SCID1')).toEqual(and({ kind: 'condition', code: 'SC' }, id(1)));
      expect(parseAcs('GM[a]GM[b]')).toEqual(and(A, B));
      expect(parseAcs('NC5ID1')).toEqual(and({ kind: 'condition', code: 'NC', min: 5 }, id(1)));
    });

    it('parses a terminal code without argument followed by another condition', () => {
      expect(parseAcs('LC GM[a]')).toEqual(and({ kind: 'condition', code: 'LC', argument: null }, A));
    });
  });

  describe('operators', () => {
    it('parses & as AND', () => {
      expect(parseAcs('GM[a]&GM[b]')).toEqual(and(A, B));
    });

    it('parses juxtaposition as AND', () => {
      expect(parseAcs('GM[a] GM[b]')).toEqual(and(A, B));
      expect(parseAcs('GM[a]GM[b]GM[c]')).toEqual(and(A, B, C));
    });

    it('parses | as OR', () => {
      expect(parseAcs('GM[a]|GM[b]')).toEqual(or(A, B));
      expect(parseAcs('GM[a]|GM[b]|GM[c]')).toEqual(or(A, B, C));
    });

    it('parses ! as NOT', () => {
      expect(parseAcs('!GM[a]')).toEqual(not(A));
      expect(parseAcs('!!GM[a]')).toEqual(not(not(A)));
      expect(parseAcs('! GM[a]')).toEqual(not(A));
    });

    it('mixes & and juxtaposition in one AND chain', () => {
      expect(parseAcs('GM[a] & GM[b] GM[c]')).toEqual(and(A, B, C));
    });
  });

  describe('precedence', () => {
    it('binds & tighter than |: A|B&C = A|(B&C)', () => {
      expect(parseAcs('GM[a]|GM[b]&GM[c]')).toEqual(or(A, and(B, C)));
      expect(parseAcs('GM[a]&GM[b]|GM[c]')).toEqual(or(and(A, B), C));
    });

    it('binds juxtaposition tighter than |', () => {
      expect(parseAcs('GM[a]|GM[b] GM[c]')).toEqual(or(A, and(B, C)));
    });

    it('binds ! tighter than &: !A&B = (!A)&B', () => {
      expect(parseAcs('!GM[a]&GM[b]')).toEqual(and(not(A), B));
      expect(parseAcs('!GM[a]|GM[b]')).toEqual(or(not(A), B));
    });

    it('lets parentheses override precedence', () => {
      expect(parseAcs('(GM[a]|GM[b])&GM[c]')).toEqual(and(or(A, B), C));
      expect(parseAcs('!(GM[a]|GM[b])')).toEqual(not(or(A, B)));
      expect(parseAcs('(GM[a]|GM[b])GM[c]')).toEqual(and(or(A, B), C));
    });

    it('parses nested parentheses', () => {
      expect(parseAcs('((GM[a]))')).toEqual(A);
      expect(parseAcs('(GM[a]|(GM[b]&!(GM[c]|ID1)))')).toEqual(or(A, and(B, not(or(C, id(1))))));
    });
  });

  describe('whitespace', () => {
    it('ignores spaces, tabs and newlines between tokens', () => {
      const expected = or(A, and(B, not(id(1))));
      expect(parseAcs('GM[a]|GM[b]&!ID1')).toEqual(expected);
      expect(parseAcs('  GM[a]  |  GM[b]  &  !  ID 1  ')).toEqual(expected);
      expect(parseAcs('\tGM[ a ]\n|\r\nGM[b] & !ID\t1\n')).toEqual(expected);
      expect(parseAcs(' ( GM[a] ) ')).toEqual(A);
    });
  });

  describe('syntax errors', () => {
    it.each<[string, string, number]>([
      // unbalanced parentheses
      ['(GM[a]', 'unclosed "(" at position 0', 0],
      ['GM[a] & ((ID1)', 'unclosed "(" at position 8', 8],
      ['GM[a])', 'unexpected ")" at position 5', 5],
      ['(GM[a]|ID1))', 'unexpected ")" at position 11', 11],
      ['()', 'unexpected ")" at position 1', 1],
      [')', 'unexpected ")" at position 0', 0],
      // dangling operators
      ['GM[a]|', 'unexpected end of input at position 6', 6],
      ['GM[a] &', 'unexpected end of input at position 7', 7],
      ['!', 'unexpected end of input at position 1', 1],
      ['|GM[a]', 'unexpected "|" at position 0', 0],
      ['&GM[a]', 'unexpected "&" at position 0', 0],
      ['GM[a]||GM[b]', 'unexpected "|" at position 6', 6],
      ['GM[a]&&GM[b]', 'unexpected "&" at position 6', 6],
      ['GM[a]&|GM[b]', 'unexpected "|" at position 6', 6],
      ['GM[a]!', 'unexpected end of input at position 6', 6],
      // unknown or malformed codes
      ['XY1', 'unknown ACS code "XY" at position 0', 0],
      ['GM[a]|ZZ', 'unknown ACS code "ZZ" at position 6', 6],
      ['gm[a]', 'expected a two-letter uppercase ACS code at position 0', 0],
      ['G[a]', 'expected a two-letter uppercase ACS code at position 0', 0],
      ['ID1 Gm[a]', 'expected a two-letter uppercase ACS code at position 4', 4],
      ['GM[a]#', 'unexpected "#" at position 5', 5],
      // missing arguments
      ['GM', 'expected a list like GM[a,b] but found end of input at position 2', 2],
      ['GM&ID1', 'expected a list like GM[a,b] but found "&" at position 2', 2],
      ['GM5', 'expected a list like GM[a,b] but found "5" at position 2', 2],
      ['ID', 'expected a number or a list of numbers after ID but found end of input at position 2', 2],
      ['ID|GM[a]', 'expected a number or a list of numbers after ID but found "|" at position 2', 2],
      ['NC', 'expected a number after NC but found end of input at position 2', 2],
      ['NC GM[a]', 'expected a number after NC but found "GM" at position 3', 3],
      ['AG[18]', 'expected a number after AG but found "[" at position 2', 2],
      ['AS', 'expected a number after AS but found end of input at position 2', 2],
      ['WD', 'expected a number or a list of numbers after WD but found end of input at position 2', 2],
      ['MM', 'expected a number after MM but found end of input at position 2', 2],
      ['PV', 'expected a list like PV[a,b] but found end of input at position 2', 2],
      ['SC1', 'SC takes no argument at position 2', 2],
      ['SC [x]', 'SC takes no argument at position 3', 3],
      ['LC[1]', 'LC takes no list at position 2', 2],
      // bad lists
      ['GM[]', 'empty list at position 2', 2],
      ['GM[  ]', 'empty list at position 2', 2],
      ['GM[a,]', 'empty list item at position 5', 5],
      ['GM[,a]', 'empty list item at position 3', 3],
      ['GM[a, ,b]', 'empty list item at position 5', 5],
      ['GM[a', 'unclosed "[" at position 2', 2],
      ['GM[a[b]]', 'unexpected "[" at position 4', 4],
      ['GM[a] ]', 'unexpected "]" at position 6', 6],
      ['ID[1,x]', 'list item "x" is not a non-negative integer at position 5', 5],
      ['ID[ -1 ]', 'list item "-1" is not a non-negative integer at position 4', 4],
      ['WD7', 'weekday 7 is not 0 (Sunday) to 6 (Saturday) at position 2', 2],
      ['WD[0, 9]', 'weekday 9 is not 0 (Sunday) to 6 (Saturday) at position 2', 2],
      ['NC 99999999999999999999', 'number 99999999999999999999 is too large at position 3', 3],
      // PV arity
      ['PV[theme]', 'PV expects exactly [name,value] but got 1 item(s) at position 2', 2],
      ['PV[a,b,c]', 'PV expects exactly [name,value] but got 3 item(s) at position 2', 2],
      // trailing garbage
      ['GM[a] 5', 'unexpected "5" at position 6', 6],
      ['ID1 2', 'unexpected "2" at position 4', 4],
      ['GM[a] [b]', 'unexpected "[" at position 6', 6],
      ['(ID1 2)', 'unexpected "2" at position 5', 5],
    ])('rejects %j: %s', (source, message, position) => {
      const error = syntaxError(source);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('AcsSyntaxError');
      expect(error.message).toBe(message);
      expect(error.position).toBe(position);
    });

    it('reports the leftmost of several errors', () => {
      expect(syntaxError('GM[a]) XY').position).toBe(5);
      expect(syntaxError(')gm').position).toBe(0);
    });
  });
});
