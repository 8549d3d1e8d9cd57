import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  checkWebhookUrl,
  resolveWebhookTarget,
  type WebhookAddress,
  type WebhookLookup,
  WebhookTargetError,
} from './webhook-target.js';

/** A receiver's answer is read this far, then dropped: its content is never used. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** The outcome of one delivery attempt, for the delivery log and the retry decision. */
export interface WebhookAttempt {
  /** The receiver's status, or null when none arrived. */
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** Why the attempt failed, short enough for a delivery log (`answered 500`, `ECONNREFUSED`); null on success. */
  readonly error: string | null;
  readonly isSuccess: boolean;
}

export interface WebhookPost {
  readonly url: string;
  readonly body: string;
  /** The delivery's headers (content type, user agent, event, delivery id, signature); Content-Length is added. */
  readonly headers: Readonly<Record<string, string>>;
  readonly allowPrivateTargets: boolean;
  /** One deadline for everything: DNS, connect, TLS, sending and the answer. */
  readonly timeoutMs: number;
  readonly maxResponseBytes?: number;
  readonly lookup?: WebhookLookup;
}

/**
 * POSTs one delivery and reports how it went; it never throws. A 2xx answer is success. Anything
 * else fails: a 3xx too, since redirects are not followed (the new location has not been vetted),
 * a refused target, a network or TLS error and the deadline passing.
 */
export async function postWebhook(post: WebhookPost): Promise<WebhookAttempt> {
  const startedAt = performance.now();
  const attempt = (statusCode: number | null, error: string | null): WebhookAttempt => ({
    statusCode,
    durationMs: performance.now() - startedAt,
    error,
    isSuccess: error === null,
  });

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), post.timeoutMs);
  try {
    const url = checkWebhookUrl(post.url);
    const target = await untilAborted(
      resolveWebhookTarget(url, { allowPrivateTargets: post.allowPrivateTargets, lookup: post.lookup }),
      deadline.signal,
    );
    const statusCode = await sendToAddress(url, target, post, deadline.signal);
    return attempt(statusCode, statusCode >= 200 && statusCode < 300 ? null : `answered ${statusCode}`);
  } catch (error) {
    if (deadline.signal.aborted) return attempt(null, `timed out after ${post.timeoutMs / 1000} s`);
    return attempt(null, describeFailure(error));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The status of the receiver's answer. The socket goes to `target` only (the pinned lookup), while
 * the Host header and, for https, the TLS server name and certificate check keep the URL's host name.
 */
function sendToAddress(url: URL, target: WebhookAddress, post: WebhookPost, signal: AbortSignal): Promise<number> {
  const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
    // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
    if (options.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
  const maxResponseBytes = post.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  return new Promise((resolve, reject) => {
    let statusCode: number | null = null;
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...post.headers, 'Content-Length': String(Buffer.byteLength(post.body)) },
      lookup: pinnedLookup,
      // A pooled socket could be one opened to another address; every delivery resolves afresh.
      agent: false,
      signal,
    });
    // Once the status is in, the answer is known: a body cut short (by the deadline or the
    // receiver) does not change it.
    request.on('error', (error) => (statusCode === null ? reject(error) : resolve(statusCode)));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      statusCode = status;
      let receivedBytes = 0;
      const finish = (): void => {
        response.destroy();
        resolve(status);
      };
      response.on('data', (chunk: Buffer) => {
        receivedBytes += chunk.length;
        if (receivedBytes >= maxResponseBytes) finish();
      });
      // 'close' follows the end of the body and every way of cutting it short.
      response.on('close', finish);
      response.on('error', finish);
    });
    request.end(post.body);
  });
}

/** `work`, or the abort's rejection when `signal` fires first (a DNS lookup cannot be cancelled). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The network error's code (`ECONNREFUSED`, `CERT_HAS_EXPIRED`) where it has one: short and greppable. */
function describeFailure(error: unknown): string {
  if (error instanceof WebhookTargetError) return error.reason;
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}
