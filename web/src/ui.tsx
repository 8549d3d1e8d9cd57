import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { BaudProblem } from '../../clients/typescript/src/index.js';

/** What a load is doing: waiting, done with data, or failed. */
export interface Loaded<T> {
  readonly data: T | null;
  readonly error: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** The same inputs, value for value. */
function isSameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

/**
 * Runs `load` whenever `deps` change (and on `reload`); a stale answer never overwrites a newer
 * one. New inputs start from nothing (no data, no error), so a page never shows the answer to
 * other inputs; a `reload` keeps the current data until the new answer comes.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{
    deps: readonly unknown[] | null;
    data: T | null;
    error: unknown;
    loading: boolean;
  }>({
    deps: null,
    data: null,
    error: null,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let isCurrent = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => isCurrent && setState({ deps, data, error: null, loading: false }),
      (error: unknown) => isCurrent && setState({ deps, data: null, error, loading: false }),
    );
    return () => {
      isCurrent = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  // Checked while rendering, not in the effect: the first render with new inputs already shows nothing.
  if (state.deps === null || !isSameInputs(state.deps, deps)) return { data: null, error: null, loading: true, reload };
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** A problem said in plain words, with what to do next where there is something to do. */
function explain(error: unknown): string {
  if (!(error instanceof BaudProblem)) {
    return error instanceof Error ? `The board could not be reached (${error.message}).` : 'Something went wrong.';
  }
  switch (error.status) {
    case 401:
      return `${error.detail} Log in to see this.`;
    case 403:
      return `${error.detail} Your account may not do this.`;
    case 404:
      return 'There is nothing here: it was deleted, or never existed.';
    case 429:
      return `${error.detail}${error.retryAfterSeconds ? ` Try again in ${error.retryAfterSeconds} s.` : ''}`;
    default:
      return error.detail || error.title;
  }
}

export function ProblemNote({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="problem" role="alert">
      {explain(error)}
    </p>
  );
}

/** A page's body while it loads or when it failed; its children once the data is there. */
export function Loading<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.error !== null) return <ProblemNote error={state.error} />;
  if (state.data === null) return <p class="muted">Loading…</p>;
  return <>{children(state.data)}</>;
}

/** Validation failures of a 400 by field name (`/body/subject` → `subject`). */
export function fieldErrors(error: unknown): Readonly<Record<string, string>> {
  if (!(error instanceof BaudProblem) || error.status !== 400) return {};
  const byField: Record<string, string> = {};
  for (const field of error.errors) {
    const name = field.pointer.split('/').pop() ?? '';
    byField[name] ??= field.message;
  }
  return byField;
}

/** A problem that no field explains (shown above the form). */
export function formProblem(error: unknown, fields: Readonly<Record<string, string>>): unknown {
  return Object.keys(fields).length > 0 ? null : error;
}

/** What a Field's control carries: its id, and the ids of the hint and message that describe it. */
export interface FieldControl {
  readonly id: string;
  readonly 'aria-invalid': true | undefined;
  readonly 'aria-describedby': string | undefined;
}

/**
 * A labelled form control with its hint and validation message beside it. `children` draws the
 * control from the attributes it must carry, so every control is described the same way.
 */
export function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string | undefined;
  children: (control: FieldControl) => ComponentChildren;
}) {
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={error ? 'field invalid' : 'field'}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy || undefined })}
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function formatDate(iso: string | null | undefined): string {
  return iso ? DATE_FORMAT.format(new Date(iso)) : '—';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Older/newer links of a cursor-paged list. */
export function Pager({ older, newer, label }: { older: string | null; newer: string | null; label: string }) {
  if (older === null && newer === null) return null;
  return (
    <nav class="pager" aria-label={label}>
      {older ? (
        <a href={older} rel="prev">
          ← Older
        </a>
      ) : (
        <span />
      )}
      {newer ? (
        <a href={newer} rel="next">
          Newer →
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}

/** Sets the document title for the page shown. */
export function useTitle(title: string | null, boardName: string): void {
  useEffect(() => {
    document.title = title ? `${title} · ${boardName}` : boardName;
  }, [title, boardName]);
}

/** The body of a successful answer (the client throws on every problem, so none is missing). */
export function body<T>(result: { data?: T }): T {
  if (result.data === undefined) throw new Error('the board sent an empty answer');
  return result.data;
}

/**
 * A Delete button that asks first: `question` says what goes and who keeps what; `remove` does
 * it (and moves on), and a refusal is shown under the question.
 */
export function ConfirmedDelete({ question, remove }: { question: ComponentChildren; remove: () => Promise<void> }) {
  const [isAsking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!isAsking) {
    return (
      <button type="button" class="button danger" onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  }
  const confirm = async () => {
    try {
      await remove();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <fieldset class="confirm">
      <legend>{question}</legend>
      <button type="button" class="button danger" onClick={() => void confirm()}>
        Yes, delete
      </button>
      <button type="button" class="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
      <ProblemNote error={error} />
    </fieldset>
  );
}
