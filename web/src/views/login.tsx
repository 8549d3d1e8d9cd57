import { useState } from 'preact/hooks';
import { useBoard } from '../board-context.js';
import { navigate } from '../router.js';
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

export function LoginView({ returnTo }: { returnTo: string | null }) {
  const { info } = useBoard();
  useTitle('Log in', info?.boardName ?? 'baud');
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await logIn(String(form.get('username') ?? ''), String(form.get('password') ?? ''));
      navigate(safeReturn(returnTo), { replace: true });
    } catch (failure) {
      setError(failure);
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
        <ProblemNote error={error} />
        <button type="submit" class="button" disabled={isBusy}>
          {isBusy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </section>
  );
}
