import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { PayloadTooLargeError, RequestTimeoutError } from '../errors.js';

// After an answer that came before the whole body, what the client may still send before the
// connection is cut: its bytes in flight (socket buffers of a few hundred KiB), sent in the time
// it takes to read the answer and stop. A client that sends more is not reading.
export const LINGER_MS = 2000;
export const LINGER_MAX_BYTES = 1024 * 1024;

export interface UploadBodyLimits {
  /** Body bytes at most (multipart framing and form fields included); one more → 413. */
  readonly maxBytes: number;
  /** Longest silence while the body is still expected; longer → 408. */
  readonly idleTimeoutSeconds: number;
}

export interface UploadBodyGuard {
  /** Rejects with `PayloadTooLargeError` or `RequestTimeoutError` once the body breaks a limit; never resolves. */
  readonly broken: Promise<never>;
  /** Stops watching: no timer, no listener. Call once the upload is answered. */
  stop(): void;
  /** Stops watching and stops reading the body: the upload failed, the rest of its body is of no use. */
  halt(): void;
}

/** The 413 for an upload body over `maxBytes`, whether its Content-Length says so or its bytes do. */
export function uploadBodyTooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    'file.too-large',
    `The upload is larger than ${maxBytes} bytes (the file limit plus room for the form fields).`,
  );
}

/**
 * Watches an upload body as it flows to its consumer (the multipart parser) and breaks it off
 * as soon as it passes `maxBytes`, or as soon as the client sends nothing for
 * `idleTimeoutSeconds`. Breaking off halts the body (unpiped and paused, so not one more byte
 * is read from the socket) and rejects `broken`; the caller fails the upload with that error,
 * answers, and ends the connection with {@link closeUnfinishedUpload}.
 *
 * The bytes are counted on `body` itself because @fastify/multipart pipes the raw request into
 * its parser, not the stream a `preParsing` hook returns: a wrapper there would see nothing.
 */
export function guardUploadBody(body: Readable, limits: UploadBodyLimits): UploadBodyGuard {
  const idleTimeoutMs = limits.idleTimeoutSeconds * 1000;
  let byteCount = 0;
  let fail: (error: Error) => void = () => {};
  const broken = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  // Nobody may be waiting when a limit breaks (the upload already has its whole file): no
  // unhandled rejection for that.
  broken.catch(() => {});

  const onIdle = () => {
    // Paused by the consumer's back-pressure: the disk is the slow side, not the client.
    if (body.isPaused()) timer.refresh();
    else
      breakOff(
        new RequestTimeoutError('request.timeout', `The upload sent no data for ${limits.idleTimeoutSeconds} s.`),
      );
  };
  const timer = setTimeout(onIdle, idleTimeoutMs);
  const onData = (chunk: Buffer | string) => {
    byteCount += chunk.length;
    if (byteCount > limits.maxBytes) breakOff(uploadBodyTooLarge(limits.maxBytes));
    else timer.refresh();
  };
  const stop = () => {
    clearTimeout(timer);
    body.off('data', onData);
    body.off('end', stop);
    body.off('close', stop);
  };
  const halt = () => {
    stop();
    body.unpipe();
    body.pause();
  };
  function breakOff(error: Error): void {
    halt();
    fail(error);
  }

  // prependListener, unlike on('data'), does not switch the stream to flowing: the parser's
  // pipe decides when bytes flow, this only watches them pass, whichever was attached first.
  body.prependListener('data', onData);
  // A body that has arrived whole (or a client that went away) has nothing left to limit.
  body.once('end', stop);
  body.once('close', stop);
  return { broken, stop, halt };
}

/**
 * Ends the connection of an upload that is answered before its body arrived whole; call just
 * before the answer is written. Left to itself, Node would read and drop the rest of the body
 * to keep the connection alive (gigabytes, for a client that keeps sending); closing at once
 * instead resets the connection while the client's last bytes are in flight, and the reset
 * erases the answer from the client's buffers (measured: 4 of 4 answers lost to a localhost
 * client sending a chunked body). So the close is staged, as RFC 9112 §9.6 advises: what the
 * client still sends is dropped, FIN right after the answer, and the connection is cut once the
 * client has sent {@link LINGER_MAX_BYTES} more or {@link LINGER_MS} have passed since the answer.
 *
 * Answers that carry `Connection: close` (Node ends those connections itself) get no linger.
 */
export function closeUnfinishedUpload(socket: Socket, body: Readable, answer: Writable): void {
  // Dropped here, counted: a body Node dumps instead is dropped uncounted, so this must start
  // before the answer is finished (measured: 1 GiB read in the 2 s of linger without it).
  let droppedBytes = 0;
  body.on('data', (chunk: Buffer | string) => {
    droppedBytes += chunk.length;
    if (droppedBytes > LINGER_MAX_BYTES) socket.destroy();
  });
  // Paused when a limit broke it off: flowing again, into the counter above and nowhere else.
  body.resume();
  answer.once('finish', () => {
    if (!socket.writable) return;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once('close', () => clearTimeout(timer));
  });
}
