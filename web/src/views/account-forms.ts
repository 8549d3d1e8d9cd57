import { useState } from 'preact/hooks';
import { BaudProblem } from '../../../clients/typescript/src/index.js';
import { fieldErrors } from '../ui.js';

/** A form's submission with its busy flag and its refusal, the same for every form of the account page. */
export function useSubmit(action: (form: FormData, element: HTMLFormElement) => Promise<void>) {
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const element = event.currentTarget as HTMLFormElement;
    setBusy(true);
    setError(null);
    try {
      await action(new FormData(element), element);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { error, isBusy, onSubmit: (event: Event) => void submit(event) };
}

/**
 * The refusals of a form that asks the caller's password, by field: the 400's `errors`, and a
 * 403, which these calls answer to a wrong password (the reader always calls them from a login
 * session, never with an API key), said beside the password field.
 */
export function accountFieldErrors(error: unknown, passwordField: string): Readonly<Record<string, string>> {
  if (error instanceof BaudProblem && error.status === 403) {
    return { [passwordField]: 'That is not your password.' };
  }
  return fieldErrors(error);
}
