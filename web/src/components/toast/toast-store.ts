import { create } from 'zustand';

export type ToastType = 'positive' | 'negative' | 'info' | 'warning';
export type ToastPosition = 'top' | 'bottom';

export interface Toast {
  id: number;
  type: ToastType;
  message: string;
  /** Milliseconds before it hides itself; 0 keeps it until dismissed. */
  timeout: number;
  position: ToastPosition;
}

export type ToastInput = Pick<Toast, 'message'> & Partial<Omit<Toast, 'id' | 'message'>>;

/** SPEC §9: notifications show 5000 ms at the top unless a caller says otherwise. */
export const DEFAULT_TOAST_TIMEOUT = 5000;
const MAX_TOASTS = 4;

interface ToastState {
  toasts: Toast[];
  show: (input: ToastInput) => number;
  dismiss: (id: number) => void;
  clear: () => void;
}

let nextId = 1;
const timers = new Map<number, ReturnType<typeof setTimeout>>();

export const useToastStore = create<ToastState>()((set, get) => ({
  toasts: [],
  show: (input) => {
    const toast: Toast = {
      id: nextId++,
      type: input.type ?? 'info',
      message: input.message,
      timeout: input.timeout ?? DEFAULT_TOAST_TIMEOUT,
      position: input.position ?? 'top',
    };
    // The same text twice in a row (e.g. several calls failing on one outage) shows once.
    const duplicate = get().toasts.find((t) => t.message === toast.message && t.type === toast.type);
    if (duplicate) get().dismiss(duplicate.id);
    set((state) => ({ toasts: [...state.toasts, toast].slice(-MAX_TOASTS) }));
    if (toast.timeout > 0) {
      timers.set(
        toast.id,
        setTimeout(() => get().dismiss(toast.id), toast.timeout),
      );
    }
    return toast.id;
  },
  dismiss: (id) => {
    clearTimeout(timers.get(id));
    timers.delete(id);
    set((state) => ({ toasts: state.toasts.filter((t) => t.id !== id) }));
  },
  clear: () => {
    timers.forEach(clearTimeout);
    timers.clear();
    set({ toasts: [] });
  },
}));

/** Shows a toast from anywhere, React or not. */
export const toast = {
  show: (input: ToastInput) => useToastStore.getState().show(input),
  negative: (message: string, options?: Omit<ToastInput, 'message' | 'type'>) =>
    useToastStore.getState().show({ ...options, message, type: 'negative' }),
  positive: (message: string, options?: Omit<ToastInput, 'message' | 'type'>) =>
    useToastStore.getState().show({ ...options, message, type: 'positive' }),
  info: (message: string, options?: Omit<ToastInput, 'message' | 'type'>) =>
    useToastStore.getState().show({ ...options, message, type: 'info' }),
};
