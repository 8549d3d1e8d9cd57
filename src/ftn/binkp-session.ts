import { constants as fsConstants } from 'node:fs';
import { type FileHandle, link, open, readdir, rename, stat, truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { BAUD_VERSION } from '../version.js';
import {
  BinkpCommand,
  type BinkpFileId,
  type BinkpFileOffer,
  type BinkpFrame,
  BinkpFrameDecoder,
  type BinkpLimits,
  binkpCommandName,
  encodeCommandFrame,
  encodeDataHeader,
  escapeBinkpName,
  formatBinkpFileId,
  formatBinkpFileOffer,
  formatBinkpTime,
  isSameBinkpFile,
  parseBinkpFileId,
  parseBinkpFileOffer,
  parseBinkpNul,
  storedNameFor,
} from './binkp-frame.js';
import { isBundleName } from './bundle.js';
import {
  cramMd5Response,
  createCramChallenge,
  formatCramOption,
  isCramMd5ResponseValid,
  isSameSecret,
  parseCramOption,
} from './cram-md5.js';
import { type FtnAddress, formatFtnAddress, isSameFtnAddress, parseFtnAddress } from './ftn-address.js';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';
import type { NetworkSpool } from './ftn-spool.js';

/** How one binkp session went: what moved, and why it stopped if it did not end well. */
export interface BinkpSessionReport {
  readonly ok: boolean;
  /** Why the session failed, for the log and the link's status; absent when `ok`. */
  readonly error?: string;
  /** The addresses the remote presented (M_ADR); empty when it never did. */
  readonly remoteAddresses: readonly FtnAddress[];
  /** Files the remote confirmed (M_GOT), each deleted from the outbound then. */
  readonly sent: readonly { readonly name: string; readonly size: number }[];
  /** Files received whole and now in the inbound, under the name they have there. */
  readonly received: readonly { readonly name: string; readonly size: number; readonly resumedFrom: number }[];
  /** Files either side refused with M_SKIP: they stay where they were, for a later session. */
  readonly skipped: readonly {
    readonly direction: BinkpDirection;
    readonly name: string;
    readonly size: number;
    readonly reason: string;
  }[];
  /** File data received and sent, in bytes (data frames; what was sent twice counts twice). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly startedAt: Date;
  readonly seconds: number;
}

export type BinkpDirection = 'in' | 'out';

/** A file moving, for a progress bar: `bytes` is where in the file the transfer stands. */
export type BinkpProgress =
  | {
      readonly type: 'file-started';
      readonly direction: BinkpDirection;
      readonly name: string;
      readonly size: number;
      readonly offset: number;
    }
  | {
      readonly type: 'file-progress';
      readonly direction: BinkpDirection;
      readonly name: string;
      readonly size: number;
      readonly bytes: number;
    }
  | { readonly type: 'file-done'; readonly direction: BinkpDirection; readonly name: string; readonly size: number }
  | {
      readonly type: 'file-skipped';
      readonly direction: BinkpDirection;
      readonly name: string;
      readonly size: number;
      readonly reason: string;
    };

/** What a session says about this system in its M_NULs. */
export interface BinkpSystemInfo {
  readonly name: string;
  readonly sysop: string;
  readonly location: string;
}

/** The link a session runs for: whom it must be, the password both know, where its files are. */
export interface BinkpLinkSecrets {
  readonly address: FtnAddress;
  readonly password: string;
  readonly spool: NetworkSpool;
}

export interface BinkpSessionOptions {
  /** `originate`: we called (we send the password); `answer`: they called (we check it). */
  readonly role: 'originate' | 'answer';
  readonly ourAddresses: readonly FtnAddress[];
  readonly limits: BinkpLimits;
  readonly system?: BinkpSystemInfo;
  readonly onProgress?: (event: BinkpProgress) => void;
}

/**
 * Why a session stopped. `remoteText` is what the remote is told in a last M_ERR; false when
 * telling it is pointless (it ended the session, or the connection is gone).
 */
class BinkpSessionError extends Error {
  readonly remoteText: string | false;

  constructor(message: string, options: { remoteText?: string | false } = {}) {
    super(message);
    this.remoteText = options.remoteText ?? message;
  }
}

/** Reads what the remote sent with `read`: a format error there is the remote's, and ends the session saying so. */
function fromLink<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof FtnFormatError) throw new BinkpSessionError(`bad command from the link: ${error.message}`);
    throw error;
  }
}

function asSessionError(error: unknown): BinkpSessionError {
  if (error instanceof BinkpSessionError) return error;
  // A local failure (a full disk, a vanished file): the remote hears only that the session ends.
  return new BinkpSessionError(`local error: ${(error as Error)?.message ?? String(error)}`, {
    remoteText: 'Local error',
  });
}

