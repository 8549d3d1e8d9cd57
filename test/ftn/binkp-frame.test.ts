import { describe, expect, it } from 'vitest';
import {
  BINKP_MAX_FRAME_BYTES,
  BinkpCommand,
  BinkpFrameDecoder,
  encodeCommandFrame,
  encodeDataHeader,
  escapeBinkpName,
  formatBinkpFileOffer,
  formatBinkpTime,
  parseBinkpFileId,
  parseBinkpFileOffer,
  parseBinkpNul,
  resolveBinkpLimits,
  storedNameFor,
  unescapeBinkpName,
} from '../../src/ftn/binkp-frame.js';
import { FtnFormatError } from '../../src/ftn/ftn-format-error.js';

describe('binkp frames', () => {
  it('writes a command as a 2-byte header with the top bit set, the command byte and the argument', () => {
    expect(encodeCommandFrame(BinkpCommand.M_OK)).toEqual(Buffer.from([0x80, 0x01, 0x04]));
    expect(encodeCommandFrame(BinkpCommand.M_ADR, '2:5047/13@fidonet')).toEqual(
      Buffer.concat([Buffer.from([0x80, 0x12, 0x01]), Buffer.from('2:5047/13@fidonet')]),
    );
  });

  it('writes a data header without the top bit, and refuses an empty or oversized data frame', () => {
    expect(encodeDataHeader(32767)).toEqual(Buffer.from([0x7f, 0xff]));
    expect(() => encodeDataHeader(0)).toThrow(FtnFormatError);
    expect(() => encodeDataHeader(32768)).toThrow(FtnFormatError);
  });

  it('reads frames split across chunks anywhere, and several in one chunk', () => {
    const wire = Buffer.concat([
      encodeCommandFrame(BinkpCommand.M_NUL, 'SYS baud'),
      encodeDataHeader(3),
      Buffer.from('abc'),
      encodeCommandFrame(BinkpCommand.M_EOB),
    ]);
    for (let cut = 0; cut <= wire.length; cut += 1) {
      const decoder = new BinkpFrameDecoder();
      const frames = [...decoder.push(wire.subarray(0, cut)), ...decoder.push(wire.subarray(cut))];
      expect(frames).toEqual([
        { kind: 'command', command: BinkpCommand.M_NUL, argument: 'SYS baud' },
        { kind: 'data', data: Buffer.from('abc') },
        { kind: 'command', command: BinkpCommand.M_EOB, argument: '' },
      ]);
      expect(decoder.bufferedBytes).toBe(0);
    }
  });

  it('drops a trailing NUL of an argument (FTS-1026 allows one) and keeps every other byte as it came', () => {
    const decoder = new BinkpFrameDecoder();
    const frame = Buffer.concat([Buffer.from([0x80, 0x06, BinkpCommand.M_PWD]), Buffer.from('p\xe4ss\0', 'latin1')]);
    expect(decoder.push(frame)).toEqual([{ kind: 'command', command: BinkpCommand.M_PWD, argument: 'p\xe4ss' }]);
  });

  it('refuses a frame over its limit from the header alone, keeping the frames before it and reading no more', () => {
    const decoder = new BinkpFrameDecoder(1024);
    const frames = decoder.push(
      Buffer.concat([
        encodeCommandFrame(BinkpCommand.M_EOB),
        Buffer.from([0x04, 0x01]),
        encodeCommandFrame(BinkpCommand.M_OK),
      ]),
    );
    expect(frames).toEqual([{ kind: 'command', command: BinkpCommand.M_EOB, argument: '' }]);
    expect(decoder.error?.message).toBe('a frame of 1025 bytes is over the limit of 1024');
    expect(decoder.push(encodeCommandFrame(BinkpCommand.M_OK))).toEqual([]);
    const unlimited = new BinkpFrameDecoder();
    unlimited.push(Buffer.from([0xff, 0xff]));
    expect(unlimited.error).toBeNull();
    expect(unlimited.bufferedBytes).toBe(2);
  });

  it('refuses a command frame with no command byte', () => {
    const decoder = new BinkpFrameDecoder();
    decoder.push(Buffer.from([0x80, 0x00]));
    expect(decoder.error).toBeInstanceOf(FtnFormatError);
    expect(decoder.error?.message).toBe('a command frame with no command byte');
  });

  it('takes empty data frames as nothing', () => {
    expect(new BinkpFrameDecoder().push(Buffer.from([0x00, 0x00]))).toEqual([]);
  });

  it('keeps the frame limit within binkp and the other limits positive', () => {
    expect(resolveBinkpLimits({ idleTimeoutSeconds: 0.5 }).idleTimeoutSeconds).toBe(0.5);
    expect(() => resolveBinkpLimits({ maxFrameBytes: BINKP_MAX_FRAME_BYTES + 1 })).toThrow(RangeError);
    expect(() => resolveBinkpLimits({ maxFileBytes: 0 })).toThrow(RangeError);
  });
});

