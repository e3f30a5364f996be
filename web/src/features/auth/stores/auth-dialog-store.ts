import { create } from 'zustand';

/** The account dialogs; at most one is open. */
export type AuthDialog = 'login' | 'register' | 'verify' | 'forgot' | 'reset';

interface AuthDialogState {
  dialog: AuthDialog | null;
  /** A short note shown at the top of the opened dialog, e.g. "Your session has ended". */
  notice: string | null;
  open: (dialog: AuthDialog, notice?: string) => void;
  /** The note has been read: e.g. a login attempt answers for itself. */
  clearNotice: () => void;
  close: () => void;
}

export const useAuthDialogStore = create<AuthDialogState>()((set) => ({
  dialog: null,
  notice: null,
  open: (dialog, notice) => set({ dialog, notice: notice ?? null }),
  clearNotice: () => set({ notice: null }),
  close: () => set({ dialog: null, notice: null }),
}));

export const openAuthDialog = (dialog: AuthDialog, notice?: string) =>
  useAuthDialogStore.getState().open(dialog, notice);
export const closeAuthDialog = () => useAuthDialogStore.getState().close();
