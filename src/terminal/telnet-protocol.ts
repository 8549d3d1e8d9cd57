/**
 * Telnet (RFC 854) as baud speaks it, with no sockets: bytes in, the caller's typing, what the
 * client told (window size, terminal type) and our negotiation answers out.
 *
 * We offer ECHO and SUPPRESS-GO-AHEAD (RFC 857, 858: the session echoes and there is no
 * half-duplex), and ask for NAWS (RFC 1073) and TERMINAL-TYPE (RFC 1091). Every other option is
 * refused. Option state follows RFC 1143's rule that a request for the state an option is in
 * already gets no answer, so two sides can never answer each other's answers for ever.
 */

import { terminalTypeName } from './transport-connection.js';

/** The telnet commands (RFC 854) this protocol speaks, by name. */
export const TELNET_COMMAND = { IAC: 255, DONT: 254, DO: 253, WONT: 252, WILL: 251, SB: 250, SE: 240 } as const;
export const { IAC } = TELNET_COMMAND;
const { DONT, DO, WONT, WILL, SB, SE } = TELNET_COMMAND;

export const TELNET_OPTION = {
  ECHO: 1,
  SUPPRESS_GO_AHEAD: 3,
  TERMINAL_TYPE: 24,
  NAWS: 31,
} as const;

const TTYPE_IS = 0;
const TTYPE_SEND = 1;
const CR = 13;
const LF = 10;
const NUL = 0;

/**
 * The longest subnegotiation kept: NAWS is 4 bytes, a terminal type at most 40 (RFC 1091). A
 * longer one is read to its end and dropped, so a client sending SB without SE costs no memory.
 */
export const MAX_SUBNEGOTIATION_BYTES = 64;

/** Options we enable on our side (WILL) and ask the client to enable on its side (DO). */
const OURS = new Set<number>([TELNET_OPTION.ECHO, TELNET_OPTION.SUPPRESS_GO_AHEAD]);
const THEIRS = new Set<number>([TELNET_OPTION.NAWS, TELNET_OPTION.TERMINAL_TYPE]);

export type TelnetEvent =
  /** NAWS as the client said it: 0 means "not known" (RFC 1073), clamping is the caller's. */
  | { readonly type: 'window-size'; readonly columns: number; readonly rows: number }
  /** The client's terminal type (TTYPE IS), lower case. */
  | { readonly type: 'terminal-type'; readonly name: string }
  /** The client will not tell its terminal type: there is nothing to wait for. */
  | { readonly type: 'no-terminal-type' };

/** What one chunk of input held. */
export interface TelnetInput {
  /** What the caller typed: commands removed, IAC IAC as 255, CR NUL and CR LF as CR. */
  readonly data: Buffer;
  readonly events: readonly TelnetEvent[];
  /** Negotiation answers to send back (empty when none). */
  readonly reply: Buffer;
}

export interface TelnetProtocol {
  /** What to send as the connection opens: our offers and requests. */
  readonly opening: Buffer;
  /** Reads one chunk; sequences split across chunks are carried over to the next. */
  receive(chunk: Buffer): TelnetInput;
}

/** An option's state on one side (RFC 1143 without WANTNO: we never turn an option off ourselves). */
type OptionState = 'no' | 'yes' | 'asked';

type ParserState =
  | { readonly kind: 'data' }
  | { readonly kind: 'iac' }
  | { readonly kind: 'option'; readonly verb: number }
  | { readonly kind: 'sb-option' }
  | { readonly kind: 'sb-data' }
  | { readonly kind: 'sb-iac' };

const DATA: ParserState = { kind: 'data' };
const AFTER_IAC: ParserState = { kind: 'iac' };
const SB_OPTION: ParserState = { kind: 'sb-option' };
const SB_DATA: ParserState = { kind: 'sb-data' };
const SB_IAC: ParserState = { kind: 'sb-iac' };

/** Doubles every 255 byte, which telnet would read as IAC. */
export function escapeTelnetOutput(bytes: Buffer): Buffer {
  const count = bytes.reduce((sum, byte) => (byte === IAC ? sum + 1 : sum), 0);
  if (count === 0) return bytes;
  const escaped = Buffer.allocUnsafe(bytes.length + count);
  let at = 0;
  for (const byte of bytes) {
    escaped[at++] = byte;
    if (byte === IAC) escaped[at++] = IAC;
  }
  return escaped;
}

