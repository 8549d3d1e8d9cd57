import { describe, expect, it } from 'vitest';
import {
  createTelnetProtocol,
  escapeTelnetOutput,
  MAX_SUBNEGOTIATION_BYTES,
  TELNET_COMMAND,
  TELNET_OPTION,
  type TelnetProtocol,
} from '../../src/terminal/telnet-protocol.js';
import { DEFAULT_TERMINAL_SIZE, reportedTerminalSize } from '../../src/terminal/transport-connection.js';

const { IAC, DONT, DO, WONT, WILL, SB, SE } = TELNET_COMMAND;
const { ECHO, SUPPRESS_GO_AHEAD: SGA, TERMINAL_TYPE: TTYPE, NAWS } = TELNET_OPTION;
const LINEMODE = 34;
const BINARY = 0;

const bytes = (...values: number[]) => Buffer.from(values);
const ttypeIs = (name: string) =>
  Buffer.concat([bytes(IAC, SB, TTYPE, 0), Buffer.from(name, 'latin1'), bytes(IAC, SE)]);
const naws = (columns: number, rows: number) => {
  const body = Buffer.alloc(4);
  body.writeUInt16BE(columns, 0);
  body.writeUInt16BE(rows, 2);
  return Buffer.concat([bytes(IAC, SB, NAWS), escapeTelnetOutput(body), bytes(IAC, SE)]);
};
const SEND_TTYPE = bytes(IAC, SB, TTYPE, 1, IAC, SE);

/** Feeds `input` one byte per chunk and gathers everything, to prove no sequence depends on a chunk boundary. */
function receiveBytewise(protocol: TelnetProtocol, input: Buffer) {
  const data: Buffer[] = [];
  const replies: Buffer[] = [];
  const events = [];
  for (const byte of input) {
    const result = protocol.receive(bytes(byte));
    data.push(result.data);
    replies.push(result.reply);
    events.push(...result.events);
  }
  return { data: Buffer.concat(data), reply: Buffer.concat(replies), events };
}

