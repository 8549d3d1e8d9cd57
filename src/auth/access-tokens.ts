import { createSecretKey, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../clock.js';
import { estimatedBytes, estimatedStringBytes } from '../estimated-bytes.js';
import { createRecentCache } from '../recent-cache.js';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
const ISSUER = 'baud';

export interface AccessTokenClaims {
  readonly userId: number;
  /** The login session (refresh family) the token was issued for. */
  readonly sessionId: string;
}

export interface IssuedAccessToken {
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  /** Seconds (decisions.md settles the unit the spec leaves open). */
  readonly expiresIn: number;
}

/**
 * The bytes the tokens one node verified and remembers may hold, counted with
 * estimated-bytes.ts (~0.6 KB a token with its claims): ~7,000 tokens, the clients of the
 * last 15 minutes on a busy node. A token is kept until its own `exp` at most; the cache holds
 * nothing a fresh verification would not give again, and every request still checks the
 * session behind the token. Past the budget the oldest goes first and is verified afresh.
 */
export const VERIFIED_TOKEN_CACHE_BYTES = 4 * 1024 * 1024;

/** A verified token never goes stale before its `exp`: its claims are in the signed token itself. */
const NO_VERSION = 0;

/**
 * HS256 access tokens. Verification pins the algorithm, so `alg: none` or an RS256 token
 * crafted with the HMAC secret as a "public key" is refused; `exp` is checked against the
 * injected clock.
 *
 * Verifying costs tens of microseconds (measured in docs/PERFORMANCE.md), and a client sends
 * the same token with every request for 15 minutes: a verified token is remembered until it
 * expires, so later requests pay one map lookup. The secret is a `KeyObject`, which jose uses
 * as it is, where a byte array would be imported into WebCrypto on every verification.
 */
/** Short-lived signed access tokens: what a login hands out and every request shows. */
export interface AccessTokens {
  /** A new token for the claims (a user in a login session), valid for ACCESS_TOKEN_TTL_SECONDS. */
  issue(claims: AccessTokenClaims): Promise<IssuedAccessToken>;
  /** The token's claims, or null for any token that is not valid right now. */
  verify(token: string): Promise<AccessTokenClaims | null>;
}

export function createAccessTokens(secret: Uint8Array, clock: Clock): AccessTokens {
  const key = createSecretKey(secret);
  // Every token lives as long, so the order they are verified in is the order they expire in:
  // the cache's oldest-first sweep lets each go at its `exp`.
  const verified = createRecentCache<AccessTokenClaims>({
    maxBytes: VERIFIED_TOKEN_CACHE_BYTES,
    sizeOf: (token, claims) => estimatedStringBytes(token) + estimatedBytes(claims),
    clock,
  });

  return {
    async issue(claims: AccessTokenClaims): Promise<IssuedAccessToken> {
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      const accessToken = await new SignJWT({ sid: claims.sessionId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(claims.userId))
        .setIssuer(ISSUER)
        .setIssuedAt(nowSeconds)
        .setExpirationTime(nowSeconds + ACCESS_TOKEN_TTL_SECONDS)
        .setJti(randomUUID())
        .sign(key);
      return { accessToken, tokenType: 'Bearer', expiresIn: ACCESS_TOKEN_TTL_SECONDS };
    },

    async verify(token: string): Promise<AccessTokenClaims | null> {
      const nowMs = clock.now().getTime();
      // An expired token has left the cache, and jose refuses it below.
      const known = verified.get(token, NO_VERSION);
      if (known !== undefined) return known;
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer: ISSUER,
          currentDate: clock.now(),
          requiredClaims: ['sub', 'exp', 'iat', 'jti'],
        });
        const userId = Number(payload.sub);
        if (!Number.isSafeInteger(userId) || typeof payload.sid !== 'string') return null;
        const claims = { userId, sessionId: payload.sid };
        // requiredClaims makes `exp` present; jose has checked that it is a number in the future.
        verified.set(token, claims, { loadedAtMs: nowMs, expiresAtMs: Number(payload.exp) * 1000 }, NO_VERSION);
        return claims;
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}
