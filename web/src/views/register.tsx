import { useState } from 'preact/hooks';
import { API_PREFIX, BaudProblem } from '../../../clients/typescript/src/index.js';
import { useBoard } from '../board-context.js';
import { href } from '../router.js';
import { client } from '../session.js';
import { body, Field, fieldErrors, ProblemNote, useTitle } from '../ui.js';

/** What the board answered to an application: active at once (201), or waiting for a sysop (202). */
type Registered = { readonly username: string; readonly status: 'active' | 'pending' };

/** The limits of POST /auth/register's fields (src/http/routes/auth-routes.ts). */
const NOTE_MAX_LENGTH = 500;

/**
 * The refusals that belong to one field: the 400's `errors` by field, and a taken name (409),
 * which says nothing but that the name is in use, so it is said beside the name.
 */
function registrationFieldErrors(error: unknown): Readonly<Record<string, string>> {
  if (error instanceof BaudProblem && error.status === 409) {
    return { username: 'This name is taken (in some mix of capitals). Choose another.' };
  }
  return fieldErrors(error);
}

/** `seconds` as a person would say it: minutes once it is more than a minute. */
function waitOf(seconds: number): string {
  return seconds > 90 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds`;
}

/**
 * A refusal of the whole application: too many from this address (429) is said with the wait in
 * minutes (the limit is per hour), everything else as the board says it.
 */
function RegisterProblem({ error }: { error: unknown }) {
  if (error instanceof BaudProblem && error.status === 429) {
    return (
      <p class="problem" role="alert">
        Too many accounts were applied for from your address this hour.
        {error.retryAfterSeconds ? ` Try again in ${waitOf(error.retryAfterSeconds)}.` : ' Try again later.'}
      </p>
    );
  }
  return <ProblemNote error={error} />;
}

function Done({ registered }: { registered: Registered }) {
  if (registered.status === 'active') {
    return (
      <div role="status">
        <p>
          Welcome, <strong>{registered.username}</strong>: your account is ready.
        </p>
        <p>
          <a class="button" href={href('login')}>
            Log in
          </a>
        </p>
      </div>
    );
  }
  return (
    <div role="status">
      <p>
        Thank you, <strong>{registered.username}</strong>: your application waits for the sysop.
      </p>
      <p>
        You can log in once it is approved. Until then, logging in says that the account awaits approval; if it is
        rejected, the name is free again.
      </p>
    </div>
  );
}

function RegisterForm({ isApproval, onDone }: { isApproval: boolean; onDone: (registered: Registered) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [mismatch, setMismatch] = useState(false);
  const [note, setNote] = useState('');
  const [isBusy, setBusy] = useState(false);
  const errors = registrationFieldErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '');
    const isMismatch = text('password') !== text('passwordAgain');
    setMismatch(isMismatch);
    setError(null);
    if (isMismatch) return;
    // Empty optional fields are left out: the board keeps no empty e-mail address.
    const optional = Object.fromEntries(
      (['email', 'realName', 'location'] as const)
        .filter((name) => text(name).trim() !== '')
        .map((name) => [name, text(name)]),
    );
    setBusy(true);
    try {
      const answer = await client.api.POST(`${API_PREFIX}/auth/register`, {
        body: {
          username: text('username'),
          password: text('password'),
          ...optional,
          ...(note.trim() === '' ? {} : { note }),
        },
      });
      onDone(body(answer) as Registered);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const hasFieldErrors = Object.keys(errors).length > 0;
  return (
    <form onSubmit={(event) => void submit(event)}>
      <Field
        id="register-username"
        label="User name"
        error={errors.username}
        hint="2 to 32 characters, not only digits."
      >
        {(control) => <input {...control} name="username" autoComplete="username" required maxLength={32} />}
      </Field>
      <Field id="register-password" label="Password" error={errors.password}>
        {(control) => <input {...control} name="password" type="password" autoComplete="new-password" required />}
      </Field>
      <Field
        id="register-passwordAgain"
        label="Password again"
        error={mismatch ? 'The two passwords differ.' : undefined}
      >
        {(control) => <input {...control} name="passwordAgain" type="password" autoComplete="new-password" required />}
      </Field>
      <Field id="register-email" label="E-mail (optional)" error={errors.email}>
        {(control) => <input {...control} name="email" type="email" autoComplete="email" maxLength={256} />}
      </Field>
      <Field id="register-realName" label="Real name (optional)" error={errors.realName}>
        {(control) => <input {...control} name="realName" autoComplete="name" maxLength={64} />}
      </Field>
      <Field id="register-location" label="Location (optional)" error={errors.location}>
        {(control) => <input {...control} name="location" maxLength={64} />}
      </Field>
      {isApproval && (
        <Field
          id="register-note"
          label="A note for the sysop (optional)"
          error={errors.note}
          hint={`Who you are, how you found the board. ${note.length} of ${NOTE_MAX_LENGTH} characters.`}
        >
          {(control) => (
            <textarea
              {...control}
              name="note"
              class="short"
              rows={4}
              maxLength={NOTE_MAX_LENGTH}
              value={note}
              onInput={(event) => setNote(event.currentTarget.value)}
            />
          )}
        </Field>
      )}
      <RegisterProblem error={hasFieldErrors ? null : error} />
      <button type="submit" class="button" disabled={isBusy}>
        {isBusy ? 'Sending…' : isApproval ? 'Apply' : 'Create the account'}
      </button>
    </form>
  );
}

/** The sign-up form, by the board's rule (GET /system/info `registration`): open, by approval, or closed. */
export function RegisterView() {
  const { info, user } = useBoard();
  useTitle('Sign up', info?.boardName ?? 'baud');
  const [registered, setRegistered] = useState<Registered | null>(null);
  const rule = info?.registration;
  return (
    <section class="narrow">
      <h1>Sign up</h1>
      {registered !== null ? (
        <Done registered={registered} />
      ) : rule === undefined ? (
        <p class="muted">Loading…</p>
      ) : rule === 'closed' ? (
        <p>
          This board takes no new members: the sysop creates accounts. Ask them, or read what guests may on the{' '}
          <a href="/">front page</a>.
        </p>
      ) : (
        <>
          {user && <p class="muted">You are logged in as {user.username}; this form applies for another account.</p>}
          <p>
            {rule === 'open'
              ? 'Your account is active as soon as it is created.'
              : 'A sysop reads each application: your account is active once they approve it.'}{' '}
            Already a member? <a href={href('login')}>Log in</a>.
          </p>
          <RegisterForm isApproval={rule === 'approval'} onDone={setRegistered} />
        </>
      )}
    </section>
  );
}
