/** The auth feature's public surface; other features and the app import only this. */
export { AuthButtons } from './components/auth-buttons';
export { AuthDialogs } from './components/auth-dialogs';
export { UserAvatar, UserMenu } from './components/user-menu';
export {
  closeAuthDialog,
  openAuthDialog,
  useAuthDialogStore,
  type AuthDialog,
} from './stores/auth-dialog-store';
export {
  selectAuthStatus,
  selectIsAuthenticated,
  selectSettings,
  selectUser,
  useAuthStore,
  type AuthState,
  type AuthStatus,
} from './stores/auth-store';
export { authFrames } from './stores/auth-frames';
