/**
 * Where a message sits in its thread. A thread is a reply tree inside one area; its messages
 * are listed depth-first (root first, replies oldest first) by ordering on `threadPath`: the
 * ids of the message's ancestors and its own, each as 8 hex digits (ids are PostgreSQL
 * `integer`s, below 2^31), so that text order is tree order and a page of a thread is an
 * index range scan of (thread_root_id, thread_path) however big or deep the thread.
 */
export interface ThreadPlace {
  readonly threadRootId: number;
  readonly threadPath: string;
}

const DIGITS_PER_LEVEL = 8;

/**
 * The deepest a reply is placed: a reply to a message this deep becomes that message's
 * sibling instead. Paths grow by 8 characters a level, so a bot replying to itself cannot make
 * rows (and the index) grow without end.
 */
export const MAX_THREAD_DEPTH = 100;

const pathPart = (messageId: number) => messageId.toString(16).padStart(DIGITS_PER_LEVEL, '0');

/** The place of message `messageId`: a new thread, or under `parent` (the message it replies to). */
export function threadPlaceOf(messageId: number, parent: ThreadPlace | null): ThreadPlace {
  if (parent === null) return { threadRootId: messageId, threadPath: pathPart(messageId) };
  const parentPath =
    depthOf(parent.threadPath) >= MAX_THREAD_DEPTH ? parent.threadPath.slice(0, -DIGITS_PER_LEVEL) : parent.threadPath;
  return { threadRootId: parent.threadRootId, threadPath: parentPath + pathPart(messageId) };
}

/** 0 for a thread's root, 1 for a reply to it, … */
export function depthOf(threadPath: string): number {
  return threadPath.length / DIGITS_PER_LEVEL - 1;
}
