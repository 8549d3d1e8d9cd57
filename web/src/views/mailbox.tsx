import { useEffect, useState } from 'preact/hooks';
import { API_PREFIX, BaudProblem } from '../../../clients/typescript/src/index.js';
import type { FoundMail, MailDetail, MailSummary, OwnProfile } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { type Column, DataTable } from '../data-table.js';
import { useLiveEvents } from '../live.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href, navigate } from '../router.js';
import { client, refreshUnreadMail } from '../session.js';
import { AnsiText } from '../text/AnsiText.js';
import { TextModeToggle, useTextMode } from '../text/text-mode.js';
import {
  body,
  ConfirmedDelete,
  Field,
  fieldErrors,
  formatDate,
  Loading,
  Pager,
  ProblemNote,
  useLoad,
  useTitle,
} from '../ui.js';
import { quoteOf, replySubject } from './compose.js';
import { FoundList } from './search.js';
import '../styles/mail.css';

type Box = 'inbox' | 'sent';
type MailPlace = Box | 'search' | 'blocked' | 'compose';

const PAGE_SIZE = 25;

function isSameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The mailbox's own pages, the current one marked, and the way to write a mail. */
export function MailTabs({ current }: { current: MailPlace }) {
  const tabs: Array<[Exclude<MailPlace, 'compose'>, string, string]> = [
    ['inbox', 'Inbox', href('mailbox')],
    ['sent', 'Sent', href('mailbox', {}, { box: 'sent' })],
    ['search', 'Search mail', href('mailSearch')],
    ['blocked', 'Blocked users', href('blocked')],
  ];
  return (
    <div class="mail-bar">
      <nav class="mail-tabs" aria-label="Mailbox">
        {tabs.map(([place, label, to]) => (
          <a key={place} href={to} aria-current={place === current ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {current !== 'compose' && (
        <a class="button" href={href('mailCompose')}>
          Write a mail
        </a>
      )}
    </div>
  );
}

/** A mailbox page for a guest: what it is, and the way in. */
function LogInFirst({ heading, here }: { heading: string; here: string }) {
  return (
    <section>
      <h1>{heading}</h1>
      <p>
        <a href={href('login', {}, { returnTo: here })}>Log in</a> to read and write private mail.
      </p>
    </section>
  );
}

function boxColumns(box: Box): Column<MailSummary>[] {
  const party: Column<MailSummary> =
    box === 'inbox' ? { label: 'From', cell: (mail) => mail.from } : { label: 'To', cell: (mail) => mail.to };
  return [
    party,
    {
      label: 'Subject',
      cell: (mail) => (
        <>
          <a href={href('mail', { uuid: mail.uuid })}>{mail.subject}</a>
          {/* The sender's copy is always read: only the inbox has anything new. */}
          {box === 'inbox' && !mail.read && <span class="badge new">new</span>}
        </>
      ),
    },
    { label: 'Date', cell: (mail) => formatDate(mail.timestamp) },
  ];
}

/**
 * The inbox or the sent box, newest first, a page at a time; unread mail marked. `?box=sent`
 * shows the sent box, `?unread=1` only the inbox's unread mail. The inbox's first page takes in
 * a mail the moment it comes (the event stream's `mail.received`).
 */
export function MailboxView({ query }: { query: URLSearchParams }) {
  const { info, user } = useBoard();
  const box: Box = query.get('box') === 'sent' ? 'sent' : 'inbox';
  const isUnreadOnly = box === 'inbox' && query.get('unread') === '1';
  const cursor = query.get('cursor');
  const listName = `mail:${box}:${isUnreadOnly ? 'unread' : 'all'}`;
  const list = useLoad(async () => {
    if (user === null) return null;
    const answer = body(
      await client.api.GET(`${API_PREFIX}/mail`, {
        params: {
          query: {
            box,
            limit: PAGE_SIZE,
            ...(isUnreadOnly ? { unread: 'true' as const } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    if (answer.meta.nextCursor !== null) rememberStep(listName, cursor, answer.meta.nextCursor);
    return answer;
  }, [query.toString(), user?.userId]);
  useLiveEvents(
    (event) => {
      if (event.type === 'mail.received' && box === 'inbox' && cursor === null) list.reload();
    },
    [box, cursor, list.reload],
  );
  const heading = box === 'inbox' ? 'Inbox' : 'Sent mail';
  useTitle(heading, info?.boardName ?? 'baud');
  if (user === null) return <LogInFirst heading="Mail" here={href('mailbox', {}, { box })} />;

  const pageHref = (to: string | null) =>
    href('mailbox', {}, { box: box === 'sent' ? 'sent' : undefined, unread: isUnreadOnly ? 1 : undefined, cursor: to });
  const next = list.data?.meta.nextCursor ?? null;
  const back = stepBack(listName, cursor);
  return (
    <section>
      <h1>{heading}</h1>
      <MailTabs current={box} />
      {box === 'inbox' && (
        <p class="toolbar">
          {isUnreadOnly ? (
            <a href={href('mailbox')}>All mail</a>
          ) : (
            <a href={href('mailbox', {}, { unread: 1 })}>
              Unread only{user.unreadMail > 0 ? ` (${user.unreadMail})` : ''}
            </a>
          )}
        </p>
      )}
      <Loading state={list}>
        {(page) =>
          page === null || page.data.length === 0 ? (
            <p class="muted">
              {box === 'sent' ? 'You have sent no mail.' : isUnreadOnly ? 'No unread mail.' : 'Your inbox is empty.'}
            </p>
          ) : (
            <DataTable
              rows={page.data}
              columns={boxColumns(box)}
              rowKey={(mail) => mail.uuid}
              rowClass={(mail) => (box === 'inbox' && !mail.read ? 'unread' : '')}
              tableClass="list mail-list"
            />
          )
        }
      </Loading>
      {/* Newest first: the next page is the older one. */}
      <Pager label="Mail pages" older={next ? pageHref(next) : null} newer={back === null ? null : pageHref(back)} />
    </section>
  );
}

/** Marks a mail read or unread (the recipient's flag), then brings the header's count up to date. */
async function setRead(uuid: string, read: boolean): Promise<void> {
  await client.api.PATCH(`${API_PREFIX}/mail/{uuid}`, { params: { path: { uuid } }, body: { read } });
  refreshUnreadMail();
}

function DeleteMailButton({ mail, user }: { mail: MailDetail; user: OwnProfile }) {
  const isSender = isSameName(mail.from, user.username);
  return (
    <ConfirmedDelete
      question={`Delete this mail from your mailbox? ${isSender ? mail.to : mail.from} keeps their copy.`}
      remove={async () => {
        await client.api.DELETE(`${API_PREFIX}/mail/{uuid}`, { params: { path: { uuid: mail.uuid } } });
        refreshUnreadMail();
        navigate(href('mailbox', {}, { box: isSender && !isSameName(mail.to, user.username) ? 'sent' : undefined }), {
          replace: true,
        });
      }}
    />
  );
}

function MarkUnreadButton({ uuid }: { uuid: string }) {
  const [error, setError] = useState<unknown>(null);
  const markUnread = async () => {
    try {
      await setRead(uuid, false);
      navigate(href('mailbox'));
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <>
      <button type="button" class="button" onClick={() => void markUnread()}>
        Mark unread
      </button>
      <ProblemNote error={error} />
    </>
  );
}

function MailHeader({ mail }: { mail: MailDetail }) {
  return (
    <dl class="message-header">
      <dt>From</dt>
      <dd>
        <a href={href('user', { username: mail.from })}>{mail.from}</a>
      </dd>
      <dt>To</dt>
      <dd>
        <a href={href('user', { username: mail.to })}>{mail.to}</a>
      </dd>
      <dt>Date</dt>
      <dd>
        <time dateTime={mail.timestamp}>{formatDate(mail.timestamp)}</time>
      </dd>
      {mail.replyToUuid !== null && (
        <>
          <dt>In reply to</dt>
          <dd>
            <a href={href('mail', { uuid: mail.replyToUuid })}>the mail it answers</a>
          </dd>
        </>
      )}
    </dl>
  );
}

/**
 * One mail of the caller's. Reading does not mark a mail read in the API (GET leaves the flag
 * alone, so a client may look without "opening"): the reader opens it, so it sends the PATCH
 * itself when the recipient sees an unread mail, and then updates the header's count.
 */
export function MailView({ uuid }: { uuid: string }) {
  const { info, user } = useBoard();
  const [mode, setMode] = useTextMode();
  const [markError, setMarkError] = useState<unknown>(null);
  const mail = useLoad(async () => {
    if (user === null) return null;
    return body(
      await client.api.GET(`${API_PREFIX}/mail/{uuid}`, {
        params: { path: { uuid }, query: { stripAnsi: 'false' } },
      }),
    );
  }, [uuid, user?.userId]);
  const read = mail.data;
  const isRecipient = user !== null && read !== null && isSameName(read.to, user.username);
  useEffect(() => {
    if (read === null || !isRecipient || read.read) return;
    setRead(read.uuid, true).catch(setMarkError);
  }, [read, isRecipient]);
  useTitle(read?.subject ?? 'Mail', info?.boardName ?? 'baud');
  if (user === null) return <LogInFirst heading="Mail" here={href('mail', { uuid })} />;
  return (
    <Loading state={mail}>
      {(detail) =>
        detail && (
          <article class="message">
            <MailTabs current={isSameName(detail.from, user.username) && !isRecipient ? 'sent' : 'inbox'} />
            <h1>{detail.subject}</h1>
            <MailHeader mail={detail} />
            <div class="toolbar">
              <TextModeToggle mode={mode} onChange={setMode} />
            </div>
            <AnsiText text={detail.body} mode={mode} />
            <ProblemNote error={markError} />
            <div class="actions">
              <a class="button" href={href('mailReply', { uuid: detail.uuid })}>
                Reply
              </a>
              {isRecipient && <MarkUnreadButton uuid={detail.uuid} />}
              <DeleteMailButton mail={detail} user={user} />
            </div>
          </article>
        )
      }
    </Loading>
  );
}

interface MailDraft {
  readonly to: string;
  readonly subject: string;
  readonly body: string;
  readonly replyToUuid?: string;
}

const DRAFT_FIELDS = ['to', 'subject', 'body'] as const;

/**
 * What went wrong with a mail, by field where a field explains it: the board's 400 names its
 * fields, and the recipient's refusals (no such member, 404; blocked, 403) belong beside "To".
 */
function sendErrors(error: unknown): Readonly<Record<string, string>> {
  if (
    error instanceof BaudProblem &&
    (error.code === 'mail.recipient-not-found' || error.code === 'mail.sender-blocked')
  ) {
    return { to: error.detail };
  }
  const byField = fieldErrors(error);
  return Object.fromEntries(DRAFT_FIELDS.flatMap((name) => (byField[name] ? [[name, byField[name]]] : [])));
}

function MailForm({ draft, heading }: { draft: MailDraft; heading: string }) {
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const errors = sendErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      const sent = body(
        await client.api.POST(`${API_PREFIX}/mail`, {
          body: {
            to: String(form.get('to') ?? '').trim(),
            subject: String(form.get('subject') ?? ''),
            body: String(form.get('body') ?? ''),
            ...(draft.replyToUuid ? { replyToUuid: draft.replyToUuid } : {}),
          },
        }),
      );
      navigate(href('mail', { uuid: sent.uuid }), { replace: true });
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>{heading}</h1>
      <MailTabs current="compose" />
      {/* defaultValue, not value: the draft only starts each field, and a refused send keeps what was typed. */}
      <form class="compose" onSubmit={(event) => void submit(event)} noValidate>
        <Field id="mail-to" label="To" error={errors.to} hint="A member's user name.">
          {(control) => <input {...control} name="to" defaultValue={draft.to} maxLength={36} autoComplete="off" />}
        </Field>
        <Field id="mail-subject" label="Subject" error={errors.subject}>
          {(control) => <input {...control} name="subject" defaultValue={draft.subject} maxLength={72} />}
        </Field>
        <Field id="mail-body" label="Message" error={errors.body}>
          {(control) => <textarea {...control} name="body" rows={14} defaultValue={draft.body} />}
        </Field>
        {/* Anything no field explains (429 with its wait, a reply to a mail gone meanwhile) shows here. */}
        <ProblemNote error={Object.keys(errors).length > 0 ? null : error} />
        <button type="submit" class="button" disabled={isBusy}>
          {isBusy ? 'Sending…' : 'Send'}
        </button>
      </form>
    </section>
  );
}

/**
 * A new mail (`?to=` fills the recipient), or a reply to one of the caller's mails that quotes
 * it and goes to the other party: the sender, or the recipient when answering one's own mail.
 */
export function MailComposeView({ to, replyTo }: { to: string | null; replyTo: string | null }) {
  const { info, user } = useBoard();
  const original = useLoad(async () => {
    if (replyTo === null || user === null) return { found: null };
    const found = body(
      await client.api.GET(`${API_PREFIX}/mail/{uuid}`, {
        params: { path: { uuid: replyTo }, query: { stripAnsi: 'true' } },
      }),
    );
    return { found };
  }, [replyTo, user?.userId]);
  useTitle(replyTo ? 'Reply' : 'Write a mail', info?.boardName ?? 'baud');
  if (user === null) {
    const here = replyTo ? href('mailReply', { uuid: replyTo }) : href('mailCompose', {}, { to });
    return <LogInFirst heading={replyTo ? 'Reply' : 'Write a mail'} here={here} />;
  }
  return (
    <Loading state={original}>
      {({ found }) =>
        found ? (
          <MailForm
            heading={`Reply to ${isSameName(found.from, user.username) ? found.to : found.from}`}
            draft={{
              to: isSameName(found.from, user.username) ? found.to : found.from,
              subject: replySubject(found.subject),
              body: quoteOf(found.from, found.body),
              replyToUuid: found.uuid,
            }}
          />
        ) : (
          <MailForm heading="Write a mail" draft={{ to: to ?? '', subject: '', body: '' }} />
        )
      }
    </Loading>
  );
}

function FoundMails({ found }: { found: readonly FoundMail[] }) {
  return (
    <FoundList
      none="No mail matches."
      items={found.map((mail) => ({
        key: mail.uuid,
        link: href('mail', { uuid: mail.uuid }),
        subject: mail.subject,
        byline: `${mail.from} to ${mail.to} · ${formatDate(mail.timestamp)}`,
        snippet: mail.snippet,
      }))}
    />
  );
}

/** The caller's own mail (both boxes) searched with the board's query grammar; each search is an address. */
export function MailSearchView({ query }: { query: URLSearchParams }) {
  const { info, user } = useBoard();
  const q = query.get('q') ?? '';
  const cursor = query.get('cursor');
  const listName = `mail-search:${q}`;
  const results = useLoad(async () => {
    if (q.trim() === '' || user === null) return null;
    const answer = body(
      await client.api.GET(`${API_PREFIX}/mail/search`, {
        params: { query: { q, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      }),
    );
    if (answer.meta.nextCursor !== null) rememberStep(listName, cursor, answer.meta.nextCursor);
    return answer;
  }, [query.toString(), user?.userId]);
  useTitle(q ? `Mail search: ${q}` : 'Search mail', info?.boardName ?? 'baud');
  if (user === null) return <LogInFirst heading="Search mail" here={href('mailSearch', {}, { q })} />;
  const errors = fieldErrors(results.error);
  const next = results.data?.meta.nextCursor ?? null;
  const back = stepBack(listName, cursor);
  const pageHref = (to: string | null) => href('mailSearch', {}, { q, cursor: to });
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    navigate(href('mailSearch', {}, { q: String(form.get('q') ?? '') }));
  };
  return (
    <section>
      <h1>Search mail</h1>
      <MailTabs current="search" />
      <form class="search-form" onSubmit={submit}>
        <Field
          id="mail-search-q"
          label="Words"
          error={errors.q}
          hint={'Your own mail only. Words must all appear; "a phrase", prefix*, -exclude, this OR that.'}
        >
          {(control) => <input {...control} name="q" type="search" defaultValue={q} required />}
        </Field>
        <button type="submit" class="button">
          Search
        </button>
      </form>
      {Object.keys(errors).length === 0 && <ProblemNote error={results.error} />}
      {q && results.error === null && (
        <Loading state={results}>{(found) => found && <FoundMails found={found.data} />}</Loading>
      )}
      <Pager label="Result pages" older={next ? pageHref(next) : null} newer={back === null ? null : pageHref(back)} />
    </section>
  );
}
