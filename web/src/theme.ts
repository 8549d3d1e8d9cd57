/** The two colour themes; dark (a terminal) unless the reader chose light. */
export type Theme = 'dark' | 'light';

const STORAGE_KEY = 'baud-theme';

export function storedTheme(): Theme {
  return localStorage.getItem(STORAGE_KEY) === 'light' ? 'light' : 'dark';
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(STORAGE_KEY, theme);
}

export function applyStoredTheme(): void {
  document.documentElement.dataset.theme = storedTheme();
}