/** Queued frames past which the socket is paused: the session works through them first (disk writes). */
const QUEUED_FRAMES_HIGH_WATER = 16;
/** Bytes per data frame sent: binkp's maximum, the fewest frames (binkd takes any size up to it). */
const SEND_BLOCK_BYTES = 32767;
/** How long an ending session waits for the remote to take its last frame and close before dropping the socket. */
const CLOSE_GRACE_MS = 2000;

/**
 * The socket end of a session: frames in (decoded, queued, the socket paused while the queue is
 * long), frames out (waiting for the socket to drain), and the deadlines. Once it fails, every
 * waiting and later call rejects with the reason, and the socket is ended.
 */
class FrameChannel {
  private readonly decoder: BinkpFrameDecoder;
  private readonly queue: BinkpFrame[] = [];
  private failure: BinkpSessionError | null = null;
  private waiter: { resolve: (frame: BinkpFrame | null) => void; reject: (error: Error) => void } | null = null;
  private isWoken = false;
  /** The remote closed or broke the framing: frames it sent before are still delivered, then this is the failure. */
  private endOfFrames: BinkpSessionError | null = null;
  private lastActivityAt = Date.now();
  private handshakeDeadline: number | null;
  private readonly sessionDeadline: number;
  private timer: NodeJS.Timeout | null = null;
  private readonly failureListeners = new Set<() => void>();
  private readonly whenClosed: Promise<void>;

  constructor(
    private readonly socket: Duplex,
    private readonly limits: BinkpLimits,
  ) {
    this.decoder = new BinkpFrameDecoder(limits.maxFrameBytes);
    const now = Date.now();
    this.handshakeDeadline = now + limits.handshakeTimeoutSeconds * 1000;
    this.sessionDeadline = now + limits.sessionTimeoutSeconds * 1000;
    this.whenClosed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => this.take(chunk));
    socket.on('end', () => this.gone('the link closed the connection'));
    socket.on('close', () => this.gone('the connection was closed'));
    socket.on('error', (error: Error) =>
      this.fail(new BinkpSessionError(`connection error: ${error.message}`, { remoteText: false })),
    );
    this.arm();
  }

  get failed(): BinkpSessionError | null {
    return this.failure;
  }

  /** Calls `listener` once when the channel fails (at once if it has); the function returned forgets it. */
  onFailure(listener: () => void): () => void {
    if (this.failure) {
      listener();
      return () => {};
    }
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /** The handshake is over: its timeout no longer applies. */
  endHandshake(): void {
    this.handshakeDeadline = null;
  }

  private take(chunk: Buffer): void {
    if (this.failure || this.endOfFrames) return;
    const frames = this.decoder.push(chunk);
    if (frames.length > 0) {
      this.lastActivityAt = Date.now();
      this.queue.push(...frames);
      if (this.queue.length >= QUEUED_FRAMES_HIGH_WATER) this.socket.pause();
    }
    const broken = this.decoder.error;
    if (broken) this.endFrames(new BinkpSessionError(`bad frame from the link: ${broken.message}`));
    else this.deliver();
  }

  private gone(reason: string): void {
    this.endFrames(new BinkpSessionError(reason, { remoteText: false }));
  }

  /** No frame comes after those queued: once they are taken, the channel fails with `error`. */
  private endFrames(error: BinkpSessionError): void {
    this.endOfFrames ??= error;
    if (this.queue.length === 0) this.fail(this.endOfFrames);
    else this.deliver();
  }

  private deliver(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    const frame = this.failure ? undefined : this.queue.shift();
    if (!frame && !this.failure && this.endOfFrames !== null) {
      this.fail(this.endOfFrames);
      return;
    }
    if (frame) {
      this.waiter = null;
      if (this.queue.length < QUEUED_FRAMES_HIGH_WATER / 2) this.socket.resume();
      waiter.resolve(frame);
    } else if (this.failure) {
      this.waiter = null;
      waiter.reject(this.failure);
    } else if (this.isWoken) {
      this.waiter = null;
      this.isWoken = false;
      waiter.resolve(null);
    }
  }

  /**
   * The next frame; null when `wake` was called meanwhile (the caller looks at its state again).
   * Frames that arrived before the remote closed its side are delivered before the failure.
   */
  next(): Promise<BinkpFrame | null> {
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.deliver();
    });
  }

  /** Makes a pending or the next `next` return null. */
  wake(): void {
    this.isWoken = true;
    this.deliver();
  }

  async send(...buffers: Buffer[]): Promise<void> {
    if (this.failure) throw this.failure;
    let isFull = false;
    for (const buffer of buffers) {
      isFull = !this.socket.write(buffer, (error) => {
        if (!error) this.lastActivityAt = Date.now();
      });
    }
    if (!isFull) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        this.socket.off('drain', done);
        forget();
        if (this.failure) reject(this.failure);
        else resolve();
      };
      this.socket.on('drain', done);
      const forget = this.onFailure(done);
    });
  }

  sendCommand(command: BinkpCommand, argument?: string | Buffer): Promise<void> {
    return this.send(encodeCommandFrame(command, argument));
  }

  /**
   * Ends the channel with `error` (the first reason is the one kept): tells the remote in an
   * M_ERR when there is something to tell and the socket takes it, and ends the connection.
   */
  fail(error: BinkpSessionError): void {
    if (this.failure) return;
    const isRemoteEnded = this.socket.readableEnded;
    this.failure = error;
    this.disarm();
    for (const listener of [...this.failureListeners]) listener();
    this.failureListeners.clear();
    this.deliver();
    if (error.remoteText !== false && !isRemoteEnded && this.socket.writable) {
      this.endWith(encodeCommandFrame(BinkpCommand.M_ERR, error.remoteText));
    } else {
      this.socket.destroy();
    }
  }

  /** Ends the connection, after a last frame if given (M_BSY, M_ERR), and waits until it is closed. */
  async close(lastFrame?: Buffer): Promise<void> {
    this.disarm();
    if (!this.socket.destroyed) this.endWith(lastFrame);
    await this.whenClosed;
  }

  /** Resolves once the socket is closed. */
  closed(): Promise<void> {
    return this.whenClosed;
  }

  /**
   * Half-closes (after `lastFrame`), gives the remote a moment to read and close its side, then
   * drops the socket. Reading goes on meanwhile so the remote's close is seen.
   */
  private endWith(lastFrame?: Buffer): void {
    const timer = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
    timer.unref();
    this.socket.once('close', () => clearTimeout(timer));
    this.socket.resume();
    if (lastFrame) this.socket.end(lastFrame);
    else this.socket.end();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One timer for the nearest deadline; activity moves the idle deadline without re-arming (checked when it fires). */
  private arm(): void {
    const idleDeadline = this.lastActivityAt + this.limits.idleTimeoutSeconds * 1000;
    const nearest = Math.min(this.sessionDeadline, idleDeadline, this.handshakeDeadline ?? Number.POSITIVE_INFINITY);
    this.timer = setTimeout(() => this.check(), Math.max(0, nearest - Date.now()) + 5);
  }

  private check(): void {
    this.timer = null;
    if (this.failure) return;
    const now = Date.now();
    if (now >= this.sessionDeadline) {
      this.fail(new BinkpSessionError(`the session took longer than ${this.limits.sessionTimeoutSeconds} s`));
    } else if (this.handshakeDeadline !== null && now >= this.handshakeDeadline) {
      this.fail(new BinkpSessionError(`the handshake took longer than ${this.limits.handshakeTimeoutSeconds} s`));
    } else if (now >= this.lastActivityAt + this.limits.idleTimeoutSeconds * 1000) {
      const started = this.decoder.bufferedBytes > 0 ? ' (a frame begun and not finished)' : '';
      this.fail(new BinkpSessionError(`nothing moved for ${this.limits.idleTimeoutSeconds} s${started}`));
    } else {
      this.arm();
    }
  }
}

