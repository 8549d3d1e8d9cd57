import type { AuditStore } from '../audit/audit-store.js';
import type { Caller, CallerUser } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Executor } from '../db/database.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { UserStore } from '../users/user-store.js';
import { usernameKey } from '../users/username.js';
import type { SshKeyRow, SshKeyStore } from './ssh-key-store.js';
import { keyTypeOfAlgorithm, parseSshPublicKey, sshFingerprint } from './ssh-public-key.js';

/** How many SSH keys one user may register: a key per device, with room to spare. */
export const MAX_SSH_KEYS_PER_USER = 20;
/** The longest label, in characters. */
export const SSH_KEY_LABEL_MAX_LENGTH = 100;

/** A registered key as its owner sees it (`/users/me/ssh-keys`). */
export interface SshKeyRecord {
  readonly id: number;
  /** The key's type: `ssh-ed25519`, `ecdsa-sha2-nistp256` …, `ssh-rsa`. */
  readonly type: string;
  /** `SHA256:…`, as `ssh-keygen -lf` and the SSH client show it. */
  readonly fingerprint: string;
  readonly label: string;
  readonly createdAt: string;
}

/** `POST /users/me/ssh-keys`: one OpenSSH public key line, and a label (the line's comment when left out or blank). */
export interface NewSshKeyInput {
  readonly publicKey: string;
  readonly label?: string | undefined;
}

/** A registered key a terminal login matched. */
export interface MatchedSshKey {
  readonly id: number;
  readonly fingerprint: string;
}

/**
 * The SSH public keys users log in with at the terminal: registering, listing and removing
 * one's own, and the lookups of the SSH handshake and the login. Keys are credentials: adding and
 * removing one takes a login session (an API key may only list them), both are audited, and a
 * password change removes them all (`CredentialService`).
 */
export interface SshKeyService {
  /**
   * Registers a key for the caller. The line is checked by `parseSshPublicKey` (400 with what to
   * paste); a label over SSH_KEY_LABEL_MAX_LENGTH characters or with control characters → 400.
   * The same key again → 409 `ssh-key.duplicate`; MAX_SSH_KEYS_PER_USER already → 409
   * `ssh-key.limit-reached`. An API key → 403 `account.login-session-required`.
   */
  add(caller: Caller, input: NewSshKeyInput): Promise<SshKeyRecord>;
  /** The caller's keys, newest first (an API key with scope `read` may list them). */
  listOwn(caller: Caller): Promise<SshKeyRecord[]>;
  /**
   * Removes one of the caller's keys; an id that is not one of theirs (unknown, or someone
   * else's) → 404, the same in both cases. An API key → 403 `account.login-session-required`.
   */
  removeOwn(caller: Caller, keyId: number): Promise<void>;
  /**
   * For the SSH handshake's key query (no signature yet): is this key one the user registered?
   * `algorithm` is the handshake's public key algorithm (`rsa-sha2-256` counts as `ssh-rsa`),
   * `keyData` the key blob. No throttle: nothing is proven by it. Unknown user → false.
   */
  isRegistered(username: string, algorithm: string, keyData: Buffer): Promise<boolean>;
  /**
   * The user's registered key that is `keyData` of `algorithm`, read inside `executor`'s
   * transaction when given (a login checks again there that the key is still registered).
   */
  registeredKey(userId: number, algorithm: string, keyData: Buffer, executor?: Executor): Promise<MatchedSshKey | null>;
}

// C0 and C1 control characters: a label is shown on terminals, where they would be commands.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

const describeKey = (row: SshKeyRow) => `SSH key ${row.id} "${row.label}" (${row.algorithm} ${row.fingerprint})`;

const toRecord = (row: SshKeyRow): SshKeyRecord => ({
  id: row.id,
  type: row.algorithm,
  fingerprint: row.fingerprint,
  label: row.label,
  createdAt: row.createdAt,
});

/** The label given, checked; or, when none is given, the line's comment made fit. */
function labelOf(given: string | undefined, comment: string): string {
  const label = given?.trim() ?? '';
  if (label === '') {
    return [...comment.replace(CONTROL_CHARACTERS, ' ').trim()].slice(0, SSH_KEY_LABEL_MAX_LENGTH).join('').trim();
  }
  const invalid = (why: string) =>
    new BadRequestError('ssh-key.invalid-label', `The label ${why}.`, [{ pointer: '/label', message: why }]);
  if ([...label].length > SSH_KEY_LABEL_MAX_LENGTH) {
    throw invalid(`must be at most ${SSH_KEY_LABEL_MAX_LENGTH} characters`);
  }
  if (new RegExp(CONTROL_CHARACTERS.source).test(label)) throw invalid('must not hold control characters');
  return label;
}