describe('binkp file commands', () => {
  it('reads M_FILE with an offset, -1 asking the receiver where to start', () => {
    expect(parseBinkpFileOffer('config.sys 125 2476327846 0', true)).toEqual({
      netName: 'config.sys',
      size: 125,
      unixTime: 2476327846,
      offset: 0,
    });
    expect(parseBinkpFileOffer('a.pkt 125 100 -1', true).offset).toBe(-1);
    expect(() => parseBinkpFileOffer('a.pkt 125 100 -1', false)).toThrow(FtnFormatError);
  });

  it('ignores words past the ones it needs (binkd extensions) and refuses what is not a number', () => {
    expect(parseBinkpFileId('a.pkt 5 7 GZ').size).toBe(5);
    expect(() => parseBinkpFileId('a.pkt 5')).toThrow('is not "name size time"');
    expect(() => parseBinkpFileId('a.pkt -5 7')).toThrow('size "-5"');
    expect(() => parseBinkpFileId('a.pkt 05 7')).toThrow('size "05"');
    expect(() => parseBinkpFileId('a.pkt 99999999999999999 7')).toThrow('size');
    expect(() => parseBinkpFileOffer('a.pkt 5 7 6', true)).toThrow('offset 6 is past the end of 5 bytes');
  });

  it('writes what it reads', () => {
    const offer = { netName: 'x\\x20y.pkt', size: 10, unixTime: 20, offset: -1 };
    expect(parseBinkpFileOffer(formatBinkpFileOffer(offer), true)).toEqual(offer);
  });

  it('escapes spaces, control characters, backslashes and non-ASCII as binkd does, and reads them back', () => {
    expect(escapeBinkpName('my file\\1.zip')).toBe('my\\x20file\\x5c1.zip');
    expect(escapeBinkpName('é')).toBe('\\xc3\\xa9');
    expect(unescapeBinkpName('my\\x20file\\5c1.zip').toString('latin1')).toBe('my file\\1.zip');
    expect(unescapeBinkpName(escapeBinkpName('tab\there')).toString()).toBe('tab\there');
  });
});

describe('the names received files are stored under', () => {
  it.each([
    ['0000abcd.su0', '0000abcd.su0'],
    ['../../etc/passwd', '_._.._etc_passwd'],
    ['..\\x2f..\\x2fetc\\x2fpasswd', '_._.._etc_passwd'],
    ['..', '_.'],
    ['.hidden', '_hidden'],
    ['a\\x00b\\x0ac', 'a_b_c'],
    ['C:\\x5cwindows\\x5cwin.ini', 'C__windows_win.ini'],
    ['', '_'],
  ])('keeps %j as %j: a plain name that stays in its directory', (netName, stored) => {
    expect(storedNameFor(netName)).toBe(stored);
  });

  it('cuts a long name to 100 characters, keeping its extension', () => {
    const stored = storedNameFor(`${'a'.repeat(300)}.pkt`);
    expect(stored).toHaveLength(100);
    expect(stored.endsWith('a.pkt')).toBe(true);
  });
});

describe('binkp M_NUL', () => {
  it('reads options and the binkp version the remote speaks', () => {
    expect(parseBinkpNul('OPT NDA EXTCMD NR')).toEqual({ options: ['NDA', 'EXTCMD', 'NR'], protocolVersion: null });
    expect(parseBinkpNul('VER binkd/1.1a-115/Linux binkp/1.1')).toEqual({ options: [], protocolVersion: 101 });
    expect(parseBinkpNul('SYS binkp/9.9 BBS')).toEqual({ options: [], protocolVersion: null });
  });

  it('writes TIME as an RFC 822 date in UTC', () => {
    expect(formatBinkpTime(new Date('2026-11-27T10:00:05Z'))).toBe('Fri, 27 Nov 2026 10:00:05 +0000');
  });
});