/** A file of ours offered to the remote, until it confirms (M_GOT) or refuses (M_SKIP) it. */
interface Outgoing {
  readonly id: BinkpFileId;
  readonly name: string;
  readonly path: string;
  /** Where the remote asked us to (re)start (M_GET, or 0 without NR mode); null: nothing to send now. */
  restartAt: number | null;
  /** The remote answered for this file (M_GOT or M_SKIP): stop sending it. */
  isSettled: boolean;
  /** NR mode: an M_GET, M_GOT or M_SKIP came for the offer. */
  isAnswered: boolean;
}

/** The file being received. */
interface Incoming {
  readonly id: BinkpFileId;
  readonly storedName: string;
  readonly partialPath: string;
  readonly handle: FileHandle;
  position: number;
  readonly resumedFrom: number;
}

/**
 * One binkp session over a connected stream, either role (FTS-1026 binkp/1.0, with CRAM-MD5
 * passwords, FTS-1027, and non-reliable mode, FTS-1028):
 *
 * 1. `greet()` sends our M_NULs and M_ADR and reads the remote's, up to its M_ADR: who it says it is.
 * 2. The owner decides: `transfer(link)` with the link's password and spool, or `refuse(…)`.
 * 3. `transfer` checks the password (M_PWD, M_OK / M_ERR), then moves files both ways at once
 *    and ends when both sides said M_EOB and every file is confirmed.
 *
 * Received files are written to `spool.partial` and moved into `spool.inbound` only when whole;
 * a session that stops leaves the partial file, and the next one asks the sender to go on from
 * its size. Outbound files are deleted only after the remote's M_GOT.
 */
export class BinkpSession {
  private readonly channel: FrameChannel;
  private readonly startedAt = new Date();
  private readonly limits: BinkpLimits;
  private remoteAddresses: readonly FtnAddress[] = [];
  /** Answering: the challenge we offered; originating: the one the remote offered. */
  private cramChallenge: Buffer | null = null;
  /** The remote asked for NR mode or speaks binkp/1.1+: we offer files with offset -1. */
  private isRemoteNrCapable = false;
  private readonly sent: { name: string; size: number }[] = [];
  private readonly received: { name: string; size: number; resumedFrom: number }[] = [];
  private readonly skipped: { direction: BinkpDirection; name: string; size: number; reason: string }[] = [];
  private bytesIn = 0;
  private bytesOut = 0;
  private isFinished = false;

