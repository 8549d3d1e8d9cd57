/**
 * The terminal's menus as data: which key does what, and how the entry reads. Screens draw
 * them (menu-lines.ts) and dispatch on `action`, so a sysop's theme can rename, reorder or
 * re-key entries without touching a screen. Keys are one character, matched case-insensitively.
 */
export interface MenuItem<Action extends string> {
  readonly key: string;
  readonly label: string;
  readonly action: Action;
}

export interface Menu<Action extends string> {
  readonly title: string;
  readonly items: readonly MenuItem<Action>[];
}

export type MainAction =
  | 'newScan'
  | 'readArea'
  | 'post'
  | 'mail'
  | 'files'
  | 'search'
  | 'whoIsOnline'
  | 'lastCallers'
  | 'profile'
  | 'goodbye';

export const MAIN_MENU: Menu<MainAction> = {
  title: 'Main menu',
  items: [
    { key: 'N', label: 'New scan', action: 'newScan' },
    { key: 'R', label: 'Read an area', action: 'readArea' },
    { key: 'P', label: 'Post a message', action: 'post' },
    { key: 'M', label: 'Mail', action: 'mail' },
    { key: 'F', label: 'Files', action: 'files' },
    { key: 'S', label: 'Search messages', action: 'search' },
    { key: 'W', label: "Who's online", action: 'whoIsOnline' },
    { key: 'L', label: 'Last callers', action: 'lastCallers' },
    { key: 'U', label: 'Your profile', action: 'profile' },
    { key: 'G', label: 'Goodbye', action: 'goodbye' },
  ],
};

export type ReaderAction = 'next' | 'back' | 'reply' | 'quit';

/** The keys of a message on screen; Enter is `next` too (and pages through a long message first). */
export const READER_KEYS: Menu<ReaderAction> = {
  title: 'Message',
  items: [
    { key: 'N', label: 'Next', action: 'next' },
    { key: 'B', label: 'Back', action: 'back' },
    { key: 'R', label: 'Reply', action: 'reply' },
    { key: 'Q', label: 'Quit', action: 'quit' },
  ],
};

export type MailAction = 'write' | 'inbox' | 'sent' | 'more' | 'quit';

/** The mail screen's keys; a number read from the list opens that mail. */
export const MAIL_MENU: Menu<MailAction> = {
  title: 'Mail',
  items: [
    { key: 'W', label: 'Write', action: 'write' },
    { key: 'I', label: 'Inbox', action: 'inbox' },
    { key: 'S', label: 'Sent', action: 'sent' },
    { key: '+', label: 'More', action: 'more' },
    { key: 'Q', label: 'Quit', action: 'quit' },
  ],
};

export type MailReaderAction = 'reply' | 'delete' | 'quit';

export const MAIL_READER_KEYS: Menu<MailReaderAction> = {
  title: 'Mail',
  items: [
    { key: 'R', label: 'Reply', action: 'reply' },
    { key: 'D', label: 'Delete', action: 'delete' },
    { key: 'Q', label: 'Quit', action: 'quit' },
  ],
};

export type ListAction = 'more' | 'quit';

/** The keys of a list to pick from by number (files, search hits); a number picks. */
export const LIST_KEYS: Menu<ListAction> = {
  title: 'List',
  items: [
    { key: '+', label: 'More', action: 'more' },
    { key: 'Q', label: 'Quit', action: 'quit' },
  ],
};

/** A screen that only shows something: Enter or Q goes back. */
export const BACK_KEYS: Menu<'quit'> = { title: 'Back', items: [{ key: 'Q', label: 'Back', action: 'quit' }] };

export type ProfileAction = 'realName' | 'location' | 'affiliations' | 'webAddress' | 'quit';

export const PROFILE_MENU: Menu<ProfileAction> = {
  title: 'Your profile',
  items: [
    { key: '1', label: 'Real name', action: 'realName' },
    { key: '2', label: 'Location', action: 'location' },
    { key: '3', label: 'Affiliations', action: 'affiliations' },
    { key: '4', label: 'Web address', action: 'webAddress' },
    { key: 'Q', label: 'Quit', action: 'quit' },
  ],
};

/** The entry of `menu` that `typed` (a key, any case) chooses, if any. */
export function menuItemFor<Action extends string>(menu: Menu<Action>, typed: string): MenuItem<Action> | undefined {
  const key = typed.trim().toUpperCase();
  return menu.items.find((item) => item.key.toUpperCase() === key);
}

/**
 * What the node list shows a terminal caller doing: the API's own words where it has them
 * (src/http/session-activity.ts), so a node reads the same whichever way its caller came in.
 */
export const NODE_ACTIONS = {
  mainMenu: 'At the main menu',
  readingMessages: 'Reading messages',
  writingMessages: 'Writing messages',
  readingMail: 'Reading mail',
  writingMail: 'Writing mail',
  browsingFiles: 'Browsing files',
  boardInformation: 'Reading board information',
  viewingProfile: 'Viewing profiles',
  editingProfile: 'Editing profile',
} as const;

export type NodeAction = (typeof NODE_ACTIONS)[keyof typeof NODE_ACTIONS];
