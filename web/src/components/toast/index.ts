export { Toaster } from './toaster';
export { toast, useToastStore, DEFAULT_TOAST_TIMEOUT } from './toast-store';
export type { Toast, ToastInput, ToastPosition, ToastType } from './toast-store';
