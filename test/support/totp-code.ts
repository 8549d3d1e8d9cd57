import { createHmac } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32Bytes(secret: string): Buffer {
  let bits = '';
  for (const char of secret.replace(/=+$/, '').toUpperCase()) {
    const value = BASE32.indexOf(char);
    if (value < 0) throw new Error(`not base32: ${char}`);
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((byte) => Number.parseInt(byte, 2)));
}

/**
 * The code an authenticator app shows for `secret` at `atMs` (RFC 6238: HMAC-SHA-1, 30 s steps,
 * 6 digits), written apart from the server's so the tests check it against the RFC, not itself.
 */
export function totpCode(secret: string, atMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / 30)));
  const mac = createHmac('sha1', base32Bytes(secret)).update(counter).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, '0');
}

/** What an app that answers `inject` (the built app of a test board) is to the helpers here. */
interface InjectingApp {
  inject(request: {
    method: 'POST';
    url: string;
    headers: Record<string, string>;
    payload: object;
  }): Promise<{ statusCode: number; body: string; json(): unknown }>;
}

/**
 * Turns two-factor login on through the API as a user does: enrols with the password, then
 * confirms with the first code `codeFor` gives for the secret. Returns the secret and the
 * recovery codes. The confirming code is spent: the caller's clock must move a step on before
 * the next code works.
 */
export async function enrolTwoFactor(
  app: InjectingApp,
  options: { apiPrefix: string; headers: Record<string, string>; password: string; codeFor(secret: string): string },
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const { apiPrefix, headers } = options;
  const enrolled = await app.inject({
    method: 'POST',
    url: `${apiPrefix}/users/me/totp`,
    headers,
    payload: { password: options.password },
  });
  if (enrolled.statusCode !== 200) throw new Error(`enrolment answered ${enrolled.statusCode}: ${enrolled.body}`);
  const { secret } = enrolled.json() as { secret: string };
  const confirmed = await app.inject({
    method: 'POST',
    url: `${apiPrefix}/users/me/totp/confirm`,
    headers,
    payload: { code: options.codeFor(secret) },
  });
  if (confirmed.statusCode !== 200) throw new Error(`confirmation answered ${confirmed.statusCode}: ${confirmed.body}`);
  return { secret, recoveryCodes: (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes };
}
