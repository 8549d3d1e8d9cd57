import { API_PREFIX, type BaudClient, BaudProblem, createBaudClient } from '../../clients/typescript/src/index.js';
import type { OwnProfile } from './api-types.js';

/** Who is reading: nobody (anonymous), or a logged-in user's own profile. */
export interface Session {
  readonly user: OwnProfile | null;
}

type Listener = (session: Session) => void;

/**
 * The reader's one connection to the board: the typed client (the only way the reader talks to
 * the server) and who is logged in. The access token lives in the client's memory only; a reload
 * gets a new one through the HttpOnly refresh cookie, so nothing secret is ever in storage.
 */
export const client: BaudClient = createBaudClient({
  baseUrl: location.origin,
  onSessionEnd: () => {
    profileLoads += 1;
    setUser(null);
  },
});

/**
 * Own-profile loads started so far. The profile is loaded again whenever the unread mail count
 * may have moved (a mail came, one was read), so loads overlap: only the last one started may set
 * the user, or an answer from before a mail was read could bring its old count back. Ending the
 * session counts too, so a load still on its way cannot log a logged-out reader back in.
 */
let profileLoads = 0;

let session: Session = { user: null };
const listeners = new Set<Listener>();

function setUser(user: OwnProfile | null): void {
  session = { user };
  for (const listener of listeners) listener(session);
}

export function currentSession(): Session {
  return session;
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function loadOwnProfile(): Promise<void> {
  profileLoads += 1;
  const load = profileLoads;
  const { data } = await client.api.GET(`${API_PREFIX}/users/me`);
  if (load === profileLoads) setUser(data ?? null);
}

/** Picks up a login that survived a reload (the refresh cookie); anonymous when there is none. */
export async function resumeSession(): Promise<void> {
  try {
    await client.refresh();
    await loadOwnProfile();
  } catch (error) {
    if (!(error instanceof BaudProblem)) throw error;
  }
}

/** Logs in; `otp` is the second factor of an account that asks one (a BaudProblem with `otpRequired` says so). */
export async function logIn(username: string, password: string, otp?: string): Promise<void> {
  await client.login(username, password, otp);
  await loadOwnProfile();
}

/** Logs out; the client ends the session even when the board cannot be reached (onSessionEnd sets the user). */
export async function logOut(): Promise<void> {
  await client.logout();
}

export async function reloadOwnProfile(): Promise<void> {
  await loadOwnProfile();
}

/**
 * Whether the user is a sysop: only to decide what to offer (the desk link, Delete on others'
 * messages); the API decides what is allowed and answers 403 to anyone else.
 */
export function isSysop(user: OwnProfile | null): boolean {
  return user?.groups.includes('sysops') ?? false;
}

/**
 * Brings the header's unread mail count (`unreadMail` of the own profile) up to date after
 * something may have moved it: a mail came, or one was read, marked unread or deleted. A failure
 * leaves the last count shown; the next change tries again.
 */
export function refreshUnreadMail(): void {
  if (session.user === null) return;
  void loadOwnProfile().catch(() => {});
}

/** Whether the user may delete a message: their own, or any when they are a sysop. */
export function mayDelete(user: OwnProfile | null, fromUserName: string): boolean {
  if (user === null) return false;
  return isSysop(user) || user.username.toLowerCase() === fromUserName.toLowerCase();
}