describe('telnet protocol', () => {
  it('opens by offering ECHO and SUPPRESS-GO-AHEAD and asking for NAWS and TERMINAL-TYPE', () => {
    expect([...createTelnetProtocol().opening]).toEqual([
      IAC,
      WILL,
      ECHO,
      IAC,
      WILL,
      SGA,
      IAC,
      DO,
      NAWS,
      IAC,
      DO,
      TTYPE,
    ]);
  });

  it('takes the agreement to what it offered and asked without answering it again', () => {
    const protocol = createTelnetProtocol();
    const result = protocol.receive(bytes(IAC, DO, ECHO, IAC, DO, SGA, IAC, WILL, NAWS));
    expect(result).toEqual({ data: Buffer.alloc(0), events: [], reply: Buffer.alloc(0) });
    // Asked again: the option is on already, so nothing is said (no answer to an answer).
    expect(protocol.receive(bytes(IAC, DO, ECHO, IAC, WILL, NAWS)).reply).toEqual(Buffer.alloc(0));
  });

  it('asks for the terminal type once the client agrees to TERMINAL-TYPE, and only once', () => {
    const protocol = createTelnetProtocol();
    expect(protocol.receive(bytes(IAC, WILL, TTYPE)).reply).toEqual(SEND_TTYPE);
    expect(protocol.receive(bytes(IAC, WILL, TTYPE)).reply).toEqual(Buffer.alloc(0));
  });

  it('reads TTYPE IS as the terminal type, lower case and printable only, and only the first one', () => {
    const protocol = createTelnetProtocol();
    protocol.receive(bytes(IAC, WILL, TTYPE));
    expect(protocol.receive(ttypeIs('XTERM-256color\u0007')).events).toEqual([
      { type: 'terminal-type', name: 'xterm-256color' },
    ]);
    expect(protocol.receive(ttypeIs('VT100')).events).toEqual([]);
  });

  it('says there is no terminal type to wait for when the client refuses TERMINAL-TYPE', () => {
    const protocol = createTelnetProtocol();
    const result = protocol.receive(bytes(IAC, WONT, TTYPE));
    expect(result.events).toEqual([{ type: 'no-terminal-type' }]);
    // A refusal of what we asked is not answered; a second refusal is not reported again.
    expect(result.reply).toEqual(Buffer.alloc(0));
    expect(protocol.receive(bytes(IAC, WONT, TTYPE))).toEqual({
      data: Buffer.alloc(0),
      events: [],
      reply: Buffer.alloc(0),
    });
  });

  it('reads NAWS, including 255 escaped as IAC IAC inside the subnegotiation', () => {
    const protocol = createTelnetProtocol();
    expect(protocol.receive(naws(132, 43)).events).toEqual([{ type: 'window-size', columns: 132, rows: 43 }]);
    expect(protocol.receive(naws(255, 255)).events).toEqual([{ type: 'window-size', columns: 255, rows: 255 }]);
    expect(protocol.receive(naws(65535, 65535)).events).toEqual([{ type: 'window-size', columns: 65535, rows: 65535 }]);
    expect(protocol.receive(naws(0, 0)).events).toEqual([{ type: 'window-size', columns: 0, rows: 0 }]);
  });

  it('clamps reported sizes to 20–255 × 5–255, and keeps the size it had for a 0 ("not known")', () => {
    expect(reportedTerminalSize({ columns: 65535, rows: 65535 }, DEFAULT_TERMINAL_SIZE)).toEqual({
      columns: 255,
      rows: 255,
    });
    expect(reportedTerminalSize({ columns: 3, rows: 1 }, DEFAULT_TERMINAL_SIZE)).toEqual({ columns: 20, rows: 5 });
    expect(reportedTerminalSize({ columns: 0, rows: 0 }, { columns: 100, rows: 30 })).toEqual({
      columns: 100,
      rows: 30,
    });
    expect(reportedTerminalSize({ columns: 0, rows: 50 }, DEFAULT_TERMINAL_SIZE)).toEqual({ columns: 80, rows: 50 });
  });

  it('refuses every option it does not speak, once per request, and not a refusal of a refusal', () => {
    const protocol = createTelnetProtocol();
    expect([...protocol.receive(bytes(IAC, DO, LINEMODE)).reply]).toEqual([IAC, WONT, LINEMODE]);
    expect([...protocol.receive(bytes(IAC, WILL, BINARY)).reply]).toEqual([IAC, DONT, BINARY]);
    // The client's own refusals of options that are off: nothing to say.
    expect([...protocol.receive(bytes(IAC, DONT, LINEMODE, IAC, WONT, BINARY)).reply]).toEqual([]);
    // Asked a hundred times, answered a hundred times: never more than asked.
    const flood = Buffer.concat(Array.from({ length: 100 }, () => bytes(IAC, DO, LINEMODE)));
    expect(protocol.receive(flood).reply.length).toBe(300);
  });

  it('turns ECHO off when told DONT, once, and back on when asked DO', () => {
    const protocol = createTelnetProtocol();
    protocol.receive(bytes(IAC, DO, ECHO));
    expect([...protocol.receive(bytes(IAC, DONT, ECHO)).reply]).toEqual([IAC, WONT, ECHO]);
    expect([...protocol.receive(bytes(IAC, DONT, ECHO)).reply]).toEqual([]);
    expect([...protocol.receive(bytes(IAC, DO, ECHO)).reply]).toEqual([IAC, WILL, ECHO]);
  });

  it('answers a client that stops NAWS with DONT, and a refused request with nothing', () => {
    const protocol = createTelnetProtocol();
    expect([...protocol.receive(bytes(IAC, WONT, NAWS)).reply]).toEqual([]);
    expect([...protocol.receive(bytes(IAC, WILL, NAWS)).reply]).toEqual([IAC, DO, NAWS]);
    expect([...protocol.receive(bytes(IAC, WONT, NAWS)).reply]).toEqual([IAC, DONT, NAWS]);
  });

  it('passes typed bytes through and reads IAC IAC as one 255', () => {
    const protocol = createTelnetProtocol();
    expect([...protocol.receive(bytes(0x61, IAC, IAC, 0x62)).data]).toEqual([0x61, 255, 0x62]);
  });

  it('makes CR NUL and CR LF a CR, and keeps a lone LF and CR followed by text', () => {
    const protocol = createTelnetProtocol();
    expect(protocol.receive(Buffer.from('a\r\0b\r\nc\nd\re')).data.toString('latin1')).toBe('a\rb\rc\nd\re');
  });

  it('drops commands that carry nothing (NOP, GA, AYT) and the SB of options it does not speak', () => {
    const protocol = createTelnetProtocol();
    const input = Buffer.concat([
      Buffer.from('x'),
      bytes(IAC, 241, IAC, 249, IAC, 246),
      bytes(IAC, SB, LINEMODE, 1, 2, 3, IAC, SE),
      Buffer.from('y'),
    ]);
    expect(protocol.receive(input)).toEqual({ data: Buffer.from('xy'), events: [], reply: Buffer.alloc(0) });
  });

  it('reads every sequence the same when it arrives one byte at a time', () => {
    const input = Buffer.concat([
      Buffer.from('h'),
      bytes(IAC, WILL, TTYPE, IAC, DO, LINEMODE),
      ttypeIs('ANSI'),
      naws(255, 40),
      Buffer.from('i\r\n'),
      bytes(IAC, IAC),
      Buffer.from('\r\0!'),
    ]);
    const whole = createTelnetProtocol().receive(input);
    const split = receiveBytewise(createTelnetProtocol(), input);
    expect(split).toEqual({ data: whole.data, reply: whole.reply, events: whole.events });
    expect(split.data).toEqual(Buffer.from([0x68, 0x69, 13, 255, 13, 0x21]));
    expect(split.events).toEqual([
      { type: 'terminal-type', name: 'ansi' },
      { type: 'window-size', columns: 255, rows: 40 },
    ]);
    expect(split.reply).toEqual(Buffer.concat([SEND_TTYPE, bytes(IAC, WONT, LINEMODE)]));
  });

  it('keeps a flood of subnegotiation without SE to a fixed buffer, drops it, and reads on after SE', () => {
    const protocol = createTelnetProtocol();
    protocol.receive(bytes(IAC, SB, TTYPE, 0));
    const megabyte = Buffer.alloc(1024 * 1024, 0x41);
    for (let chunk = 0; chunk < 8; chunk += 1) {
      expect(protocol.receive(megabyte)).toEqual({ data: Buffer.alloc(0), events: [], reply: Buffer.alloc(0) });
    }
    const after = protocol.receive(Buffer.concat([bytes(IAC, SE), Buffer.from('ok')]));
    // Far too long to be a terminal type: dropped whole, not cut to a made-up name.
    expect(after).toEqual({ data: Buffer.from('ok'), events: [], reply: Buffer.alloc(0) });
    expect(MAX_SUBNEGOTIATION_BYTES).toBeLessThanOrEqual(64);
  });

  it('drops a subnegotiation broken by another command and reads that command', () => {
    const protocol = createTelnetProtocol();
    const result = protocol.receive(Buffer.concat([bytes(IAC, SB, NAWS, 0, 80, IAC, DO, LINEMODE), Buffer.from('z')]));
    expect(result).toEqual({ data: Buffer.from('z'), events: [], reply: bytes(IAC, WONT, LINEMODE) });
  });

  it('escapes 255 in output as IAC IAC and leaves other bytes alone', () => {
    expect([...escapeTelnetOutput(bytes(1, 255, 2, 255, 255))]).toEqual([1, 255, 255, 2, 255, 255, 255, 255]);
    const plain = Buffer.from('plain');
    expect(escapeTelnetOutput(plain)).toBe(plain);
  });
});
