/**
 * Cursors only lead forward, so the way back is remembered: for each page reached by "next",
 * the cursor of the page before it, per list, for this tab (sessionStorage). A bookmarked page
 * opened fresh has no trail; its "back" link is then the list's first page.
 */
export function rememberStep(list: string, from: string | null, to: string): void {
  try {
    sessionStorage.setItem(`baud-trail:${list}:${to}`, from ?? '');
  } catch {
    // Storage blocked or full: the way back is then the first page, as for a bookmark.
  }
}

/**
 * The cursor of the page before `cursor`: '' for the first page, and also when the way back is
 * unknown (a bookmark, blocked storage) — the first page is then the best guess. Null only on
 * the first page itself (`cursor` null), which has nothing before it.
 */
export function stepBack(list: string, cursor: string | null): string | null {
  if (cursor === null) return null;
  try {
    return sessionStorage.getItem(`baud-trail:${list}:${cursor}`) ?? '';
  } catch {
    return '';
  }
}