  // Transfer state.
  private readonly offered = new Map<string, Outgoing>();
  private senderWaiters: (() => void)[] = [];
  private incoming: Incoming | null = null;
  /** We sent M_GET for this file at this offset: data is dropped until its M_FILE comes. */
  private awaitingResend: BinkpFileOffer | null = null;
  /** Files (by id) taken into partial/ this session, against `maxFilesPerSession`. */
  private readonly filesTaken = new Set<string>();
  private isLocalEobSent = false;
  private isRemoteEobReceived = false;

  constructor(
    socket: Duplex,
    private readonly options: BinkpSessionOptions,
  ) {
    this.limits = options.limits;
    this.channel = new FrameChannel(socket, options.limits);
  }

  /**
   * Sends our greeting and reads the remote's up to its M_ADR; resolves to the addresses it
   * presented. Rejects when the session fails first (its report comes from `fail`).
   */
  async greet(): Promise<readonly FtnAddress[]> {
    const channel = this.channel;
    if (this.options.role === 'answer') {
      // FTS-1027: the challenge is the answering side's very first M_NUL.
      this.cramChallenge = createCramChallenge();
      await channel.sendCommand(BinkpCommand.M_NUL, `OPT ${formatCramOption(this.cramChallenge)}`);
    }
    const system = this.options.system ?? { name: 'baud', sysop: 'Sysop', location: '' };
    const greeting = [
      `SYS ${system.name}`,
      `ZYZ ${system.sysop}`,
      `LOC ${system.location}`,
      'NDL 115200,TCP,BINKP',
      `TIME ${formatBinkpTime(this.startedAt)}`,
      `VER baud/${BAUD_VERSION} binkp/1.0`,
      // Asks the remote to offer each file with offset -1 so we name where to start: a resumed
      // file then costs no bytes sent twice (FTS-1028).
      'OPT NR',
    ];
    for (const text of greeting) await channel.sendCommand(BinkpCommand.M_NUL, text.replace(/[\r\n]/g, ' '));
    await channel.sendCommand(BinkpCommand.M_ADR, this.options.ourAddresses.map(formatFtnAddress).join(' '));
    for (;;) {
      const frame = await this.nextFrame();
      if (frame.kind === 'data') throw new BinkpSessionError('file data before the handshake');
      if (frame.command === BinkpCommand.M_ADR) {
        this.remoteAddresses = readAddressList(frame.argument);
        return this.remoteAddresses;
      }
      this.handshakeCommand(frame.command, frame.argument, 'M_ADR');
    }
  }

  /**
   * Checks the password and moves the files; never rejects: the report says how it went. The
   * connection is closed when it resolves.
   */
  async transfer(link: BinkpLinkSecrets): Promise<BinkpSessionReport> {
    try {
      await this.authenticate(link);
      this.channel.endHandshake();
      await this.exchangeFiles(link);
    } catch (error) {
      return this.fail(error);
    }
    this.isFinished = true;
    await this.channel.close();
    return this.report();
  }

  /** Ends the session before `transfer` with M_ERR (an unknown caller) or M_BSY (the link is busy). */
  async refuse(kind: 'error' | 'busy', reason: string): Promise<BinkpSessionReport> {
    const command = kind === 'busy' ? BinkpCommand.M_BSY : BinkpCommand.M_ERR;
    await this.channel.close(this.channel.failed ? undefined : encodeCommandFrame(command, reason));
    return this.report(reason);
  }

  /** Ends a session that failed (or threw in `greet`), telling the remote why when that helps. */
  async fail(error: unknown): Promise<BinkpSessionReport> {
    this.channel.fail(asSessionError(error));
    await this.closeIncoming();
    await this.channel.closed();
    return this.report(this.channel.failed?.message ?? asSessionError(error).message);
  }

  private report(error?: string): BinkpSessionReport {
    return {
      ok: error === undefined && this.isFinished,
      ...(error === undefined ? {} : { error }),
      remoteAddresses: this.remoteAddresses,
      sent: [...this.sent],
      received: [...this.received],
      skipped: [...this.skipped],
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      startedAt: this.startedAt,
      seconds: (Date.now() - this.startedAt.getTime()) / 1000,
    };
  }

  /** The next frame, whatever wakes the channel meanwhile (only the file exchange cares). */
  private async nextFrame(): Promise<BinkpFrame> {
    for (;;) {
      const frame = await this.channel.next();
      if (frame) return frame;
    }
  }

