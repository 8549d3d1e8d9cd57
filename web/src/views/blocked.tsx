import { useState } from 'preact/hooks';
import { API_PREFIX, BaudProblem } from '../../../clients/typescript/src/index.js';
import type { BlockedUser } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { body, Field, fieldErrors, formatDate, Loading, ProblemNote, useLoad, useTitle } from '../ui.js';
import { MailTabs } from './mailbox.js';

/**
 * Everyone the caller blocked, every page of it: a block list is a handful of names, and both
 * its page and a profile's Block button need all of it (the API has no "is this one blocked").
 */
async function loadBlocked(): Promise<BlockedUser[]> {
  const blocked: BlockedUser[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: readonly BlockedUser[]; meta: { nextCursor: string | null } } = body(
      await client.api.GET(`${API_PREFIX}/users/me/blocked`, {
        params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      }),
    );
    blocked.push(...page.data);
    cursor = page.meta.nextCursor;
  } while (cursor !== null);
  return blocked;
}

async function block(username: string): Promise<void> {
  await client.api.PUT(`${API_PREFIX}/users/me/blocked/{username}`, { params: { path: { username } } });
}

async function unblock(username: string): Promise<void> {
  await client.api.DELETE(`${API_PREFIX}/users/me/blocked/{username}`, { params: { path: { username } } });
}

/** A refusal of a block said beside the name field: no such member (404), oneself (400). */
function blockFieldError(error: unknown): string | undefined {
  if (!(error instanceof BaudProblem)) return undefined;
  if (error.status === 404) return error.detail;
  if (error.code === 'mail.cannot-block-self') return error.detail;
  return fieldErrors(error).username;
}

/**
 * The caller's block list with a way to unblock each, and a form to block a member by name.
 * Blocking refuses their new mail (403 to them); mail they sent before stays.
 */
export function BlockedUsers() {
  const { user } = useBoard();
  const list = useLoad(loadBlocked, [user?.userId]);
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const fieldError = blockFieldError(error);
  const run = async (change: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await change();
      list.reload();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const username = String(new FormData(form).get('username') ?? '').trim();
    if (await run(() => block(username))) form.reset();
  };
  return (
    <div class="blocked-users">
      <p class="muted">Members you block cannot send you mail. What they sent before stays in your inbox.</p>
      <Loading state={list}>
        {(blocked) =>
          blocked.length === 0 ? (
            <p>You have blocked nobody.</p>
          ) : (
            <ul class="plain-list" aria-label="Blocked users">
              {blocked.map((entry) => (
                <li key={entry.username}>
                  <a href={href('user', { username: entry.username })}>{entry.username}</a>{' '}
                  <span class="muted">since {formatDate(entry.blockedAt)}</span>{' '}
                  <button
                    type="button"
                    class="button"
                    disabled={isBusy}
                    onClick={() => void run(() => unblock(entry.username))}
                  >
                    Unblock <span class="sr-only">{entry.username}</span>
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Loading>
      <form class="block-form" onSubmit={(event) => void submit(event)} noValidate>
        <Field id="block-username" label="Block a member" error={fieldError} hint="Their user name.">
          {(control) => <input {...control} name="username" maxLength={36} autoComplete="off" />}
        </Field>
        <button type="submit" class="button" disabled={isBusy}>
          Block
        </button>
      </form>
      <ProblemNote error={fieldError ? null : error} />
    </div>
  );
}

/** The block list as a page of the mailbox. */
export function BlockedView() {
  const { info, user } = useBoard();
  useTitle('Blocked users', info?.boardName ?? 'baud');
  return (
    <section>
      <h1>Blocked users</h1>
      {user === null ? (
        <p>
          <a href={href('login', {}, { returnTo: href('blocked') })}>Log in</a> to see whom you have blocked.
        </p>
      ) : (
        <>
          <MailTabs current="blocked" />
          <BlockedUsers />
        </>
      )}
    </section>
  );
}

/** On another member's profile: write them a mail, and block or unblock them. */
export function MailAndBlock({ username }: { username: string }) {
  const { user } = useBoard();
  const blocked = useLoad(
    async () => (await loadBlocked()).some((entry) => entry.username.toLowerCase() === username.toLowerCase()),
    [username, user?.userId],
  );
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const toggle = async (isBlocked: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await (isBlocked ? unblock(username) : block(username));
      blocked.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="actions">
      <a class="button" href={href('mailCompose', {}, { to: username })}>
        Send a mail
      </a>
      <Loading state={blocked}>
        {(isBlocked) => (
          <>
            <button type="button" class="button" disabled={isBusy} onClick={() => void toggle(isBlocked)}>
              {isBlocked ? `Unblock ${username}` : `Block ${username}`}
            </button>
            <span role="status">{isBlocked ? `You have blocked ${username}: their new mail is refused.` : ''}</span>
          </>
        )}
      </Loading>
      <ProblemNote error={error} />
    </div>
  );
}
