import { isEnigmaPasswordHash, verifyEnigmaPassword } from './enigma-password.js';

/**
 * argon2 is loaded at the first password operation, not at start-up: a node that serves reads
 * never needs it, and the native module costs a few MiB of resident memory.
 */
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
const loadArgon2 = () => {
  argon2 ??= import('@node-rs/argon2');
  return argon2;
};

// OWASP's argon2id baseline (19 MiB, 2 passes): ~20 ms on this class of machine.
// `algorithm: 2` is Algorithm.Argon2id (a const enum, which verbatimModuleSyntax cannot import).
const ARGON2_OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export async function hashPassword(password: string): Promise<string> {
  return (await loadArgon2()).hash(password, ARGON2_OPTIONS);
}

/**
 * Checks `password` against a stored hash: baud's argon2id, or an ENiGMA½ PBKDF2 hash kept by
 * `baud import enigma` (see enigma-password.ts). Never throws: a malformed stored hash is just
 * a failed verification.
 */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  if (isEnigmaPasswordHash(passwordHash)) return verifyEnigmaPassword(passwordHash, password);
  try {
    return await (await loadArgon2()).verify(passwordHash, password);
  } catch {
    return false;
  }
}

/**
 * Whether a login that just verified against `passwordHash` should store `hashPassword` of the
 * password instead: true for imported ENiGMA½ hashes. PBKDF2 is not memory-hard (and ENiGMA½'s
 * legacy hashes are 1,000 SHA-1 rounds), yet its 210,000 SHA-512 rounds took 430 ms to argon2id's
 * 12 ms on our test machine.
 */
export function needsRehash(passwordHash: string): boolean {
  return isEnigmaPasswordHash(passwordHash);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same work as a real verification; run when the username is unknown so that an
 * unknown user and a wrong password take the same time. Only argon2's: an imported user whose
 * ENiGMA½ hash is not yet replaced takes longer (PBKDF2), until their first login rehashes it;
 * spending PBKDF2's ~0.4 s on every unknown name would hand out free CPU to anyone guessing.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('baud-dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
  return false;
}