  /** A command during the handshake that is not the one awaited: M_NULs are read, the rest ends it. */
  private handshakeCommand(command: number, argument: string, awaited: string): void {
    switch (command) {
      case BinkpCommand.M_NUL:
        this.readNul(argument);
        return;
      case BinkpCommand.M_ERR:
        throw new BinkpSessionError(`the link refused the session: ${quoteForError(argument)}`, {
          remoteText: false,
        });
      case BinkpCommand.M_BSY:
        throw new BinkpSessionError(`the link is busy: ${quoteForError(argument)}`, { remoteText: false });
      default:
        throw new BinkpSessionError(`${binkpCommandName(command)} when ${awaited} was due`);
    }
  }

  private readNul(argument: string): void {
    const info = parseBinkpNul(argument);
    if (info.protocolVersion !== null && info.protocolVersion >= 101) this.isRemoteNrCapable = true;
    for (const option of info.options) {
      if (option === 'NR') this.isRemoteNrCapable = true;
      const challenge = this.options.role === 'originate' ? parseCramOption(option) : null;
      if (challenge) this.cramChallenge = challenge;
    }
  }

  private async authenticate(link: BinkpLinkSecrets): Promise<void> {
    if (this.options.role === 'originate') {
      if (!this.remoteAddresses.some((address) => isSameFtnAddress(address, link.address))) {
        const presented = this.remoteAddresses.map(formatFtnAddress).join(' ') || 'nothing';
        throw new BinkpSessionError(`called ${formatFtnAddress(link.address)} but it presented ${presented}`);
      }
      // Without a challenge the password goes in the clear: mailers that predate FTS-1027 offer none.
      const password = this.cramChallenge ? cramMd5Response(link.password, this.cramChallenge) : link.password;
      await this.channel.sendCommand(BinkpCommand.M_PWD, password);
      for (;;) {
        const frame = await this.nextFrame();
        if (frame.kind === 'data') throw new BinkpSessionError('file data before M_OK');
        if (frame.command === BinkpCommand.M_OK) return;
        this.handshakeCommand(frame.command, frame.argument, 'M_OK');
      }
    }
    for (;;) {
      const frame = await this.nextFrame();
      if (frame.kind === 'data') throw new BinkpSessionError('file data before the password');
      if (frame.command === BinkpCommand.M_PWD) {
        if (!this.isPasswordRight(frame.argument, link.password)) {
          throw new BinkpSessionError(`wrong password from ${formatFtnAddress(link.address)}`, {
            remoteText: 'Bad password',
          });
        }
        await this.channel.sendCommand(BinkpCommand.M_OK, 'secure');
        return;
      }
      this.handshakeCommand(frame.command, frame.argument, 'M_PWD');
    }
  }

  /**
   * The answering side takes a CRAM-MD5 answer to its challenge, or the password itself: FTS-1027
   * leaves plain passwords to the answering side, and callers that predate it (or have CRAM
   * turned off) still send them. Every link has a password, so `-` (none) is always wrong.
   */
  private isPasswordRight(given: string, password: string): boolean {
    if (given.toUpperCase().startsWith('CRAM-')) {
      return this.cramChallenge !== null && isCramMd5ResponseValid(given, password, this.cramChallenge);
    }
    return isSameSecret(given, password);
  }

  // --- the file exchange ---------------------------------------------------------------------

  private async exchangeFiles(link: BinkpLinkSecrets): Promise<void> {
    const sender = this.sendOutbound(link).catch((error: unknown) => this.channel.fail(asSessionError(error)));
    this.channel.onFailure(() => this.wakeSender());
    try {
      while (!this.isExchangeDone()) {
        const frame = await this.channel.next();
        if (frame === null) continue;
        if (frame.kind === 'data') await this.takeData(frame.data, link);
        else await this.takeCommand(frame.command, frame.argument, link);
      }
    } catch (error) {
      this.channel.fail(asSessionError(error));
      throw error;
    } finally {
      await sender;
    }
  }

  private isExchangeDone(): boolean {
    return (
      this.isLocalEobSent &&
      this.isRemoteEobReceived &&
      this.offered.size === 0 &&
      this.incoming === null &&
      this.awaitingResend === null
    );
  }

  private async takeCommand(command: number, argument: string, link: BinkpLinkSecrets): Promise<void> {
    switch (command) {
      case BinkpCommand.M_FILE:
        await this.takeFileOffer(
          fromLink(() => parseBinkpFileOffer(argument, true)),
          link,
        );
        return;
      case BinkpCommand.M_GOT:
      case BinkpCommand.M_SKIP: {
        const id = fromLink(() => parseBinkpFileId(argument));
        await this.settleOutgoing(id, command === BinkpCommand.M_GOT ? 'got' : 'skip');
        return;
      }
      case BinkpCommand.M_GET:
        this.restartOutgoing(fromLink(() => parseBinkpFileOffer(argument, false)));
        return;
      case BinkpCommand.M_EOB:
        if (this.incoming) {
          throw new BinkpSessionError(
            `the link ended its files (M_EOB) in the middle of ${quoteForError(this.incoming.id.netName)}`,
          );
        }
        this.isRemoteEobReceived = true;
        return;
      case BinkpCommand.M_ERR:
        throw new BinkpSessionError(`the link ended the session: ${quoteForError(argument)}`, { remoteText: false });
      case BinkpCommand.M_BSY:
        throw new BinkpSessionError(`the link is busy: ${quoteForError(argument)}`, { remoteText: false });
      case BinkpCommand.M_NUL:
        this.readNul(argument);
        return;
      default:
        // A late M_OK or M_ADR, or a command of a later binkp: FTS-1026 has receivers ignore
        // what they do not understand.
        return;
    }
  }

