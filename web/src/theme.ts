/** The two colour themes; dark (a terminal) unless the reader chose light. */
export type Theme = 'dark' | 'light';

const STORAGE_KEY = 'baud-theme';

// Storage may be blocked (privacy settings, sandboxed frames): the theme is then dark, or
// chosen for this page only, rather than an exception that leaves the page blank.

export function storedTheme(): Theme {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'light' ? 'light' : 'dark';
  } catch {
    return 'dark';
  }
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    // Not kept: the next page starts dark again.
  }
}

export function applyStoredTheme(): void {
  document.documentElement.dataset.theme = storedTheme();
}
