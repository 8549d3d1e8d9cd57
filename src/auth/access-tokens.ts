import { randomUUID } from 'node:crypto';
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
 * HS256 access tokens. Verification pins the algorithm, so `alg: none` or an RS256 token
 * crafted with the HMAC secret as a "public key" is refused; `exp` is checked against the
 * injected clock.
 */
export function createAccessTokens(secret: Uint8Array, clock: Clock) {
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
        .sign(secret);
      return { accessToken, tokenType: 'Bearer', expiresIn: ACCESS_TOKEN_TTL_SECONDS };
    },

    /** The token's claims, or null for any token that is not valid right now. */
    async verify(token: string): Promise<AccessTokenClaims | null> {
      try {
        const { payload } = await jwtVerify(token, secret, {
          algorithms: ['HS256'],
          issuer: ISSUER,
          currentDate: clock.now(),
          requiredClaims: ['sub', 'exp', 'iat', 'jti'],
        });
        const userId = Number(payload.sub);
        if (!Number.isSafeInteger(userId) || typeof payload.sid !== 'string') return null;
        return { userId, sessionId: payload.sid };
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
