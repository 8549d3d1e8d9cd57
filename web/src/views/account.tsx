import { useState } from 'preact/hooks';
import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import { changePassword, endSession, listSessions } from '../account-api.js';
import type { LoginSession } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { type Column, DataTable } from '../data-table.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { body, Field, formatDate, formProblem, Loading, ProblemNote, useLoad, useTitle } from '../ui.js';
import { accountFieldErrors, useSubmit } from './account-forms.js';
import { BlockedUsers } from './blocked.js';
import { SshKeys } from './ssh-keys.js';
import { TwoFactor } from './two-factor.js';

function PasswordForm() {
  const [isChanged, setChanged] = useState(false);
  const [mismatch, setMismatch] = useState(false);
  const { error, isBusy, onSubmit } = useSubmit(async (form, element) => {
    const newPassword = String(form.get('newPassword') ?? '');
    const isMismatch = newPassword !== String(form.get('newPasswordAgain') ?? '');
    setChanged(false);
    setMismatch(isMismatch);
    if (isMismatch) return;
    await changePassword(String(form.get('currentPassword') ?? ''), newPassword);
    // Passwords are not left in the form once they have done their work.
    element.reset();
    setChanged(true);
  });
  const errors = accountFieldErrors(error, 'currentPassword');
  return (
    <form class="narrow" onSubmit={onSubmit}>
      <Field id="password-current" label="Current password" error={errors.currentPassword}>
        {(control) => (
          <input {...control} name="currentPassword" type="password" autoComplete="current-password" required />
        )}
      </Field>
      <Field id="password-new" label="New password" error={errors.newPassword}>
        {(control) => <input {...control} name="newPassword" type="password" autoComplete="new-password" required />}
      </Field>
      <Field
        id="password-again"
        label="New password again"
        error={mismatch ? 'The two new passwords differ.' : undefined}
      >
        {(control) => (
          <input {...control} name="newPasswordAgain" type="password" autoComplete="new-password" required />
        )}
      </Field>
      <ProblemNote error={formProblem(error, errors)} />
      <div class="toolbar">
        <button type="submit" class="button" disabled={isBusy}>
          {isBusy ? 'Changing…' : 'Change the password'}
        </button>
        <span role="status">
          {isChanged ? 'Password changed. Every other login session of yours has ended; this one goes on.' : ''}
        </span>
      </div>
    </form>
  );
}

const VIA: Record<LoginSession['via'], string> = { api: 'Web or API', terminal: 'Terminal' };

function EndButton({ session, onEnded }: { session: LoginSession; onEnded: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  if (session.current) return <span class="muted">this one</span>;
  const end = async () => {
    setBusy(true);
    setError(null);
    try {
      await endSession(session.id);
      onEnded();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        class="button"
        disabled={isBusy}
        aria-label={`End the session started ${formatDate(session.createdAt)}`}
        onClick={() => void end()}
      >
        End
      </button>
      <ProblemNote error={error} />
    </>
  );
}

function Sessions() {
  const sessions = useLoad(listSessions, []);
  const columns: Column<LoginSession>[] = [
    { label: 'Started', cell: (session) => formatDate(session.createdAt) },
    { label: 'Last seen', cell: (session) => formatDate(session.lastSeenAt) },
    { label: 'Through', class: 'wide-only', cell: (session) => VIA[session.via] ?? session.via },
    { label: 'End', cell: (session) => <EndButton session={session} onEnded={sessions.reload} /> },
  ];
  return (
    <Loading state={sessions}>
      {(list) => (
        <DataTable
          rows={list}
          columns={columns}
          rowKey={(session) => session.id}
          rowClass={(session) => (session.current ? 'current' : '')}
        />
      )}
    </Loading>
  );
}

function AccountBody({ userId }: { userId: number }) {
  const profile = useLoad(async () => body(await client.api.GET(`${API_PREFIX}/users/me`)), [userId]);
  return (
    <>
      <section aria-labelledby="account-password">
        <h2 id="account-password">Password</h2>
        <p class="muted">
          A new password logs out every other session of yours, revokes your API keys and removes your SSH keys;
          webhooks made with them stop until you switch them on again.
        </p>
        <PasswordForm />
      </section>
      <section aria-labelledby="account-two-factor">
        <h2 id="account-two-factor">Two-factor login</h2>
        <Loading state={profile}>
          {(loaded) => <TwoFactor isEnabled={loaded.totpEnabled === true} onChange={profile.reload} />}
        </Loading>
      </section>
      <section aria-labelledby="account-sessions">
        <h2 id="account-sessions">Login sessions</h2>
        <p class="muted">
          Where you are logged in. Ending a session logs that browser or program out at once; log this one out with “Log
          out”.
        </p>
        <Sessions />
      </section>
      <section aria-labelledby="account-ssh-keys">
        <h2 id="account-ssh-keys">SSH keys</h2>
        <p class="muted">Log in at the terminal (ssh) with a key of yours instead of the password.</p>
        <SshKeys />
      </section>
      <section aria-labelledby="account-blocked">
        <h2 id="account-blocked">Blocked users</h2>
        <BlockedUsers />
      </section>
    </>
  );
}

/**
 * The caller's own account: password, two-factor login, login sessions (community.md "Your own
 * account"), SSH keys ("Terminal callers") and the mail block list.
 */
export function AccountView() {
  const { info, user } = useBoard();
  useTitle('Your account', info?.boardName ?? 'baud');
  return (
    <section>
      <h1>Your account</h1>
      {user ? (
        <>
          <p class="muted">
            Your public profile is on <a href={href('profile')}>its own page</a>.
          </p>
          <AccountBody userId={user.userId} />
        </>
      ) : (
        <p>
          <a href={href('login', {}, { returnTo: '/account' })}>Log in</a> to change your password, two-factor login,
          sessions and SSH keys.
        </p>
      )}
    </section>
  );
}