export function createSshKeyService(deps: {
  store: SshKeyStore;
  /** Adding holds the user's row, so that two adds (or an add and a password change) run one after the other. */
  users: Pick<UserStore, 'holdByName' | 'findLoginCredentials'>;
  /** Each key added or removed is audited, as the owner's doing. */
  audit: AuditStore;
  clock: Clock;
}): SshKeyService {
  const { store, users, audit, clock } = deps;

  /** The user of a login session: keys are credentials, which an API key may not give or take. */
  function sessionUserOf(caller: Caller, doing: string): CallerUser {
    if (caller.kind === 'anonymous') throw new UnauthorizedError('auth.required');
    if (caller.session === null) {
      throw new ForbiddenError(
        'account.login-session-required',
        `Only a login session may ${doing} SSH keys, not an API key: log in and send its access token.`,
      );
    }
    return caller.user;
  }

  async function registeredKey(userId: number, algorithm: string, keyData: Buffer, executor?: Executor) {
    const row = await store.findByFingerprint(userId, sshFingerprint(keyData), executor);
    // The fingerprint found the row; the blob and type are compared too, so a match is the key itself.
    const isSameKey =
      row !== undefined &&
      row.keyData === keyData.toString('base64') &&
      row.algorithm === keyTypeOfAlgorithm(algorithm);
    return isSameKey ? { id: row.id, fingerprint: row.fingerprint } : null;
  }

  return {
    async add(caller, input) {
      const user = sessionUserOf(caller, 'add');
      const key = parseSshPublicKey(input.publicKey);
      const label = labelOf(input.label, key.comment);
      const row = await store.transaction(async (trx) => {
        if (!(await users.holdByName(trx, user.username))) throw new UnauthorizedError('auth.account-gone');
        const keys = await store.listOfUser(user.id, trx);
        const same = keys.find((existing) => existing.fingerprint === key.fingerprint);
        if (same) {
          throw new ConflictError(
            'ssh-key.duplicate',
            `You have registered this key already (id ${same.id}, "${same.label}").`,
          );
        }
        if (keys.length >= MAX_SSH_KEYS_PER_USER) {
          throw new ConflictError(
            'ssh-key.limit-reached',
            `You have ${MAX_SSH_KEYS_PER_USER} SSH keys already: remove one first.`,
          );
        }
        const at = clock.now().toISOString();
        const inserted = await store.insertKey(trx, {
          userId: user.id,
          algorithm: key.type,
          keyData: key.blob.toString('base64'),
          fingerprint: key.fingerprint,
          label,
          createdAt: at,
        });
        await audit.record(trx, {
          at,
          actor: user.username,
          action: 'user.ssh-key-added',
          target: user.username,
          detail: `${describeKey(inserted)} added`,
        });
        return inserted;
      });
      return toRecord(row);
    },

    async listOwn(caller) {
      if (caller.kind === 'anonymous') throw new UnauthorizedError('auth.required');
      return (await store.listOfUser(caller.user.id)).map(toRecord);
    },

    async removeOwn(caller, keyId) {
      const user = sessionUserOf(caller, 'remove');
      await store.transaction(async (trx) => {
        const removed = await store.deleteOfUser(trx, user.id, keyId);
        if (!removed) throw new NotFoundError('ssh-key.not-found', 'You have no SSH key with this id.');
        await audit.record(trx, {
          at: clock.now().toISOString(),
          actor: user.username,
          action: 'user.ssh-key-removed',
          target: user.username,
          detail: `${describeKey(removed)} removed`,
        });
      });
    },

    async isRegistered(username, algorithm, keyData) {
      // No account's name holds a NUL (usernames refuse control characters), and PostgreSQL's text cannot.
      if (username.includes('\u0000')) return false;
      const user = await users.findLoginCredentials(usernameKey(username));
      return user !== undefined && (await registeredKey(user.id, algorithm, keyData)) !== null;
    },

    registeredKey,
  };
}