  // --- receiving -----------------------------------------------------------------------------

  private async takeFileOffer(offer: BinkpFileOffer, link: BinkpLinkSecrets): Promise<void> {
    const key = fileKey(offer);
    if (this.incoming) {
      if (isSameBinkpFile(this.incoming.id, offer) && offer.offset === this.incoming.position) return;
      await this.closeIncoming();
    }
    const isAnsweringOurGet = this.awaitingResend !== null && isSameBinkpFile(this.awaitingResend, offer);
    if (!isAnsweringOurGet && !this.filesTaken.has(key)) {
      const refusal =
        offer.size > this.limits.maxFileBytes
          ? `larger than the limit of ${this.limits.maxFileBytes} bytes`
          : this.filesTaken.size >= this.limits.maxFilesPerSession
            ? `more than ${this.limits.maxFilesPerSession} files in one session`
            : null;
      if (refusal) {
        this.awaitingResend = null;
        await this.channel.sendCommand(BinkpCommand.M_SKIP, Buffer.from(formatBinkpFileId(offer), 'latin1'));
        this.noteSkipped('in', storedNameFor(offer.netName), offer.size, refusal);
        return;
      }
    }
    const storedName = storedNameFor(offer.netName);
    const partialPath = path.join(link.spool.partial, partialNameFor(link.address, offer, storedName));
    let have = await this.preparePartial(link, offer, storedName, partialPath);
    if (offer.offset !== have) {
      const isSecondMiss = isAnsweringOurGet && offer.offset !== -1;
      if (!isSecondMiss) {
        // Where we stand, the sender goes on from there (FTS-1026 M_GET; the answer to offset -1).
        this.awaitingResend = { ...offer, offset: have };
        await this.channel.sendCommand(
          BinkpCommand.M_GET,
          Buffer.from(formatBinkpFileOffer(this.awaitingResend), 'latin1'),
        );
        return;
      }
      if (offer.offset > have) {
        this.awaitingResend = null;
        const reason = `offered from ${offer.offset} when ${have} bytes are here`;
        await this.channel.sendCommand(BinkpCommand.M_SKIP, Buffer.from(formatBinkpFileId(offer), 'latin1'));
        this.noteSkipped('in', storedName, offer.size, reason);
        return;
      }
      // A sender that cannot seek where we asked starts earlier: what we have past that goes.
      await truncate(partialPath, offer.offset);
      have = offer.offset;
    }
    this.awaitingResend = null;
    this.filesTaken.add(key);
    const handle = await open(partialPath, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND, 0o640);
    this.incoming = { id: offer, storedName, partialPath, handle, position: have, resumedFrom: have };
    this.options.onProgress?.({
      type: 'file-started',
      direction: 'in',
      name: storedName,
      size: offer.size,
      offset: have,
    });
    if (have === offer.size) await this.completeIncoming(link);
  }

  /**
   * The size of what a dropped session left of this file (0 when nothing). Older parts of a file
   * of the same name from the same link (another size or time: a new file) are deleted, and so
   * is a part longer than the file.
   */
  private async preparePartial(
    link: BinkpLinkSecrets,
    offer: BinkpFileId,
    storedName: string,
    partialPath: string,
  ): Promise<number> {
    const prefix = `${linkKey(link.address)}.`;
    const suffix = `.${storedName}`;
    const wanted = path.basename(partialPath);
    for (const entry of await readdir(link.spool.partial)) {
      const middle =
        entry.startsWith(prefix) && entry.endsWith(suffix) ? entry.slice(prefix.length, -suffix.length) : '';
      if (entry !== wanted && /^[0-9]+\.[0-9]+$/.test(middle))
        await unlinkIfThere(path.join(link.spool.partial, entry));
    }
    const size = await stat(partialPath).then(
      (stats) => stats.size,
      () => 0,
    );
    if (size <= offer.size) return size;
    await unlinkIfThere(partialPath);
    return 0;
  }

