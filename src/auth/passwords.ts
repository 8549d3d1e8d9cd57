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

/** Never throws: a malformed stored hash is just a failed verification. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await (await loadArgon2()).verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same work as a real verification; run when the username is unknown so that an
 * unknown user and a wrong password take the same time.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('baud-dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
  return false;
}
