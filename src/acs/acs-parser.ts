/**
 * Parser for ENiGMA½-style access control strings (ACS), e.g. `GM[sysops]|ID1`, `!GM[banned] NC 5`.
 *
 * Grammar (whitespace is allowed between any two tokens):
 *
 *     or-expr   := and-expr ('|' and-expr)*
 *     and-expr  := unary ('&'? unary)*          juxtaposition means AND
 *     unary     := '!' unary | '(' or-expr ')' | condition
 *     condition := CODE argument?               CODE is exactly two uppercase letters
 *     argument  := INTEGER | '[' item (',' item)* ']'
 *
 * Which argument a code takes is fixed per code (see `AcsCondition`); a wrong or missing
 * argument is a syntax error, so a typo in the configuration stops start-up instead of
 * silently changing who may read an area.
 */

import { BaudError } from '../errors.js';

/** Codes whose argument is a single integer `n` and which hold when the subject's figure is ≥ n. */
export type AcsThresholdCode =
  | 'AG'
  | 'NC'
  | 'NP'
  | 'AA'
  | 'UP'
  | 'DL'
  | 'BU'
  | 'BD'
  | 'NR'
  | 'KR'
  | 'PC'
  | 'AC'
  | 'AP'
  | 'MM';

/** Codes that only make sense on a terminal connection; they parse but never hold over HTTP. */
export type AcsTerminalCode = 'LC' | 'NN' | 'TH' | 'TW' | 'TT' | 'TM' | 'EC' | 'AF';

/** One parsed ACS code with its argument. */
export type AcsCondition =
  | { readonly kind: 'condition'; readonly code: 'GM'; readonly groups: readonly string[] }
  | { readonly kind: 'condition'; readonly code: 'ID'; readonly userIds: readonly number[] }
  | { readonly kind: 'condition'; readonly code: 'AS'; readonly accountStatus: number }
  | { readonly kind: 'condition'; readonly code: 'PV'; readonly name: string; readonly value: string }
  | { readonly kind: 'condition'; readonly code: 'WD'; readonly weekdays: readonly number[] }
  | { readonly kind: 'condition'; readonly code: AcsThresholdCode; readonly min: number }
  | { readonly kind: 'condition'; readonly code: 'SC' }
  | { readonly kind: 'condition'; readonly code: AcsTerminalCode; readonly argument: number | null };

/**
 * A parsed ACS. `everyone` is what an empty or whitespace-only ACS means: every
 * authenticated user is allowed (anonymous callers are the caller's business, not the ACS's).
 * `and` / `or` always have at least two operands.
 */
export type AcsExpression =
  | { readonly kind: 'everyone' }
  | { readonly kind: 'and'; readonly operands: readonly AcsExpression[] }
  | { readonly kind: 'or'; readonly operands: readonly AcsExpression[] }
  | { readonly kind: 'not'; readonly operand: AcsExpression }
  | AcsCondition;

/** An ACS that does not follow the grammar. `position` is the 0-based index into the source. */
export class AcsSyntaxError extends BaudError<'acs.invalid-syntax'> {
  override readonly name = 'AcsSyntaxError';
  readonly position: number;

  constructor(description: string, position: number) {
    super('acs.invalid-syntax', `${description} at position ${position}`);
    this.position = position;
  }
}

const THRESHOLD_CODES: ReadonlySet<string> = new Set<AcsThresholdCode>([
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
]);

const TERMINAL_CODES: ReadonlySet<string> = new Set<AcsTerminalCode>(['LC', 'NN', 'TH', 'TW', 'TT', 'TM', 'EC', 'AF']);

function isThresholdCode(code: string): code is AcsThresholdCode {
  return THRESHOLD_CODES.has(code);
}

function isTerminalCode(code: string): code is AcsTerminalCode {
  return TERMINAL_CODES.has(code);
}

interface ListItem {
  readonly text: string;
  readonly position: number;
}

interface ListToken {
  readonly type: 'list';
  readonly items: readonly ListItem[];
  readonly position: number;
}

type Token =
  | { readonly type: 'operator'; readonly text: '(' | ')' | '|' | '&' | '!'; readonly position: number }
  | { readonly type: 'code'; readonly text: string; readonly position: number }
  | { readonly type: 'integer'; readonly text: string; readonly position: number }
  | ListToken
  | { readonly type: 'end'; readonly position: number };

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';
}

function isDigit(ch: string): boolean {
  return ch >= '0' && ch <= '9';
}

