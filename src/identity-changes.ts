/**
 * This node's record of writes that can change what a credential stands for: a session
 * begun, ended or touched, an account disabled or re-enabled, a password or a group changed,
 * an API key revoked. Caches of "who is this caller" (the caller cache, the node count) keep
 * an entry only while the epoch it was loaded in is still current, so this node sees its own
 * changes at once; other nodes sharing the database see them when their entries age out, and
 * each cache documents that bound.
 *
 * The stores that make those writes call `changed()`; they are the one place the writes happen.
 */
export interface IdentityChanges {
  /** Grows with every change; compare it, never interpret it. */
  readonly epoch: number;
  changed(): void;
}

export function createIdentityChanges(): IdentityChanges {
  let epoch = 0;
  return {
    get epoch() {
      return epoch;
    },
    changed() {
      epoch += 1;
    },
  };
}
