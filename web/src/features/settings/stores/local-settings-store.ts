/**
 * Settings the server does not keep (SPEC §3: theme, font size and notifications are local
 * only). Persisted in localStorage and applied to <html> as `data-theme` and
 * `data-font-size`, which the CSS variables in src/styles/global.css follow.
 */
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';

export const THEMES = ['auto', 'light', 'dark'] as const;
export const FONT_SIZES = ['small', 'medium', 'large'] as const;
export type Theme = (typeof THEMES)[number];
export type FontSize = (typeof FONT_SIZES)[number];

export interface LocalSettings {
  theme: Theme;
  fontSize: FontSize;
  notifications: boolean;
}

interface LocalSettingsActions {
  setTheme: (theme: Theme) => void;
  setFontSize: (fontSize: FontSize) => void;
  setNotifications: (enabled: boolean) => void;
}

/** SPEC §3 defaults. */
export const DEFAULT_LOCAL_SETTINGS: LocalSettings = { theme: 'light', fontSize: 'medium', notifications: true };

export const LOCAL_SETTINGS_KEY = 'local-settings';

export const useLocalSettingsStore = create<LocalSettings & LocalSettingsActions>()(
  persist(
    (set) => ({
      ...DEFAULT_LOCAL_SETTINGS,
      setTheme: (theme) => set({ theme }),
      setFontSize: (fontSize) => set({ fontSize }),
      setNotifications: (notifications) => set({ notifications }),
    }),
    {
      name: LOCAL_SETTINGS_KEY,
      version: 1,
      storage: createJSONStorage(() => localStorage),
      partialize: ({ theme, fontSize, notifications }) => ({ theme, fontSize, notifications }),
      // A hand-edited or outdated value falls back to the default instead of breaking CSS.
      merge: (persisted, current) => {
        const saved = (persisted ?? {}) as Partial<LocalSettings>;
        return {
          ...current,
          theme: THEMES.includes(saved.theme as Theme) ? (saved.theme as Theme) : current.theme,
          fontSize: FONT_SIZES.includes(saved.fontSize as FontSize) ? (saved.fontSize as FontSize) : current.fontSize,
          notifications: typeof saved.notifications === 'boolean' ? saved.notifications : current.notifications,
        };
      },
    },
  ),
);

const THEME_COLORS: Record<'light' | 'dark', string> = { light: '#3b5bdb', dark: '#121318' };

export function applyAppearance({ theme, fontSize }: Pick<LocalSettings, 'theme' | 'fontSize'>): void {
  const root = document.documentElement;
  root.dataset.theme = theme;
  root.dataset.fontSize = fontSize;
  const dark = theme === 'dark' || (theme === 'auto' && window.matchMedia?.('(prefers-color-scheme: dark)').matches);
  document.querySelector('meta[name="theme-color"]')?.setAttribute('content', THEME_COLORS[dark ? 'dark' : 'light']);
}

/**
 * Applies the stored appearance now (before the first render, so there is no flash of the
 * wrong theme) and on every change, in this tab or another.
 */
export function initAppearance(): () => void {
  const store = useLocalSettingsStore;
  applyAppearance(store.getState());
  const unsubscribe = store.subscribe(applyAppearance);
  const onStorage = (event: StorageEvent) => {
    if (event.key === LOCAL_SETTINGS_KEY) void store.persist.rehydrate();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    unsubscribe();
    window.removeEventListener('storage', onStorage);
  };
}
