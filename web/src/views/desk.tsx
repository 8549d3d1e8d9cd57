import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { API_PREFIX, BaudProblem } from '../../../clients/typescript/src/index.js';
import { resetTwoFactorOf } from '../account-api.js';
import type { AuditEntry, DeskAccount } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { type Column, DataTable } from '../data-table.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href, navigate } from '../router.js';
import { client } from '../session.js';
import {
  body,
  Field,
  fieldErrors,
  formatDate,
  type Loaded,
  Loading,
  Pager,
  ProblemNote,
  useLoad,
  useTitle,
} from '../ui.js';

const STATUSES = ['pending', 'active', 'locked'] as const;
type Status = (typeof STATUSES)[number];
const PAGE_SIZE = 25;
/** The queue shows this many applications; more wait in the list below (filter "pending"). */
const QUEUE_SIZE = 50;

/** A page of a list envelope. */
interface ListOf<Item> {
  readonly data: readonly Item[];
  readonly meta: { readonly nextCursor: string | null };
}

function statusOf(value: string | null): Status | undefined {
  return STATUSES.find((status) => status === value);
}

/**
 * A refusal of the desk: the API's 403 for anyone but a sysop, said as what it means here (the
 * reader only hides the link; the API decides).
 */
function DeskProblem({ error }: { error: unknown }) {
  if (error instanceof BaudProblem && error.status === 403) {
    return (
      <p class="problem" role="alert">
        Not allowed: the desk is for the board's sysops.
      </p>
    );
  }
  return <ProblemNote error={error} />;
}

/** The desk's frame: its heading, its two pages, and a way to log in for a guest. */
function DeskPage({ title, children }: { title: string; children: ComponentChildren }) {
  const { info, user } = useBoard();
  useTitle(title, info?.boardName ?? 'baud');
  return (
    <section>
      <h1>{title}</h1>
      <nav class="tabs" aria-label="Desk">
        <a href={href('desk')} aria-current={location.pathname === href('desk') ? 'page' : undefined}>
          Accounts
        </a>
        <a href={href('audit')} aria-current={location.pathname === href('audit') ? 'page' : undefined}>
          Audit log
        </a>
      </nav>
      {user ? (
        children
      ) : (
        <p>
          <a href={href('login', {}, { returnTo: location.pathname })}>Log in</a> as a sysop to use the desk.
        </p>
      )}
    </section>
  );
}

/** One change of an account through the desk, with its busy flag and refusal. */
function useDeskAction(onChanged: () => void) {
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { error, isBusy, run: (action: () => Promise<unknown>) => void run(action) };
}

function userPath(username: string) {
  return { params: { path: { username } } };
}

function Application({ account, onChanged }: { account: DeskAccount; onChanged: () => void }) {
  const { error, isBusy, run } = useDeskAction(onChanged);
  const [isConfirming, setConfirming] = useState(false);
  const { username } = account;
  return (
    <li class="application">
      <p>
        <strong>{username}</strong>
        <span class="muted">
          {' '}
          · applied {formatDate(account.createdAt)}
          {account.email ? ` · ${account.email}` : ''}
        </span>
      </p>
      {account.note ? <p class="note">{account.note}</p> : <p class="muted">No note.</p>}
      <div class="actions">
        <button
          type="button"
          class="button"
          disabled={isBusy}
          aria-label={`Approve ${username}`}
          onClick={() =>
            run(async () => await client.api.POST(`${API_PREFIX}/admin/users/{username}/approve`, userPath(username)))
          }
        >
          Approve
        </button>
        {isConfirming ? (
          <fieldset class="confirm">
            <legend>Reject and delete the application?</legend>
            <button
              type="button"
              class="button danger"
              disabled={isBusy}
              onClick={() =>
                run(
                  async () => await client.api.POST(`${API_PREFIX}/admin/users/{username}/reject`, userPath(username)),
                )
              }
            >
              Yes, reject {username}
            </button>
            <button type="button" class="link-button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </fieldset>
        ) : (
          <button
            type="button"
            class="button danger"
            aria-label={`Reject ${username}`}
            onClick={() => setConfirming(true)}
          >
            Reject
          </button>
        )}
      </div>
      <DeskProblem error={error} />
    </li>
  );
}

