import { useEffect, useState } from 'preact/hooks';
import { API_PREFIX } from '../../clients/typescript/src/index.js';
import type { BoardInfo, OwnProfile } from './api-types.js';
import { BoardContext } from './board-context.js';
import { useLiveEvents } from './live.js';
import { navigate, type Route, useRoute } from './router.js';
import { client, currentSession, isSysop, logOut, onSessionChange, refreshUnreadMail } from './session.js';
import { applyTheme, storedTheme, type Theme } from './theme.js';
import { useTitle } from './ui.js';
import { AccountView } from './views/account.js';
import { AreaView } from './views/area.js';
import { BlockedView } from './views/blocked.js';
import { ComposeView } from './views/compose.js';
import { ConferenceView } from './views/conference.js';
import { AuditView, DeskView } from './views/desk.js';
import { FileAreasView, FileAreaView, FileView } from './views/files.js';
import { HomeView } from './views/home.js';
import { LoginView } from './views/login.js';
import { MailboxView, MailComposeView, MailSearchView, MailView } from './views/mailbox.js';
import { MessageView } from './views/message.js';
import { nextUnread } from './views/next-unread.js';
import { ProfileView, UserView } from './views/profile.js';
import { RegisterView } from './views/register.js';
import { SearchView } from './views/search.js';
import { ThreadView } from './views/thread.js';
import { UnreadView } from './views/unread.js';

function View({ route }: { route: Route }) {
  const { params, query } = route;
  switch (route.name) {
    case 'home':
      return <HomeView />;
    case 'login':
      return <LoginView returnTo={query.get('returnTo')} />;
    case 'search':
      return <SearchView query={query} />;
    case 'unread':
      return <UnreadView />;
    case 'register':
      return <RegisterView />;
    case 'profile':
      return <ProfileView />;
    case 'account':
      return <AccountView />;
    case 'desk':
      return <DeskView query={query} />;
    case 'audit':
      return <AuditView query={query} />;
    case 'conference':
      return <ConferenceView confTag={params.confTag ?? ''} />;
    case 'area':
      return <AreaView areaTag={params.areaTag ?? ''} query={query} address={route.address} />;
    case 'post':
      return <ComposeView areaTag={params.areaTag ?? ''} replyTo={null} />;
    case 'message':
      return <MessageView uuid={params.uuid ?? ''} />;
    case 'reply':
      return <ComposeView areaTag={null} replyTo={params.uuid ?? ''} />;
    case 'thread':
      return <ThreadView uuid={params.uuid ?? ''} query={query} />;
    case 'fileAreas':
      return <FileAreasView />;
    case 'fileArea':
      return <FileAreaView areaTag={params.areaTag ?? ''} query={query} />;
    case 'file':
      return <FileView fileId={Number(params.fileId)} />;
    case 'user':
      return <UserView username={params.username ?? ''} />;
    case 'mailbox':
      return <MailboxView query={query} />;
    case 'mailCompose':
      return <MailComposeView to={query.get('to')} replyTo={null} />;
    case 'mailSearch':
      return <MailSearchView query={query} />;
    case 'blocked':
      return <BlockedView />;
    case 'mail':
      return <MailView uuid={params.uuid ?? ''} />;
    case 'mailReply':
      return <MailComposeView to={null} replyTo={params.uuid ?? ''} />;
    default:
      return <NotFound />;
  }
}

function NotFound() {
  useTitle('Not found', '');
  return (
    <section>
      <h1>Nothing here</h1>
      <p>
        This address shows nothing. Go to the <a href="/">board's front page</a>.
      </p>
    </section>
  );
}

function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const other: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      class="link-button"
      onClick={() => {
        applyTheme(other);
        setTheme(other);
      }}
    >
      {other === 'light' ? 'Light theme' : 'Dark theme'}
    </button>
  );
}

/**
 * The mailbox's link, with the unread count as a badge; its name reads "Mail 2 unread". Only the
 * word is underlined, not the space before the badge.
 */
function MailLink({ unread }: { unread: number }) {
  if (unread === 0) return <a href="/mail">Mail</a>;
  return (
    <a href="/mail" class="mail-link">
      <span class="mail-word">Mail</span> <span class="badge">{unread}</span>
      <span class="sr-only"> unread</span>
    </a>
  );
}

function Header({ info, user }: { info: BoardInfo | null; user: OwnProfile | null }) {
  return (
    <header class="topbar">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <a class="brand" href="/">
        {info?.boardName ?? 'baud'}
      </a>
      <nav aria-label="Main">
        <a href="/">Messages</a>
        <a href="/files">Files</a>
        <a href="/search">Search</a>
        {user && <a href="/unread">Unread</a>}
        {user && <MailLink unread={user.unreadMail} />}
        {isSysop(user) && <a href="/admin">Desk</a>}
      </nav>
      <div class="account">
        {user ? (
          <>
            <a href="/profile">{user.username}</a>
            <a href="/account">Account</a>
            <button type="button" class="link-button" onClick={() => void logOut().then(() => navigate('/'))}>
              Log out
            </button>
          </>
        ) : (
          <a href="/login">Log in</a>
        )}
        <ThemeToggle />
      </div>
    </header>
  );
}

/** `n` anywhere outside a form field walks the new-scan: the next unread message. */
function useNextUnreadKey(user: OwnProfile | null): void {
  useEffect(() => {
    if (user === null) return;
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.key !== 'n' || event.ctrlKey || event.metaKey || event.altKey) return;
      if (target.closest('input, textarea, select, [contenteditable]')) return;
      event.preventDefault();
      void nextUnread();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [user]);
}

export function App() {
  const route = useRoute();
  const [user, setUser] = useState(currentSession().user);
  const [info, setInfo] = useState<BoardInfo | null>(null);
  useEffect(() => onSessionChange((session) => setUser(session.user)), []);
  useEffect(() => {
    void client.api.GET(`${API_PREFIX}/system/info`).then(
      ({ data }) => setInfo(data ?? null),
      () => {},
    );
  }, []);
  useNextUnreadKey(user);
  // A mail came: the header's count goes up without a reload (only the recipient's streams see it).
  useLiveEvents((event) => {
    if (event.type === 'mail.received') refreshUnreadMail();
  }, []);
  return (
    <BoardContext.Provider value={{ info, user }}>
      <Header info={info} user={user} />
      <main id="main" tabIndex={-1}>
        {/* One view per address: moving to another page (the next message, the next list page)
            starts a fresh view, so nothing of the last page's data or state shows on the new one. */}
        <View key={route.address} route={route} />
      </main>
      <footer class="muted">
        {info ? `${info.boardName} · baud ${info.version}` : 'baud'} · <a href={`${API_PREFIX}/docs/`}>API</a>
      </footer>
    </BoardContext.Provider>
  );
}