  private async takeData(data: Buffer, link: BinkpLinkSecrets): Promise<void> {
    this.bytesIn += data.length;
    const incoming = this.incoming;
    // No file open: data the sender had in flight before our M_GET or M_SKIP reached it.
    if (!incoming) return;
    if (incoming.position + data.length > incoming.id.size) {
      throw new BinkpSessionError(
        `more data than the ${incoming.id.size} bytes ${quoteForError(incoming.id.netName)} was said to have`,
      );
    }
    await incoming.handle.write(data);
    incoming.position += data.length;
    this.options.onProgress?.({
      type: 'file-progress',
      direction: 'in',
      name: incoming.storedName,
      size: incoming.id.size,
      bytes: incoming.position,
    });
    if (incoming.position === incoming.id.size) await this.completeIncoming(link);
  }

  private async completeIncoming(link: BinkpLinkSecrets): Promise<void> {
    const incoming = this.incoming;
    if (!incoming) return;
    this.incoming = null;
    // On disk before the sender is told it may delete its copy.
    await incoming.handle.datasync();
    await incoming.handle.close();
    const name = await moveIntoInbound(incoming.partialPath, link.spool.inbound, incoming.storedName);
    await this.channel.sendCommand(BinkpCommand.M_GOT, Buffer.from(formatBinkpFileId(incoming.id), 'latin1'));
    this.received.push({ name, size: incoming.id.size, resumedFrom: incoming.resumedFrom });
    this.options.onProgress?.({ type: 'file-done', direction: 'in', name, size: incoming.id.size });
  }

  /** Closes the file being received, if any, leaving it in partial/ to resume from. */
  private async closeIncoming(): Promise<void> {
    const incoming = this.incoming;
    this.incoming = null;
    await incoming?.handle.close().catch(() => {});
  }

  private noteSkipped(direction: BinkpDirection, name: string, size: number, reason: string): void {
    this.skipped.push({ direction, name, size, reason });
    this.options.onProgress?.({ type: 'file-skipped', direction, name, size, reason });
  }

  // --- sending -------------------------------------------------------------------------------

  private wakeSender(): void {
    for (const wake of this.senderWaiters.splice(0)) wake();
  }

  /** Resolves at the next answer about our files (or failure). */
  private senderEvent(): Promise<void> {
    return new Promise((resolve) => this.senderWaiters.push(resolve));
  }

  private async settleOutgoing(id: BinkpFileId, answer: 'got' | 'skip'): Promise<void> {
    const outgoing = this.offered.get(fileKey(id));
    // An answer about no file of ours: binkd ignores it, and so do we.
    if (!outgoing) return;
    this.offered.delete(fileKey(id));
    outgoing.isSettled = true;
    outgoing.isAnswered = true;
    if (answer === 'got') {
      await unlinkIfThere(outgoing.path);
      this.sent.push({ name: outgoing.name, size: id.size });
      this.options.onProgress?.({ type: 'file-done', direction: 'out', name: outgoing.name, size: id.size });
    } else {
      this.noteSkipped('out', outgoing.name, id.size, 'the link skipped it (M_SKIP)');
    }
    this.wakeSender();
  }

  private restartOutgoing(request: BinkpFileOffer): void {
    const outgoing = this.offered.get(fileKey(request));
    if (!outgoing) return;
    outgoing.restartAt = request.offset;
    outgoing.isAnswered = true;
    this.wakeSender();
  }

  private async sendOutbound(link: BinkpLinkSecrets): Promise<void> {
    const files = await listOutbound(link.spool.outboundFor(link.address), this.limits.maxFilesPerSession);
    for (const file of files) {
      if (this.channel.failed) return;
      const outgoing: Outgoing = {
        id: { netName: escapeBinkpName(file.name), size: file.size, unixTime: file.unixTime },
        name: file.name,
        path: file.path,
        restartAt: null,
        isSettled: false,
        isAnswered: false,
      };
      if (this.offered.has(fileKey(outgoing.id))) continue;
      this.offered.set(fileKey(outgoing.id), outgoing);
      if (this.isRemoteNrCapable) {
        await this.channel.sendCommand(
          BinkpCommand.M_FILE,
          Buffer.from(formatBinkpFileOffer({ ...outgoing.id, offset: -1 }), 'latin1'),
        );
        while (!outgoing.isAnswered && !this.channel.failed) await this.senderEvent();
      } else {
        outgoing.restartAt = 0;
      }
      await this.pump(outgoing);
    }
    // Answer every M_GET until the remote confirmed or skipped all we sent, then end our batch
    // (binkd, too, waits for its M_GOTs before its M_EOB).
    while (this.offered.size > 0 && !this.channel.failed) {
      const restart = [...this.offered.values()].find((outgoing) => outgoing.restartAt !== null);
      if (restart) await this.pump(restart);
      else await this.senderEvent();
    }
    if (this.channel.failed) return;
    await this.channel.sendCommand(BinkpCommand.M_EOB);
    this.isLocalEobSent = true;
    this.channel.wake();
  }