function loadApplications() {
  return client.api
    .GET(`${API_PREFIX}/admin/users`, { params: { query: { status: 'pending', limit: QUEUE_SIZE } } })
    .then(body);
}

function Applications({ pending, onChanged }: { pending: Loaded<ListOf<DeskAccount>>; onChanged: () => void }) {
  return (
    <section aria-labelledby="desk-applications">
      <h2 id="desk-applications">Applications</h2>
      <Loading state={pending}>
        {(page) =>
          page.data.length === 0 ? (
            <p class="muted">Nobody is waiting.</p>
          ) : (
            <>
              <ul class="plain-list applications">
                {page.data.map((account) => (
                  <Application key={account.userId} account={account} onChanged={onChanged} />
                ))}
              </ul>
              {page.meta.nextCursor !== null && (
                <p>
                  More are waiting: <a href={href('desk', {}, { status: 'pending' })}>every application</a>.
                </p>
              )}
            </>
          )
        }
      </Loading>
    </section>
  );
}

/** Groups as typed: separated by commas or spaces. */
function groupsOf(text: string): string[] {
  return text.split(/[\s,]+/).filter((group) => group !== '');
}

/**
 * The groups of one account, edited below the list (a table cell is too narrow on a phone). The
 * field takes the caret when it opens, so the keyboard goes on where the Groups button was.
 */
