/** What a caller has left of a limit with fixed windows, as the RateLimit headers tell it. */
export interface RateLimitQuota {
  /** Attempts one window allows. */
  readonly limit: number;
  /** Attempts still allowed before the answer is 429. */
  readonly remaining: number;
  /** Whole seconds until the window that limits most ends (at least 1). */
  readonly resetSeconds: number;
  readonly windowSeconds: number;
}

/**
 * The RateLimit headers of draft-ietf-httpapi-ratelimit-headers in the widely used "draft 6"
 * form: `RateLimit-Limit`, `-Remaining`, `-Reset` (delta seconds) and `RateLimit-Policy:
 * <limit>;w=<windowSeconds>`. Errors carry them with `BaudError.withHeaders`.
 *
 * @example rateLimitHeaders({ limit: 10, remaining: 9, resetSeconds: 900, windowSeconds: 900 })
 * // → { 'ratelimit-limit': '10', 'ratelimit-remaining': '9', 'ratelimit-reset': '900', 'ratelimit-policy': '10;w=900' }
 */
export function rateLimitHeaders(quota: RateLimitQuota): Readonly<Record<string, string>> {
  return {
    'ratelimit-limit': String(quota.limit),
    'ratelimit-remaining': String(quota.remaining),
    'ratelimit-reset': String(quota.resetSeconds),
    'ratelimit-policy': `${quota.limit};w=${quota.windowSeconds}`,
  };
}
