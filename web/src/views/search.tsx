import type { ComponentChildren } from 'preact';
import { API_PREFIX } from '../../../clients/typescript/src/index.js';
import type { FoundMessage } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href, navigate } from '../router.js';
import { client } from '../session.js';
import { body, Field, fieldErrors, formatDate, Loading, Pager, ProblemNote, useLoad, useTitle } from '../ui.js';

const FILTERS = ['q', 'areaTag', 'from', 'since', 'until', 'sort'] as const;

/** A hit of a snippet: the API writes `«` and `»` only around hits (the text's own show as `‹` `›`). */
const SNIPPET_HIT = /«([^«»]*)»/gu;

/**
 * A snippet's hits as marked text, everything else as plain text. Only a `«` closed by its `»`
 * marks anything: a stray marker (from a server before markers were escaped) shows as written
 * instead of flipping every later part between marked and not.
 */
function Snippet({ text }: { text: string }) {
  const parts: ComponentChildren[] = [];
  let position = 0;
  for (const hit of text.matchAll(SNIPPET_HIT)) {
    parts.push(text.slice(position, hit.index), <mark key={hit.index}>{hit[1]}</mark>);
    position = hit.index + hit[0].length;
  }
  parts.push(text.slice(position));
  return <p class="snippet">{parts}</p>;
}

/** One search hit as a result list shows it: its link, who and when, and the text around the hit. */
export interface FoundItem {
  readonly key: string;
  readonly link: string;
  readonly subject: string;
  readonly byline: string;
  readonly snippet: string;
}

/** A page of search hits (messages or mail); `none` is what an empty page says. */
export function FoundList({ items, none }: { items: readonly FoundItem[]; none: string }) {
  if (items.length === 0) return <p>{none}</p>;
  return (
    <ol class="results">
      {items.map((item) => (
        <li key={item.key}>
          <a href={item.link}>{item.subject}</a>
          <span class="muted"> {item.byline}</span>
          <Snippet text={item.snippet} />
        </li>
      ))}
    </ol>
  );
}

function Results({ found }: { found: readonly FoundMessage[] }) {
  return (
    <FoundList
      none="No message matches."
      items={found.map((message) => ({
        key: message.uuid,
        link: href('message', { uuid: message.uuid }),
        subject: message.subject,
        byline: `${message.fromUserName} in ${message.areaTag} · ${formatDate(message.timestamp)}`,
        snippet: message.snippet,
      }))}
    />
  );
}

/** A date field's value as the start (or end) of that day, in the reader's time zone. */
function dayBoundary(value: string | null, end: boolean): string | undefined {
  if (!value) return undefined;
  const day = new Date(`${value}T00:00:00`);
  if (end) day.setDate(day.getDate() + 1);
  return day.toISOString();
}

/**
 * Full-text search with the board's query grammar (words, "phrases", prefix*, -not, OR) and its
 * filters. Every search is an address (`/search?q=…`), so results can be bookmarked and shared.
 */
export function SearchView({ query }: { query: URLSearchParams }) {
  const { info, user } = useBoard();
  const q = query.get('q') ?? '';
  const cursor = query.get('cursor');
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? '']));
  const listName = `search:${FILTERS.map((name) => filters[name]).join('|')}`;
  const results = useLoad(async () => {
    if (q.trim() === '') return null;
    const answer = body(
      await client.api.GET(`${API_PREFIX}/messages/search`, {
        params: {
          query: {
            q,
            limit: 25,
            ...(cursor ? { cursor } : {}),
            ...(filters.areaTag ? { areaTag: filters.areaTag } : {}),
            ...(filters.from ? { from: filters.from } : {}),
            ...(filters.since ? { since: dayBoundary(filters.since, false) } : {}),
            ...(filters.until ? { until: dayBoundary(filters.until, true) } : {}),
            ...(filters.sort === 'relevance' ? { sort: 'relevance' as const } : {}),
          },
        },
      }),
    );
    if (answer.meta.nextCursor !== null) rememberStep(listName, cursor, answer.meta.nextCursor);
    return answer;
  }, [query.toString(), user?.userId]);
  useTitle(q ? `Search: ${q}` : 'Search', info?.boardName ?? 'baud');
  const errors = fieldErrors(results.error);

  const next = results.data?.meta.nextCursor ?? null;
  const back = stepBack(listName, cursor);
  const pageHref = (to: string | null) => href('search', {}, { ...filters, cursor: to || undefined });

  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const values = Object.fromEntries(FILTERS.map((name) => [name, String(form.get(name) ?? '')]));
    navigate(href('search', {}, values));
  };

  return (
    <section>
      <h1>Search messages</h1>
      <form class="search-form" onSubmit={submit}>
        <Field
          id="search-q"
          label="Words"
          error={errors.q}
          hint={'Words must all appear; "a phrase", prefix*, -exclude, this OR that.'}
        >
          {(control) => <input {...control} name="q" type="search" defaultValue={q} required />}
        </Field>
        <details open={Boolean(filters.areaTag || filters.from || filters.since || filters.until)}>
          <summary>Filters</summary>
          <div class="filters">
            <Field id="search-area" label="Area tag" error={errors.areaTag}>
              {(control) => <input {...control} name="areaTag" defaultValue={filters.areaTag} />}
            </Field>
            <Field id="search-from" label="From (user name)" error={errors.from}>
              {(control) => <input {...control} name="from" defaultValue={filters.from} />}
            </Field>
            <Field id="search-since" label="Since" error={errors.since}>
              {(control) => <input {...control} name="since" type="date" defaultValue={filters.since} />}
            </Field>
            <Field id="search-until" label="Until" error={errors.until}>
              {(control) => <input {...control} name="until" type="date" defaultValue={filters.until} />}
            </Field>
            <Field id="search-sort" label="Order" error={errors.sort}>
              {(control) => (
                // `selected`, not the select's value: set once, so a re-render keeps the reader's choice.
                <select {...control} name="sort">
                  <option value="newest" selected={filters.sort !== 'relevance'}>
                    Newest first
                  </option>
                  <option value="relevance" selected={filters.sort === 'relevance'}>
                    Best match first
                  </option>
                </select>
              )}
            </Field>
          </div>
        </details>
        <button type="submit" class="button">
          Search
        </button>
      </form>
      {Object.keys(errors).length === 0 && <ProblemNote error={results.error} />}
      {q && results.error === null && (
        <Loading state={results}>{(found) => found && <Results found={found.data} />}</Loading>
      )}
      {/* Results come newest (or best) first: the next page is the older one. */}
      <Pager label="Result pages" older={next ? pageHref(next) : null} newer={back === null ? null : pageHref(back)} />
    </section>
  );
}
