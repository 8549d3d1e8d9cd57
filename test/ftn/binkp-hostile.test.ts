import { readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BinkpCommand, BinkpFrameDecoder, encodeCommandFrame, encodeDataHeader } from '../../src/ftn/binkp-frame.js';
import { cramMd5Response, parseCramOption } from '../../src/ftn/cram-md5.js';
import { callHub, PASSWORD, startHubServer } from './support/baud-binkp-server.js';
import { connectRawPeer, filesIn, type RawBinkpPeer, readIn, tempSpool } from './support/binkp-fixtures.js';

/**
 * What a hostile or broken peer can do to a session: every case ends the session cleanly with
 * an error (an M_ERR to the peer where it is still there), nothing half-received in the inbound,
 * nothing written outside the spool.
 */

const LIMITS = { maxFrameBytes: 1024, handshakeTimeoutSeconds: 1, idleTimeoutSeconds: 1 };

const cleanUps: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
});

async function hub() {
  const spool = tempSpool('hub');
  cleanUps.push(() => spool.remove());
  const started = await startHubServer(spool, { limits: LIMITS });
  cleanUps.push(() => started.server.close());
  return { spool, ...started };
}

async function peerOf(port: number): Promise<RawBinkpPeer> {
  const peer = await connectRawPeer(port);
  cleanUps.push(() => void peer.socket.destroy());
  return peer;
}

/** A raw peer logged in as the node 21:1/999 with the plain password. */
async function loggedInPeer(port: number): Promise<RawBinkpPeer> {
  const peer = await peerOf(port);
  peer.sendFrame(BinkpCommand.M_ADR, '21:1/999@fsxnet');
  peer.sendFrame(BinkpCommand.M_PWD, PASSWORD);
  await peer.waitForCommand(BinkpCommand.M_OK);
  return peer;
}

/** The M_ERR the peer heard, once the server hung up. */
async function lastWords(peer: RawBinkpPeer): Promise<string> {
  await peer.closed;
  return peer.waitForCommand(BinkpCommand.M_ERR);
}

