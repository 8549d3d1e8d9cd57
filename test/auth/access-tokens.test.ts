import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  createAccessTokens,
  VERIFIED_TOKEN_CACHE_BYTES,
} from '../../src/auth/access-tokens.js';
import { fakeClock } from '../support/test-board.js';

const SECRET = new TextEncoder().encode('a test secret of thirty-two bytes!');

/** Verified tokens are remembered: these prove the memory never says yes where jose would say no. */
describe('access token verification with the verified-token cache', () => {
  it('accepts a token again and again until the second its exp is reached, then refuses it', async () => {
    const clock = fakeClock();
    const tokens = createAccessTokens(SECRET, clock);
    const { accessToken } = await tokens.issue({ userId: 7, sessionId: 'session-1' });

    expect(await tokens.verify(accessToken)).toEqual({ userId: 7, sessionId: 'session-1' });
    clock.advance(ACCESS_TOKEN_TTL_SECONDS * 1000 - 1);
    expect(await tokens.verify(accessToken)).toEqual({ userId: 7, sessionId: 'session-1' });
    clock.advance(1);
    expect(await tokens.verify(accessToken)).toBeNull();
    expect(await tokens.verify(accessToken)).toBeNull();
  });

  it('refuses a token that differs from a cached one in its signature', async () => {
    const tokens = createAccessTokens(SECRET, fakeClock());
    const { accessToken } = await tokens.issue({ userId: 7, sessionId: 'session-1' });
    expect(await tokens.verify(accessToken)).not.toBeNull();
    // The first character of the signature: the last one also carries two padding bits, and
    // changing only those leaves the signature's bytes (and its validity) as they were.
    const signatureStart = accessToken.lastIndexOf('.') + 1;
    const firstChar = accessToken[signatureStart] === 'A' ? 'B' : 'A';
    const altered = `${accessToken.slice(0, signatureStart)}${firstChar}${accessToken.slice(signatureStart + 1)}`;
    expect(await tokens.verify(altered)).toBeNull();
  });

  it('refuses a token of another secret however many good tokens it remembers', async () => {
    const clock = fakeClock();
    const tokens = createAccessTokens(SECRET, clock);
    const others = createAccessTokens(new TextEncoder().encode('another secret, thirty-two bytes'), clock);
    for (let index = 0; index < 20; index += 1) {
      const { accessToken } = await tokens.issue({ userId: index + 1, sessionId: `s${index}` });
      expect(await tokens.verify(accessToken)).not.toBeNull();
    }
    const forged = await others.issue({ userId: 1, sessionId: 's0' });
    expect(await tokens.verify(forged.accessToken)).toBeNull();
  });

  it('still pins HS256 and the required claims (a cache miss goes through jose)', async () => {
    const clock = fakeClock();
    const tokens = createAccessTokens(SECRET, clock);
    const nowSeconds = Math.floor(clock.now().getTime() / 1000);
    const withoutJti = await new SignJWT({ sid: 'session-1' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('7')
      .setIssuer('baud')
      .setIssuedAt(nowSeconds)
      .setExpirationTime(nowSeconds + 60)
      .sign(SECRET);
    expect(await tokens.verify(withoutJti)).toBeNull();
    expect(await tokens.verify(withoutJti)).toBeNull();
  });

  it('keeps verifying correctly once more tokens were verified than it remembers', async () => {
    const tokens = createAccessTokens(SECRET, fakeClock());
    const first = await tokens.issue({ userId: 1, sessionId: 'first' });
    expect(await tokens.verify(first.accessToken)).toEqual({ userId: 1, sessionId: 'first' });
    // A token with its claims takes more than 256 bytes of the budget: this many overflow it.
    for (let index = 0; index < VERIFIED_TOKEN_CACHE_BYTES / 256; index += 1) {
      const { accessToken } = await tokens.issue({ userId: 2, sessionId: `s${index}` });
      await tokens.verify(accessToken);
    }
    // The first token has left the cache; it is verified afresh and still good.
    expect(await tokens.verify(first.accessToken)).toEqual({ userId: 1, sessionId: 'first' });
  }, 60_000);
});
