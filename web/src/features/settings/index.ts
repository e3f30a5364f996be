export {
  applyAppearance,
  DEFAULT_LOCAL_SETTINGS,
  FONT_SIZES,
  initAppearance,
  THEMES,
  useLocalSettingsStore,
  type FontSize,
  type LocalSettings,
  type Theme,
} from './stores/local-settings-store';