function GroupsForm({ account, onDone, onCancel }: { account: DeskAccount; onDone: () => void; onCancel: () => void }) {
  const { error, isBusy, run } = useDeskAction(onDone);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), [account.userId]);
  // Every 400 here is about the one field: a bad group's name (in the detail), or its place in
  // the list (`/body/groups/1`, too long).
  const groupError =
    error instanceof BaudProblem && error.status === 400
      ? (Object.values(fieldErrors(error))[0] ?? error.detail)
      : undefined;
  const submit = (event: Event) => {
    event.preventDefault();
    const groups = groupsOf(String(new FormData(event.currentTarget as HTMLFormElement).get('groups') ?? ''));
    run(
      async () =>
        await client.api.PUT(`${API_PREFIX}/admin/users/{username}/groups`, {
          ...userPath(account.username),
          body: { groups },
        }),
    );
  };
  return (
    <form class="groups-form" onSubmit={submit}>
      <Field
        id={`groups-${account.userId}`}
        label={`Groups of ${account.username}`}
        error={groupError}
        hint="Separated by spaces or commas; the list replaces the groups."
      >
        {(control) => <input {...control} ref={field} name="groups" defaultValue={account.groups.join(' ')} />}
      </Field>
      {groupError === undefined && <DeskProblem error={error} />}
      <div class="toolbar">
        <button type="submit" class="button" disabled={isBusy}>
          Save groups
        </button>
        <button type="button" class="link-button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Turns an account's two-factor login off (a lost phone), once the sysop confirms. */
function TwoFactorReset({ username, onChanged }: { username: string; onChanged: () => void }) {
  const { error, isBusy, run } = useDeskAction(onChanged);
  const [isConfirming, setConfirming] = useState(false);
  if (!isConfirming) {
    return (
      <button
        type="button"
        class="button"
        aria-label={`Turn off two-factor login of ${username}`}
        onClick={() => setConfirming(true)}
      >
        Reset 2FA
      </button>
    );
  }
  return (
    <fieldset class="confirm">
      <legend>Turn off two-factor login of {username}?</legend>
      <button
        type="button"
        class="button danger"
        disabled={isBusy}
        onClick={() => run(() => resetTwoFactorOf(username))}
      >
        Yes, turn it off
      </button>
      <button type="button" class="link-button" onClick={() => setConfirming(false)}>
        Keep it
      </button>
      <DeskProblem error={error} />
    </fieldset>
  );
}

function AccountActions({
  account,
  isEditingGroups,
  onEditGroups,
  onChanged,
}: {
  account: DeskAccount;
  isEditingGroups: boolean;
  onEditGroups: (account: DeskAccount | null) => void;
  onChanged: () => void;
}) {
  const { user } = useBoard();
  const { error, isBusy, run } = useDeskAction(onChanged);
  const { username } = account;
  const isSelf = user?.username.toLowerCase() === username.toLowerCase();
  const change = (action: 'lock' | 'unlock') =>
    run(async () =>
      action === 'lock'
        ? await client.api.POST(`${API_PREFIX}/admin/users/{username}/lock`, userPath(username))
        : await client.api.POST(`${API_PREFIX}/admin/users/{username}/unlock`, userPath(username)),
    );
  return (
    <div class="row-actions">
      {account.status === 'locked' ? (
        <button type="button" class="button" disabled={isBusy} onClick={() => change('unlock')}>
          Unlock
        </button>
      ) : (
        // The API refuses a sysop locking themself (409): the button is not offered.
        !isSelf && (
          <button type="button" class="button danger" disabled={isBusy} onClick={() => change('lock')}>
            Lock
          </button>
        )
      )}
      {account.totpEnabled === true && <TwoFactorReset username={username} onChanged={onChanged} />}
      <button
        type="button"
        class="button"
        aria-expanded={isEditingGroups}
        aria-controls="desk-groups"
        onClick={() => onEditGroups(isEditingGroups ? null : account)}
      >
        Groups
      </button>
      <DeskProblem error={error} />
    </div>
  );
}

function accountColumns(
  editing: DeskAccount | null,
  onEditGroups: (account: DeskAccount | null) => void,
  onChanged: () => void,
): Column<DeskAccount>[] {
  return [
    {
      label: 'Name',
      cell: (account) => <a href={href('user', { username: account.username })}>{account.username}</a>,
    },
    { label: 'Status', cell: (account) => <span class={`status ${account.status}`}>{account.status}</span> },
    {
      label: 'Groups',
      cell: (account) => (account.groups.length > 0 ? account.groups.join(', ') : <span class="muted">none</span>),
    },
    { label: 'E-mail', class: 'wide-only', cell: (account) => account.email ?? '' },
    { label: 'Joined', class: 'wide-only', cell: (account) => formatDate(account.createdAt) },
    { label: 'Last login', class: 'wide-only', cell: (account) => formatDate(account.lastLoginAt) },
    {
      label: '2FA',
      class: 'wide-only',
      cell: (account) => (account.totpEnabled === undefined ? '' : account.totpEnabled ? 'on' : 'off'),
    },
    {
      label: 'Actions',
      cell: (account) => (
        <AccountActions
          account={account}
          isEditingGroups={editing?.userId === account.userId}
          onEditGroups={onEditGroups}
          onChanged={onChanged}
        />
      ),
    },
  ];
}

function AccountFilters({ status, q }: { status: Status | undefined; q: string }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    navigate(href('desk', {}, { status: String(form.get('status') ?? ''), q: String(form.get('q') ?? '').trim() }));
  };
  return (
    <form class="filters desk-filters" onSubmit={submit}>
      <Field id="desk-status" label="Status">
        {(control) => (
          <select {...control} name="status">
            <option value="" selected={status === undefined}>
              Any
            </option>
            {STATUSES.map((value) => (
              <option key={value} value={value} selected={status === value}>
                {value}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field id="desk-q" label="Name starts with">
        {(control) => <input {...control} name="q" type="search" defaultValue={q} maxLength={32} />}
      </Field>
      <div class="field filter-submit">
        <button type="submit" class="button">
          Filter
        </button>
      </div>
    </form>
  );
}

function Accounts({ query, changes, onChanged }: { query: URLSearchParams; changes: number; onChanged: () => void }) {
  const status = statusOf(query.get('status'));
  const q = query.get('q') ?? '';
  const cursor = query.get('cursor');
  const listName = `desk:${status ?? ''}:${q.toLowerCase()}`;
  const accounts = useLoad(async () => {
    const page = body(
      await client.api.GET(`${API_PREFIX}/admin/users`, {
        params: {
          query: {
            limit: PAGE_SIZE,
            ...(status ? { status } : {}),
            ...(q ? { q } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    if (page.meta.nextCursor !== null) rememberStep(listName, cursor, page.meta.nextCursor);
    return page;
  }, [query.toString()]);
  useEffect(() => {
    if (changes > 0) accounts.reload();
  }, [changes]);
  const [editing, setEditing] = useState<DeskAccount | null>(null);
  const next = accounts.data?.meta.nextCursor ?? null;
  const back = stepBack(listName, cursor);
  const pageHref = (to: string | null) => href('desk', {}, { status, q, cursor: to || undefined });
  return (
    <section aria-labelledby="desk-accounts">
      <h2 id="desk-accounts">Accounts</h2>
      <AccountFilters status={status} q={q} />
      {accounts.error !== null ? (
        <DeskProblem error={accounts.error} />
      ) : (
        <Loading state={accounts}>
          {(page) =>
            page.data.length === 0 ? (
              <p>No account matches.</p>
            ) : (
              <DataTable
                rows={page.data}
                columns={accountColumns(editing, setEditing, onChanged)}
                rowKey={(account) => account.userId}
              />
            )
          }
        </Loading>
      )}
      <div id="desk-groups">
        {editing && (
          <GroupsForm
            key={editing.userId}
            account={editing}
            onDone={() => {
              setEditing(null);
              onChanged();
            }}
            onCancel={() => setEditing(null)}
          />
        )}
      </div>
      {/* By userId, first joined first: the next page holds newer accounts. */}
      <Pager label="Account pages" older={back === null ? null : pageHref(back)} newer={next ? pageHref(next) : null} />
    </section>
  );
}

/** The sysop's desk (community.md "The sysop's desk"): the applications waiting, and every account. */
export function DeskView({ query }: { query: URLSearchParams }) {
  // Any change reloads both lists (an approval moves an account from the queue into the list),
  // each keeping what it shows until the new answer comes.
  const [changes, setChanges] = useState(0);
  const { user } = useBoard();
  const pending = useLoad(loadApplications, [user?.userId]);
  const onChanged = () => {
    pending.reload();
    setChanges((value) => value + 1);
  };
  return (
    <DeskPage title="Sysop's desk">
      {/* The queue answers first whether the caller may use the desk at all: a 403 is said once. */}
      {pending.error !== null ? (
        <DeskProblem error={pending.error} />
      ) : (
        <>
          <Applications pending={pending} onChanged={onChanged} />
          <Accounts query={query} changes={changes} onChanged={onChanged} />
        </>
      )}
    </DeskPage>
  );
}

const AUDIT_COLUMNS: Column<AuditEntry>[] = [
  { label: 'When', cell: (entry) => formatDate(entry.at) },
  {
    label: 'Who',
    cell: (entry) =>
      entry.actor === null ? (
        <span class="muted">console</span>
      ) : (
        <a href={href('user', { username: entry.actor })}>{entry.actor}</a>
      ),
  },
  { label: 'What', class: 'nowrap', cell: (entry) => entry.action },
  { label: 'Account', cell: (entry) => <a href={href('user', { username: entry.target })}>{entry.target}</a> },
  { label: 'Detail', class: 'wide-only', cell: (entry) => entry.detail },
];

/** Every change made to an account, newest first, paged. */
export function AuditView({ query }: { query: URLSearchParams }) {
  const cursor = query.get('cursor');
  const entries = useLoad(async () => {
    const page = body(
      await client.api.GET(`${API_PREFIX}/admin/audit`, {
        params: { query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      }),
    );
    if (page.meta.nextCursor !== null) rememberStep('audit', cursor, page.meta.nextCursor);
    return page;
  }, [cursor]);
  const next = entries.data?.meta.nextCursor ?? null;
  const back = stepBack('audit', cursor);
  const pageHref = (to: string | null) => href('audit', {}, { cursor: to || undefined });
  return (
    <DeskPage title="Audit log">
      {entries.error !== null ? (
        <DeskProblem error={entries.error} />
      ) : (
        <Loading state={entries}>
          {(page) =>
            page.data.length === 0 ? (
              <p>Nothing has been changed yet.</p>
            ) : (
              <DataTable rows={page.data} columns={AUDIT_COLUMNS} rowKey={(entry) => entry.id} />
            )
          }
        </Loading>
      )}
      <Pager label="Audit pages" older={next ? pageHref(next) : null} newer={back === null ? null : pageHref(back)} />
    </DeskPage>
  );
}
