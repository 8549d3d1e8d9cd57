import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { jwtVerify } from 'jose';

/** What checking a credential costs in CPU, apart from the database (issue 16, item 4). */
export interface CredentialCosts {
  /** jose verifying an HS256 token with the secret as bytes: imported into WebCrypto each time. */
  readonly joseWithBytesUs: number;
  /** baud's verification of a token it has not seen (jose with a `KeyObject`). */
  readonly firstVerificationUs: number;
  /** baud's verification of a token it verified before (the verified-token cache). */
  readonly repeatVerificationUs: number;
  /** Hashing a presented API key for its lookup (SHA-256). */
  readonly apiKeyHashUs: number;
}

type AccessTokensModule = typeof import('../src/auth/access-tokens.js');
type ApiKeysModule = typeof import('../src/auth/api-keys.js');

/** Median microseconds per call of `operation`, over `rounds` rounds of `perRound` calls. */
async function medianMicros(operation: () => unknown, perRound: number, rounds = 7): Promise<number> {
  for (let index = 0; index < perRound; index += 1) await operation();
  const perCall: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const started = performance.now();
    for (let index = 0; index < perRound; index += 1) await operation();
    perCall.push(((performance.now() - started) * 1000) / perRound);
  }
  return perCall.sort((a, b) => a - b)[Math.floor(rounds / 2)] ?? 0;
}

/**
 * Measures, in this process and with the compiled build's own modules, each way of checking a
 * credential that a request may take. Fresh tokens are issued for the first-verification
 * figure, so every one of them misses the cache.
 */
export async function measureCredentialCosts(buildDir: string): Promise<CredentialCosts> {
  const load = <T>(module: string) => import(pathToFileURL(path.join(buildDir, 'dist', module)).href) as Promise<T>;
  const { createAccessTokens } = await load<AccessTokensModule>('auth/access-tokens.js');
  const { hashSecretToken } = await load<ApiKeysModule>('auth/api-keys.js');
  const secret = new TextEncoder().encode('a bench secret of thirty-two bytes');
  const clock = { now: () => new Date() };
  const tokens = createAccessTokens(secret, clock);

  const fresh = await Promise.all(
    Array.from({ length: 4000 }, (_, index) => tokens.issue({ userId: 1, sessionId: `bench-${index}` })),
  );
  const verifier = createAccessTokens(secret, clock);
  let next = 0;
  const firstVerificationUs = await medianMicros(
    () => verifier.verify(fresh[next++ % fresh.length]?.accessToken ?? ''),
    500,
  );
  const repeated = fresh[0]?.accessToken ?? '';
  const repeatVerificationUs = await medianMicros(() => verifier.verify(repeated), 20_000);
  const joseWithBytesUs = await medianMicros(
    () => jwtVerify(repeated, secret, { algorithms: ['HS256'], issuer: 'baud' }),
    500,
  );
  const apiKeyHashUs = await medianMicros(() => hashSecretToken(`baud_${'x'.repeat(43)}`), 20_000);
  return { joseWithBytesUs, firstVerificationUs, repeatVerificationUs, apiKeyHashUs };
}