function isUppercase(ch: string): boolean {
  return ch >= 'A' && ch <= 'Z';
}

function describeToken(token: Token): string {
  switch (token.type) {
    case 'end':
      return 'end of input';
    case 'list':
      return '"["';
    default:
      return `"${token.text}"`;
  }
}

/**
 * Lexes on demand rather than up front so that the first error reported is the leftmost
 * one, whichever of lexer and parser finds it.
 */
class Lexer {
  private index = 0;
  private lookahead: Token | null = null;

  constructor(private readonly source: string) {}

  peek(): Token {
    if (this.lookahead === null) this.lookahead = this.lex();
    return this.lookahead;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead = null;
    return token;
  }

  private lex(): Token {
    const src = this.source;
    while (this.index < src.length && isWhitespace(src.charAt(this.index))) this.index++;
    const start = this.index;
    if (start >= src.length) return { type: 'end', position: start };
    const ch = src.charAt(start);

    if (ch === '(' || ch === ')' || ch === '|' || ch === '&' || ch === '!') {
      this.index++;
      return { type: 'operator', text: ch, position: start };
    }
    if (isDigit(ch)) {
      while (this.index < src.length && isDigit(src.charAt(this.index))) this.index++;
      return { type: 'integer', text: src.slice(start, this.index), position: start };
    }
    if (isUppercase(ch)) {
      // Codes are exactly two letters, so `SCID1` is `SC` followed by `ID1`, as in ENiGMA.
      const second = src.charAt(start + 1);
      if (!isUppercase(second)) {
        throw new AcsSyntaxError('expected a two-letter uppercase ACS code', start);
      }
      this.index += 2;
      return { type: 'code', text: src.slice(start, start + 2), position: start };
    }
    if (ch === '[') return this.lexList();
    if (ch >= 'a' && ch <= 'z') throw new AcsSyntaxError('expected a two-letter uppercase ACS code', start);
    throw new AcsSyntaxError(`unexpected "${ch}"`, start);
  }

  /** Items are trimmed and may hold any character but `[`, `]` and `,`. */
  private lexList(): ListToken {
    const src = this.source;
    const start = this.index;
    const close = src.indexOf(']', start + 1);
    const nestedOpen = src.indexOf('[', start + 1);
    if (nestedOpen !== -1 && (close === -1 || nestedOpen < close)) {
      throw new AcsSyntaxError('unexpected "["', nestedOpen);
    }
    if (close === -1) throw new AcsSyntaxError('unclosed "["', start);
    const body = src.slice(start + 1, close);
    if (body.trim() === '') throw new AcsSyntaxError('empty list', start);

    const items: ListItem[] = [];
    let itemStart = start + 1;
    for (const raw of body.split(',')) {
      const leading = raw.length - raw.trimStart().length;
      const text = raw.trim();
      const position = text === '' ? itemStart : itemStart + leading;
      if (text === '') throw new AcsSyntaxError('empty list item', position);
      items.push({ text, position });
      itemStart += raw.length + 1;
    }
    this.index = close + 1;
    return { type: 'list', items, position: start };
  }
}

function startsUnary(token: Token): boolean {
  return token.type === 'code' || (token.type === 'operator' && (token.text === '(' || token.text === '!'));
}

function parseSafeInteger(text: string, position: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new AcsSyntaxError(`number ${text} is too large`, position);
  return value;
}

function parseIntegerItem(item: ListItem): number {
  if (!/^[0-9]+$/.test(item.text)) {
    throw new AcsSyntaxError(`list item "${item.text}" is not a non-negative integer`, item.position);
  }
  return parseSafeInteger(item.text, item.position);
}

class Parser {
  constructor(private readonly lexer: Lexer) {}

  parse(): AcsExpression {
    const expression = this.parseOr();
    const rest = this.lexer.peek();
    if (rest.type !== 'end') throw new AcsSyntaxError(`unexpected ${describeToken(rest)}`, rest.position);
    return expression;
  }

