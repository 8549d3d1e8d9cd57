import { useEffect, useState } from 'preact/hooks';

/** Where the reader is: the path's pattern, its parameters, and the query. */
export interface Route {
  readonly name: RouteName;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The address itself (path and query): one page of the reader. */
  readonly address: string;
}

/**
 * Every address of the reader. The server answers the same list with the reader's page
 * (src/http/reader-routes.ts), so each one can be bookmarked and reloaded.
 */
const PATTERNS = {
  home: '/',
  login: '/login',
  register: '/register',
  search: '/search',
  unread: '/unread',
  profile: '/profile',
  account: '/account',
  desk: '/admin',
  audit: '/admin/audit',
  conference: '/conferences/:confTag',
  area: '/areas/:areaTag',
  post: '/areas/:areaTag/post',
  message: '/messages/:uuid',
  reply: '/messages/:uuid/reply',
  thread: '/threads/:uuid',
  fileAreas: '/files',
  fileArea: '/files/areas/:areaTag',
  file: '/files/:fileId',
  user: '/users/:username',
  // The fixed mail paths before `/mail/:uuid`, which would take them for a uuid.
  mailbox: '/mail',
  mailCompose: '/mail/compose',
  mailSearch: '/mail/search',
  blocked: '/mail/blocked',
  mail: '/mail/:uuid',
  mailReply: '/mail/:uuid/reply',
} as const;

export type RouteName = keyof typeof PATTERNS | 'notFound';

const COMPILED = Object.entries(PATTERNS).map(([name, pattern]) => {
  const keys: string[] = [];
  const source = pattern.replace(/:(\w+)/g, (_, key: string) => {
    keys.push(key);
    return '([^/]+)';
  });
  return { name: name as RouteName, regex: new RegExp(`^${source}/?$`), keys };
});

/** The route of an address; notFound for an unknown path or one whose parameters do not decode (a stray `%`). */
function matchRoute(pathname: string, search: string): Route {
  const query = new URLSearchParams(search);
  const address = pathname + search;
  for (const { name, regex, keys } of COMPILED) {
    const match = regex.exec(pathname === '' ? '/' : pathname);
    if (match) {
      try {
        const params = Object.fromEntries(keys.map((key, i) => [key, decodeURIComponent(match[i + 1] ?? '')]));
        return { name, params, query, address };
      } catch {
        break;
      }
    }
  }
  return { name: 'notFound', params: {}, query, address };
}

/** A path with its parameters filled in (`href('area', { areaTag: 'general' }, { cursor })`). */
export function href(
  name: keyof typeof PATTERNS,
  params: Record<string, string | number> = {},
  query: Record<string, string | number | undefined | null> = {},
): string {
  const path = PATTERNS[name].replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(String(params[key] ?? '')));
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  return search.size > 0 ? `${path}?${search}` : path;
}

const NAVIGATED = 'baud:navigated';

/** Goes to a reader address without reloading the page. */
export function navigate(to: string, { replace = false } = {}): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATED));
  window.scrollTo(0, 0);
}

/** The current route, following links, the back button and `navigate`. */
export function useRoute(): Route {
  const read = () => matchRoute(location.pathname, location.search);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return route;
}

/** Plain left clicks on the reader's own links stay in the page; everything else is the browser's. */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener('click', (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    const link = (event.target as Element).closest('a');
    if (!link || link.target || link.hasAttribute('download') || link.origin !== location.origin) return;
    if (link.pathname.startsWith('/_baud/')) return;
    event.preventDefault();
    navigate(link.pathname + link.search);
  });
}
