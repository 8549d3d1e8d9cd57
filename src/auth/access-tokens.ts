import { createSecretKey, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../clock.js';

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
 * Tokens whose signature and claims one node verified and remembers, at most this many. A
 * token is cached until its own `exp` only; the cache holds nothing a fresh verification
 * would not give again, and every request still checks the session behind the token.
 */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

interface VerifiedToken {
  readonly claims: AccessTokenClaims;
  /** The token's `exp` in milliseconds: valid while the clock is before it (as jose decides). */
  readonly expiresAtMs: number;
}

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
export function createAccessTokens(secret: Uint8Array, clock: Clock) {
  const key = createSecretKey(secret);
  const verified = new Map<string, VerifiedToken>();

  function remember(token: string, entry: VerifiedToken): void {
    // Map order is insertion order, and every token lives as long: the first entry is the one
    // that expires first, so it is the one to let go.
    if (verified.size >= VERIFIED_TOKEN_CACHE_SIZE) verified.delete(verified.keys().next().value as string);
    verified.set(token, entry);
  }

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

    /** The token's claims, or null for any token that is not valid right now. */
    async verify(token: string): Promise<AccessTokenClaims | null> {
      const nowMs = clock.now().getTime();
      const known = verified.get(token);
      if (known !== undefined) {
        if (nowMs < known.expiresAtMs) return known.claims;
        verified.delete(token);
        return null;
      }
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
        remember(token, { claims, expiresAtMs: Number(payload.exp) * 1000 });
        return claims;
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