/** A parser for one connection (it carries state from chunk to chunk). */
export function createTelnetProtocol(): TelnetProtocol {
  const ours = new Map<number, OptionState>([...OURS].map((option) => [option, 'asked']));
  const theirs = new Map<number, OptionState>([...THEIRS].map((option) => [option, 'asked']));
  let state: ParserState = DATA;
  let afterCr = false;
  let hasTerminalType = false;
  const subnegotiation = Buffer.alloc(MAX_SUBNEGOTIATION_BYTES);
  let subnegotiationOption = 0;
  let subnegotiationLength = 0;
  let isSubnegotiationTooLong = false;

  const command = (verb: number, option: number) => Buffer.from([IAC, verb, option]);
  const askTerminalType = () => Buffer.from([IAC, SB, TELNET_OPTION.TERMINAL_TYPE, TTYPE_SEND, IAC, SE]);

  const opening = Buffer.concat([
    ...[...OURS].map((option) => command(WILL, option)),
    ...[...THEIRS].map((option) => command(DO, option)),
  ]);

  /** The client will enable (WILL) or refuses (WONT) an option on its side. */
  function onTheirs(isOn: boolean, option: number, replies: Buffer[], events: TelnetEvent[]): void {
    const current = theirs.get(option) ?? 'no';
    if (isOn) {
      if (current === 'yes') return;
      if (!THEIRS.has(option)) {
        replies.push(command(DONT, option));
        return;
      }
      theirs.set(option, 'yes');
      if (current === 'no') replies.push(command(DO, option));
      if (option === TELNET_OPTION.TERMINAL_TYPE) replies.push(askTerminalType());
      return;
    }
    if (current === 'no') return;
    theirs.set(option, 'no');
    if (current === 'yes') replies.push(command(DONT, option));
    if (option === TELNET_OPTION.TERMINAL_TYPE && !hasTerminalType) events.push({ type: 'no-terminal-type' });
  }

  /** The client asks us to enable (DO) or not to (DONT) an option on our side. */
  function onOurs(isOn: boolean, option: number, replies: Buffer[]): void {
    const current = ours.get(option) ?? 'no';
    if (isOn) {
      if (current === 'yes') return;
      if (!OURS.has(option)) {
        replies.push(command(WONT, option));
        return;
      }
      ours.set(option, 'yes');
      if (current === 'no') replies.push(command(WILL, option));
      return;
    }
    if (current === 'no') return;
    ours.set(option, 'no');
    if (current === 'yes') replies.push(command(WONT, option));
  }

  function endSubnegotiation(events: TelnetEvent[]): void {
    if (isSubnegotiationTooLong) return;
    const body = subnegotiation.subarray(0, subnegotiationLength);
    if (subnegotiationOption === TELNET_OPTION.NAWS && body.length === 4) {
      events.push({ type: 'window-size', columns: body.readUInt16BE(0), rows: body.readUInt16BE(2) });
    } else if (subnegotiationOption === TELNET_OPTION.TERMINAL_TYPE && body[0] === TTYPE_IS && !hasTerminalType) {
      const name = terminalTypeName(body.subarray(1).toString('latin1'));
      hasTerminalType = true;
      events.push(name === '' ? { type: 'no-terminal-type' } : { type: 'terminal-type', name });
    }
  }

  return {
    opening,

    receive(chunk) {
      // Typed bytes are never more than the chunk's.
      const data = Buffer.allocUnsafe(chunk.length);
      let dataLength = 0;
      const replies: Buffer[] = [];
      const events: TelnetEvent[] = [];
      const type = (byte: number) => {
        data[dataLength++] = byte;
      };

      for (let index = 0; index < chunk.length; index += 1) {
        const byte = chunk[index] as number;
        switch (state.kind) {
          case 'data':
            if (byte === IAC) {
              state = AFTER_IAC;
            } else if (afterCr && (byte === NUL || byte === LF)) {
              afterCr = false;
            } else {
              afterCr = byte === CR;
              type(byte);
            }
            break;
          case 'iac':
            if (byte === IAC) {
              afterCr = false;
              type(IAC);
              state = DATA;
            } else if (byte === WILL || byte === WONT || byte === DO || byte === DONT) {
              state = { kind: 'option', verb: byte };
            } else if (byte === SB) {
              state = SB_OPTION;
            } else {
              // NOP, GA, AYT, BRK and the rest carry nothing a caller's session needs.
              state = DATA;
            }
            break;
          case 'option':
            if (state.verb === WILL || state.verb === WONT) onTheirs(state.verb === WILL, byte, replies, events);
            else onOurs(state.verb === DO, byte, replies);
            state = DATA;
            break;
          case 'sb-option':
            subnegotiationOption = byte;
            subnegotiationLength = 0;
            isSubnegotiationTooLong = false;
            state = SB_DATA;
            break;
          case 'sb-data':
          case 'sb-iac': {
            const isEscaped = state.kind === 'sb-iac';
            if (!isEscaped && byte === IAC) {
              state = SB_IAC;
              break;
            }
            if (isEscaped && byte === SE) {
              endSubnegotiation(events);
              state = DATA;
              break;
            }
            if (isEscaped && byte !== IAC) {
              // IAC then neither SE nor IAC: a broken subnegotiation. Drop it and read the byte
              // as the command it starts, so the client's next commands are not lost.
              state = AFTER_IAC;
              index -= 1;
              break;
            }
            if (subnegotiationLength < MAX_SUBNEGOTIATION_BYTES) subnegotiation[subnegotiationLength++] = byte;
            else isSubnegotiationTooLong = true;
            state = SB_DATA;
            break;
          }
        }
      }
      return {
        data: data.subarray(0, dataLength),
        events,
        reply: replies.length === 0 ? Buffer.alloc(0) : Buffer.concat(replies),
      };
    },
  };
}
