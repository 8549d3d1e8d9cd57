import { useState } from 'preact/hooks';
import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import { useBoard } from '../board-context.js';
import { href, navigate } from '../router.js';
import { client } from '../session.js';
import { body, Field, fieldErrors, formProblem, Loading, ProblemNote, useLoad, useTitle } from '../ui.js';

/** `Re: subject`, once however long the chain of replies (and within the 72-character limit). */
export function replySubject(subject: string): string {
  return `Re: ${subject.replace(/^(re:\s*)+/i, '')}`.slice(0, 72);
}

/**
 * The original's text, each line quoted with its author's initials, as BBS readers do (for a
 * message's reply and a mail's alike).
 */
export function quoteOf(author: string, text: string): string {
  const initials =
    author
      .split(/[\s_.-]+/)
      .map((part) => part[0] ?? '')
      .join('')
      .toUpperCase() || '>';
  const quoted = text
    .replace(/\s+$/, '')
    .split(/\r?\n/)
    .map((line) => (line === '' ? '' : ` ${initials}> ${line}`))
    .join('\n');
  return `${author} wrote:\n${quoted}\n\n`;
}

interface Draft {
  readonly areaTag: string;
  readonly toUserName: string;
  readonly subject: string;
  readonly message: string;
  readonly replyToMessageId?: number;
}

/**
 * A one-line field of the form. `defaultValue`, not `value`: the draft only starts the field, and a
 * re-render (after a refused post) must keep what the user typed.
 */
function DraftField({
  name,
  label,
  initial,
  error,
  maxLength,
}: {
  name: 'toUserName' | 'subject';
  label: string;
  initial: string;
  error: string | undefined;
  maxLength?: number;
}) {
  return (
    <Field id={`compose-${name}`} label={label} error={error}>
      {(control) => <input {...control} name={name} defaultValue={initial} maxLength={maxLength} />}
    </Field>
  );
}

function ComposeForm({ draft, heading }: { draft: Draft; heading: string }) {
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const errors = fieldErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      const posted = body(
        await client.api.POST(`${API_PREFIX}/messages/areas/{areaTag}/messages`, {
          params: { path: { areaTag: draft.areaTag } },
          body: {
            toUserName: String(form.get('toUserName') ?? ''),
            subject: String(form.get('subject') ?? ''),
            message: String(form.get('message') ?? ''),
            ...(draft.replyToMessageId ? { replyToMessageId: draft.replyToMessageId } : {}),
          },
        }),
      );
      navigate(href('message', { uuid: posted.uuid }), { replace: true });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>{heading}</h1>
      <p class="muted">
        In <a href={href('area', { areaTag: draft.areaTag })}>{draft.areaTag}</a>
      </p>
      <form class="compose" onSubmit={(event) => void submit(event)} noValidate>
        <DraftField name="toUserName" label="To" initial={draft.toUserName} error={errors.toUserName} maxLength={36} />
        <DraftField name="subject" label="Subject" initial={draft.subject} error={errors.subject} />
        <Field id="compose-message" label="Message" error={errors.message}>
          {(control) => <textarea {...control} name="message" rows={16} defaultValue={draft.message} />}
        </Field>
        <ProblemNote error={formProblem(error, errors)} />
        <button type="submit" class="button" disabled={isBusy}>
          {isBusy ? 'Posting…' : 'Post'}
        </button>
      </form>
    </section>
  );
}

/** A new message in an area, or (with `replyTo`) a reply that quotes the message it answers. */
export function ComposeView({ areaTag, replyTo }: { areaTag: string | null; replyTo: string | null }) {
  const { info, user } = useBoard();
  const original = useLoad(async () => {
    if (replyTo === null) return { found: null };
    const found = body(
      await client.api.GET(`${API_PREFIX}/messages/{uuid}`, {
        params: { path: { uuid: replyTo }, query: { stripAnsi: 'true' } },
      }),
    );
    return { found };
  }, [replyTo]);
  useTitle(replyTo ? 'Reply' : 'New message', info?.boardName ?? 'baud');
  if (user === null) {
    const here = replyTo ? href('reply', { uuid: replyTo }) : href('post', { areaTag: areaTag ?? '' });
    return (
      <section>
        <h1>{replyTo ? 'Reply' : 'New message'}</h1>
        <p>
          <a href={href('login', {}, { returnTo: here })}>Log in</a> to post.
        </p>
      </section>
    );
  }
  return (
    <Loading state={original}>
      {({ found }) =>
        found ? (
          <ComposeForm
            heading={`Reply to ${found.fromUserName}`}
            draft={{
              areaTag: found.areaTag,
              toUserName: found.fromUserName,
              subject: replySubject(found.subject),
              message: quoteOf(found.fromUserName, found.body),
              replyToMessageId: found.messageId,
            }}
          />
        ) : (
          <ComposeForm
            heading="New message"
            draft={{ areaTag: areaTag ?? '', toUserName: 'All', subject: '', message: '' }}
          />
        )
      }
    </Loading>
  );
}