  private parseOr(): AcsExpression {
    const first = this.parseAnd();
    const operands = [first];
    for (let token = this.lexer.peek(); token.type === 'operator' && token.text === '|'; token = this.lexer.peek()) {
      this.lexer.next();
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? first : { kind: 'or', operands };
  }

  private parseAnd(): AcsExpression {
    const first = this.parseUnary();
    const operands = [first];
    for (;;) {
      const token = this.lexer.peek();
      if (token.type === 'operator' && token.text === '&') {
        this.lexer.next();
      } else if (!startsUnary(token)) {
        break;
      }
      operands.push(this.parseUnary());
    }
    return operands.length === 1 ? first : { kind: 'and', operands };
  }

  private parseUnary(): AcsExpression {
    const token = this.lexer.next();
    if (token.type === 'operator' && token.text === '!') {
      return { kind: 'not', operand: this.parseUnary() };
    }
    if (token.type === 'operator' && token.text === '(') {
      const inner = this.parseOr();
      const close = this.lexer.next();
      if (close.type === 'end') throw new AcsSyntaxError('unclosed "("', token.position);
      if (close.type !== 'operator' || close.text !== ')') {
        throw new AcsSyntaxError(`unexpected ${describeToken(close)}`, close.position);
      }
      return inner;
    }
    if (token.type === 'code') return this.parseCondition(token.text, token.position);
    throw new AcsSyntaxError(`unexpected ${describeToken(token)}`, token.position);
  }

  private parseCondition(code: string, position: number): AcsCondition {
    switch (code) {
      case 'GM':
        return { kind: 'condition', code, groups: this.expectList(code).items.map((item) => item.text) };
      case 'ID':
        return { kind: 'condition', code, userIds: this.expectIntegers(code) };
      case 'AS':
        return { kind: 'condition', code, accountStatus: this.expectInteger(code) };
      case 'PV': {
        const list = this.expectList(code);
        const [name, value] = list.items;
        if (list.items.length !== 2 || name === undefined || value === undefined) {
          throw new AcsSyntaxError(
            `PV expects exactly [name,value] but got ${list.items.length} item(s)`,
            list.position,
          );
        }
        return { kind: 'condition', code, name: name.text, value: value.text };
      }
      case 'WD': {
        const argument = this.lexer.peek();
        const weekdays = this.expectIntegers(code);
        const outOfRange = weekdays.find((day) => day > 6);
        if (outOfRange !== undefined) {
          throw new AcsSyntaxError(`weekday ${outOfRange} is not 0 (Sunday) to 6 (Saturday)`, argument.position);
        }
        return { kind: 'condition', code, weekdays };
      }
      case 'SC': {
        const argument = this.lexer.peek();
        if (argument.type === 'integer' || argument.type === 'list') {
          throw new AcsSyntaxError('SC takes no argument', argument.position);
        }
        return { kind: 'condition', code };
      }
    }
    if (isThresholdCode(code)) return { kind: 'condition', code, min: this.expectInteger(code) };
    if (isTerminalCode(code)) {
      const argument = this.lexer.peek();
      if (argument.type === 'list') throw new AcsSyntaxError(`${code} takes no list`, argument.position);
      if (argument.type !== 'integer') return { kind: 'condition', code, argument: null };
      this.lexer.next();
      return { kind: 'condition', code, argument: parseSafeInteger(argument.text, argument.position) };
    }
    throw new AcsSyntaxError(`unknown ACS code "${code}"`, position);
  }

  private expectInteger(code: string): number {
    const token = this.lexer.next();
    if (token.type !== 'integer') {
      throw new AcsSyntaxError(`expected a number after ${code} but found ${describeToken(token)}`, token.position);
    }
    return parseSafeInteger(token.text, token.position);
  }

  private expectList(code: string): ListToken {
    const token = this.lexer.next();
    if (token.type !== 'list') {
      throw new AcsSyntaxError(`expected a list like ${code}[a,b] but found ${describeToken(token)}`, token.position);
    }
    return token;
  }

  /** `ID1`, `ID 1` and `ID[1,2]` are all accepted. */
  private expectIntegers(code: string): readonly number[] {
    const token = this.lexer.next();
    if (token.type === 'integer') return [parseSafeInteger(token.text, token.position)];
    if (token.type === 'list') return token.items.map(parseIntegerItem);
    throw new AcsSyntaxError(
      `expected a number or a list of numbers after ${code} but found ${describeToken(token)}`,
      token.position,
    );
  }
}

/**
 * Parses an ACS string. Empty or whitespace-only input yields `{ kind: 'everyone' }`
 * (every authenticated user); anything else must follow the grammar above.
 *
 * @example parseAcs('GM[sysops]|ID1') // { kind: 'or', operands: [GM sysops, ID 1] }
 * @throws AcsSyntaxError naming the problem and its 0-based position, e.g. `unexpected ")" at position 7`.
 */
export function parseAcs(source: string): AcsExpression {
  if (source.trim() === '') return { kind: 'everyone' };
  return new Parser(new Lexer(source)).parse();
}