describe('a hostile caller', () => {
  it('is cut off at a frame claiming more than the limit, before its bytes are waited for', async () => {
    const { server, sessions } = await hub();
    const peer = await peerOf(server.port);
    peer.socket.write(Buffer.from([0x04, 0x01]));
    expect(await lastWords(peer)).toBe('bad frame from the link: a frame of 1025 bytes is over the limit of 1024');
    expect(sessions).toEqual([]);
  });

  it('is cut off at an over-limit frame in the middle of a file, and the link status says why', async () => {
    const { server, sessions, spool } = await hub();
    const peer = await loggedInPeer(server.port);
    peer.sendFrame(BinkpCommand.M_FILE, 'big.pkt 5000 0 0');
    peer.sendData(Buffer.alloc(1000));
    peer.socket.write(Buffer.from([0x7f, 0xff]));
    expect(await lastWords(peer)).toBe('bad frame from the link: a frame of 32767 bytes is over the limit of 1024');
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({
      ok: false,
      error: 'bad frame from the link: a frame of 32767 bytes is over the limit of 1024',
      received: [],
    });
    expect(filesIn(spool.inbound)).toEqual([]);
    expect(readIn(spool.partial, '21.1.999.0.5000.0.big.pkt')).toEqual(Buffer.alloc(1000));
  });

  it('is cut off when it talks HTTP at the binkp port', async () => {
    const { server } = await hub();
    const peer = await peerOf(server.port);
    peer.socket.write('GET / HTTP/1.1\r\nHost: bbs.example\r\n\r\n');
    expect(await lastWords(peer)).toBe('bad frame from the link: a frame of 18245 bytes is over the limit of 1024');
  });

  it('is cut off when it sends file data before the handshake, or before its password', async () => {
    const { server } = await hub();
    const early = await peerOf(server.port);
    early.sendData(Buffer.from('abc'));
    expect(await lastWords(early)).toBe('file data before the handshake');

    const noPassword = await peerOf(server.port);
    noPassword.sendFrame(BinkpCommand.M_ADR, '21:1/999@fsxnet');
    noPassword.sendData(Buffer.from('abc'));
    expect(await lastWords(noPassword)).toBe('file data before the password');
  });

  it('is cut off when it never finishes the handshake, however busy it keeps the line', async () => {
    const { server } = await hub();
    const silent = await peerOf(server.port);
    expect(await lastWords(silent)).toBe('the handshake took longer than 1 s');

    const chatty = await peerOf(server.port);
    const chatter = setInterval(() => chatty.sendFrame(BinkpCommand.M_NUL, 'LOC still here'), 50);
    cleanUps.push(() => clearInterval(chatter));
    expect(await lastWords(chatty)).toBe('the handshake took longer than 1 s');
  });

  it('is cut off when it trickles a frame too slowly to finish it, and the part waits in partial/', async () => {
    const { server, sessions, spool } = await hub();
    const peer = await loggedInPeer(server.port);
    peer.sendFrame(BinkpCommand.M_FILE, 'slow.pkt 100 0 0');
    peer.socket.write(Buffer.from([0x00, 0x64]));
    // A byte every 50 ms keeps bytes coming but never a whole frame.
    const trickle = setInterval(() => peer.socket.write(Buffer.from('x')), 50);
    cleanUps.push(() => clearInterval(trickle));
    expect(await lastWords(peer)).toBe('nothing moved for 1 s (a frame begun and not finished)');
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]?.error).toBe('nothing moved for 1 s (a frame begun and not finished)');
    expect(filesIn(spool.inbound)).toEqual([]);
  });

  it('hears "Bad password" for a wrong plain password or a wrong CRAM-MD5 answer', async () => {
    const { server, sessions } = await hub();
    const plain = await peerOf(server.port);
    plain.sendFrame(BinkpCommand.M_ADR, '21:1/999@fsxnet');
    plain.sendFrame(BinkpCommand.M_PWD, 'guess');
    expect(await lastWords(plain)).toBe('Bad password');

    const cram = await peerOf(server.port);
    const offer = await cram.waitForCommand(BinkpCommand.M_NUL);
    const challenge = parseCramOption(offer.replace(/^OPT /, ''));
    expect(challenge).toHaveLength(16);
    cram.sendFrame(BinkpCommand.M_ADR, '21:1/999@fsxnet');
    cram.sendFrame(BinkpCommand.M_PWD, cramMd5Response('guess', challenge ?? Buffer.alloc(0)));
    expect(await lastWords(cram)).toBe('Bad password');

    const none = await peerOf(server.port);
    none.sendFrame(BinkpCommand.M_ADR, '21:1/999@fsxnet');
    none.sendFrame(BinkpCommand.M_PWD, '-');
    expect(await lastWords(none)).toBe('Bad password');

    await expect.poll(() => sessions.length).toBe(3);
    expect(sessions.map((session) => session.error)).toEqual(Array(3).fill('wrong password from 21:1/999@fsxnet'));
  });

  it('is cut off when it sends more data than the file it announced', async () => {
    const { server, spool } = await hub();
    const peer = await loggedInPeer(server.port);
    peer.sendFrame(BinkpCommand.M_FILE, 'a.pkt 10 0 0');
    peer.sendData(Buffer.alloc(20));
    expect(await lastWords(peer)).toBe('more data than the 10 bytes "a.pkt" was said to have');
    expect(filesIn(spool.inbound)).toEqual([]);
  });

  it('is cut off when it offers a file from past its end, or says nonsense in M_FILE', async () => {
    const { server } = await hub();
    const past = await loggedInPeer(server.port);
    past.sendFrame(BinkpCommand.M_FILE, 'a.pkt 10 0 20');
    expect(await lastWords(past)).toBe(
      'bad command from the link: offset 20 is past the end of 10 bytes in "a.pkt 10 0 20"',
    );
    const nonsense = await loggedInPeer(server.port);
    nonsense.sendFrame(BinkpCommand.M_FILE, 'a.pkt lots 0 0');
    expect(await lastWords(nonsense)).toBe(
      'bad command from the link: size "lots" in "a.pkt lots 0 0" is not a number',
    );
  });

  it('is cut off when it ends its batch in the middle of a file; the part stays in partial/', async () => {
    const { server, spool } = await hub();
    const peer = await loggedInPeer(server.port);
    peer.sendFrame(BinkpCommand.M_FILE, 'half.pkt 100 0 0');
    peer.sendData(Buffer.alloc(40, 1));
    peer.sendFrame(BinkpCommand.M_EOB);
    expect(await lastWords(peer)).toBe('the link ended its files (M_EOB) in the middle of "half.pkt"');
    expect(filesIn(spool.inbound)).toEqual([]);
    expect(readIn(spool.partial, '21.1.999.0.100.0.half.pkt')).toEqual(Buffer.alloc(40, 1));
  });

  it('cannot write outside the inbound with the names it gives its files', async () => {
    const { server, spool, sessions } = await hub();
    const peer = await loggedInPeer(server.port);
    const names = ['..\\x2f..\\x2fevil.pkt', '\\x2fetc\\x2fpasswd', '..', 'nul\\x00byte', `${'x'.repeat(300)}.pkt`];
    for (const name of names) {
      peer.sendFrame(BinkpCommand.M_FILE, `${name} 3 0 0`);
      peer.sendData(Buffer.from('pwn'));
      await peer.waitForCommand(BinkpCommand.M_GOT);
      peer.frames.splice(0);
    }
    peer.sendFrame(BinkpCommand.M_EOB);
    await peer.closed;
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]?.ok).toBe(true);
    expect(filesIn(spool.inbound)).toEqual(
      ['_._.._evil.pkt', '_etc_passwd', '_.', 'nul_byte', `${'x'.repeat(96)}.pkt`].sort(),
    );
    // Nothing landed beside the spool's own directories.
    expect(readdirSync(spool.root).sort()).toEqual(['bad', 'inbound', 'outbound', 'partial']);
    expect(readdirSync(path.dirname(spool.root))).toEqual(['fsxnet']);
  });

  it('is one of a crowd past maxSessions: it hears M_BSY at once', async () => {
    const spool = tempSpool('hub');
    cleanUps.push(() => spool.remove());
    const { server } = await startHubServer(spool, { limits: LIMITS, maxSessions: 1 });
    cleanUps.push(() => server.close());
    const first = await peerOf(server.port);
    await first.waitForCommand(BinkpCommand.M_ADR);
    const second = await peerOf(server.port);
    await second.closed;
    expect(await second.waitForCommand(BinkpCommand.M_BSY)).toBe('Too many sessions, call again later');
  });

  it('is ignored when it confirms or asks again for files never sent to it', async () => {
    const { server, sessions } = await hub();
    const peer = await loggedInPeer(server.port);
    peer.sendFrame(BinkpCommand.M_GOT, 'never.pkt 1 0');
    peer.sendFrame(BinkpCommand.M_GET, 'never.pkt 1 0 0');
    peer.sendFrame(BinkpCommand.M_SKIP, 'never.pkt 1 0');
    peer.sendFrame(42, 'a command of binkp/9');
    peer.sendFrame(BinkpCommand.M_EOB);
    await peer.waitForCommand(BinkpCommand.M_EOB);
    await peer.closed;
    await expect.poll(() => sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({ ok: true, sent: [], received: [] });
  });
});