  /** Sends the file from where the remote asked, again from wherever it asks next, until it is all out or settled. */
  private async pump(outgoing: Outgoing): Promise<void> {
    if (outgoing.restartAt === null || outgoing.isSettled) return;
    const { name } = outgoing;
    const { size } = outgoing.id;
    // Never larger than we take ourselves: a lowered frame limit is meant for both ways.
    const blockBytes = Math.min(SEND_BLOCK_BYTES, this.limits.maxFrameBytes);
    const handle = await open(outgoing.path, 'r');
    try {
      while (outgoing.restartAt !== null && !outgoing.isSettled && !this.channel.failed) {
        let position = outgoing.restartAt;
        outgoing.restartAt = null;
        await this.channel.sendCommand(
          BinkpCommand.M_FILE,
          Buffer.from(formatBinkpFileOffer({ ...outgoing.id, offset: position }), 'latin1'),
        );
        this.options.onProgress?.({ type: 'file-started', direction: 'out', name, size, offset: position });
        while (position < size && outgoing.restartAt === null && !outgoing.isSettled) {
          // A fresh buffer per frame: the socket holds on to it until it is written.
          const block = Buffer.allocUnsafe(Math.min(blockBytes, size - position));
          const { bytesRead } = await handle.read(block, 0, block.length, position);
          if (bytesRead === 0) throw new BinkpSessionError(`${outgoing.name} is shorter than its ${size} bytes`);
          await this.channel.send(encodeDataHeader(bytesRead), block.subarray(0, bytesRead));
          position += bytesRead;
          this.bytesOut += bytesRead;
          this.options.onProgress?.({ type: 'file-progress', direction: 'out', name, size, bytes: position });
        }
      }
    } finally {
      await handle.close();
    }
  }
}

/** Reads an M_ADR: addresses apart by spaces. AKAs baud cannot read are passed over; none at all ends the session. */
function readAddressList(argument: string): FtnAddress[] {
  const addresses: FtnAddress[] = [];
  for (const word of argument.split(' ')) {
    if (word === '') continue;
    try {
      addresses.push(parseFtnAddress(word));
    } catch {
      // Another network's domain spelled as a DNS name (`@fidonet.org`) is no reason to hang up.
    }
  }
  if (addresses.length === 0) {
    throw new BinkpSessionError(`M_ADR ${quoteForError(argument)} holds no address baud reads`);
  }
  return addresses;
}

function fileKey(id: BinkpFileId): string {
  return formatBinkpFileId(id);
}

function linkKey(address: FtnAddress): string {
  return `${address.zone}.${address.net}.${address.node}.${address.point}`;
}

/**
 * A partial file's name says whose and which file it is (`<link>.<size>.<time>.<name>`), so only
 * the same file from the same link is ever resumed from it.
 */
function partialNameFor(address: FtnAddress, file: BinkpFileId, storedName: string): string {
  return `${linkKey(address)}.${file.size}.${file.unixTime}.${storedName}`;
}

async function unlinkIfThere(file: string): Promise<void> {
  await unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** What waits in a link's outbound: plain files not starting with `.` (the scanner's files being written), oldest first. */
async function listOutbound(
  directory: string,
  max: number,
): Promise<{ name: string; path: string; size: number; unixTime: number }[]> {
  const files: { name: string; path: string; size: number; unixTime: number; mtimeMs: number }[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    const file = path.join(directory, entry.name);
    const stats = await stat(file).catch(() => null);
    if (!stats) continue;
    files.push({
      name: entry.name,
      path: file,
      size: stats.size,
      unixTime: Math.floor(stats.mtimeMs / 1000),
      mtimeMs: stats.mtimeMs,
    });
  }
  files.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return files.slice(0, max);
}

const BUNDLE_SEQUENCE = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Names to try in the inbound when `name` is taken (a file not tossed yet): a bundle keeps its
 * form with another last letter (the tosser knows bundles by it), anything else gets `_<n>`
 * before its extension (`1234abcd_1.pkt` is still a packet name).
 */
function* inboundNames(name: string): Generator<string> {
  yield name;
  if (isBundleName(name)) {
    for (const letter of BUNDLE_SEQUENCE) {
      const candidate = name.slice(0, -1) + letter;
      if (candidate.toLowerCase() !== name.toLowerCase()) yield candidate;
    }
  }
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let copy = 1; copy <= 999; copy += 1) yield `${stem}_${copy}${extension}`;
}

/**
 * Moves a whole file from partial/ into the inbound without replacing a file there: a hard link
 * fails when the name is taken (two links' files of one name), so no check-then-rename race.
 * Resolves to the name it got.
 */
async function moveIntoInbound(partialPath: string, inbound: string, name: string): Promise<string> {
  for (const candidate of inboundNames(name)) {
    const target = path.join(inbound, candidate);
    try {
      await link(partialPath, target);
      await unlink(partialPath);
      return candidate;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw error;
      // A file system without hard links: check, then rename.
      if (
        await stat(target).then(
          () => true,
          () => false,
        )
      )
        continue;
      await rename(partialPath, target);
      return candidate;
    }
  }
  throw new BinkpSessionError(`no free name in the inbound for ${name}`);
}
