import { useEffect, useRef, useState } from 'preact/hooks';
import { BaudProblem } from '../../../clients/typescript/src/index.js';
import { useBoard } from '../board-context.js';
import { href, navigate } from '../router.js';
import { logIn } from '../session.js';
import { Field, ProblemNote, useTitle } from '../ui.js';

/**
 * Only the reader's own pages are followed after log-in, never another site: the address is
 * resolved as the browser would (`/\\evil.example` is another host) and must stay on this origin,
 * outside the API.
 */
function safeReturn(returnTo: string | null): string {
  if (!returnTo) return '/';
  try {
    const target = new URL(returnTo, location.origin);
    if (target.origin !== location.origin || target.pathname.startsWith('/_baud/')) return '/';
    return target.pathname + target.search;
  } catch {
    return '/';
  }
}

/**
 * The login's refusal in plain words: a pending account's 403 says so itself (not "may not do
 * this"); a refused second factor (`auth.invalid-otp`) is said beside what to try next.
 */
function LoginProblem({ error }: { error: unknown }) {
  if (error instanceof BaudProblem && (error.status === 403 || error.code === 'auth.invalid-otp')) {
    return (
      <p class="problem" role="alert">
        {error.status === 403
          ? error.detail
          : 'That code is not right, or it was used already (each code works once). Try the next one.'}
      </p>
    );
  }
  return <ProblemNote error={error} />;
}

export function LoginView({ returnTo }: { returnTo: string | null }) {
  const { info } = useBoard();
  useTitle('Log in', info?.boardName ?? 'baud');
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  // Once the password was right and the account asks a second factor, the form asks the code too
  // and sends both again (the board keeps no half-done login between the two requests).
  const [isCodeAsked, setCodeAsked] = useState(false);
  const codeField = useRef<HTMLInputElement>(null);
  // The code field appears after a submit: the caret goes there, so typing the code is the next step.
  useEffect(() => {
    if (isCodeAsked) codeField.current?.focus();
  }, [isCodeAsked]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const otp = isCodeAsked ? String(form.get('otp') ?? '').replace(/\s+/g, '') : undefined;
    setBusy(true);
    setError(null);
    try {
      await logIn(String(form.get('username') ?? ''), String(form.get('password') ?? ''), otp);
      navigate(safeReturn(returnTo), { replace: true });
    } catch (failure) {
      if (failure instanceof BaudProblem && failure.otpRequired && !isCodeAsked) {
        setCodeAsked(true);
      } else {
        setError(failure);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="narrow">
      <h1>Log in</h1>
      <form onSubmit={(event) => void submit(event)}>
        <Field id="login-username" label="User name">
          {(control) => <input {...control} name="username" autoComplete="username" required maxLength={36} />}
        </Field>
        <Field id="login-password" label="Password">
          {(control) => <input {...control} name="password" type="password" autoComplete="current-password" required />}
        </Field>
        {isCodeAsked && (
          <Field
            id="login-otp"
            label="Code"
            hint="This account logs in with two factors: the 6-digit code of your authenticator app, or one of your recovery codes."
          >
            {(control) => (
              <input
                {...control}
                name="otp"
                autoComplete="one-time-code"
                ref={codeField}
                required
                maxLength={64}
                spellcheck={false}
              />
            )}
          </Field>
        )}
        <LoginProblem error={error} />
        <button type="submit" class="button" disabled={isBusy}>
          {isBusy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
      {info && info.registration !== 'closed' && (
        <p>
          New here? <a href={href('register')}>Sign up</a>
          {info.registration === 'approval' ? ' (a sysop approves each account).' : '.'}
        </p>
      )}
    </section>
  );
}