describe('a hostile hub answering our call', () => {
  /** A fake hub: greets as 21:1/100, takes any password, then runs `script` with the frames it gets. */
  async function fakeHub(script: (socket: net.Socket) => void) {
    const server = net.createServer((socket) => {
      socket.on('error', () => {});
      const decoder = new BinkpFrameDecoder();
      socket.write(encodeCommandFrame(BinkpCommand.M_ADR, '21:1/100@fsxnet'));
      socket.on('data', (chunk: Buffer) => {
        for (const frame of decoder.push(chunk)) {
          if (frame.kind === 'command' && frame.command === BinkpCommand.M_PWD) {
            socket.write(encodeCommandFrame(BinkpCommand.M_OK, 'secure'));
            script(socket);
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanUps.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  function nodeSpool() {
    const spool = tempSpool('node');
    cleanUps.push(() => spool.remove());
    return spool;
  }

  it('cannot place a file outside our inbound with a hostile name', async () => {
    const port = await fakeHub((socket) => {
      socket.write(encodeCommandFrame(BinkpCommand.M_FILE, '..\\x2f..\\x2f..\\x2ftmp\\x2fevil 3 0 0'));
      socket.write(Buffer.concat([encodeDataHeader(3), Buffer.from('pwn')]));
      socket.write(encodeCommandFrame(BinkpCommand.M_EOB));
    });
    const spool = nodeSpool();
    const report = await callHub(spool, port);
    expect(report).toMatchObject({ ok: true, received: [{ name: '_._.._.._tmp_evil', size: 3, resumedFrom: 0 }] });
    expect(filesIn(spool.inbound)).toEqual(['_._.._.._tmp_evil']);
  });

  it('ends our session with an error when it sends an over-limit frame, keeping no half file', async () => {
    const port = await fakeHub((socket) => {
      socket.write(encodeCommandFrame(BinkpCommand.M_FILE, 'a.pkt 3000 0 0'));
      socket.write(Buffer.concat([encodeDataHeader(2000), Buffer.alloc(2000)]));
    });
    const spool = nodeSpool();
    const report = await callHub(spool, port, { limits: { maxFrameBytes: 1024 } });
    expect(report).toMatchObject({
      ok: false,
      error: 'bad frame from the link: a frame of 2000 bytes is over the limit of 1024',
      received: [],
    });
    expect(filesIn(spool.inbound)).toEqual([]);
  });

  it('ends our session when it goes quiet, after the idle timeout', async () => {
    const port = await fakeHub(() => {});
    const report = await callHub(nodeSpool(), port, { limits: { idleTimeoutSeconds: 0.3 } });
    expect(report).toMatchObject({ ok: false, error: 'nothing moved for 0.3 s' });
  });
});
