/**
 * Registers the app shell's service worker (public/sw.js) in production builds only: the
 * dev server's modules are not the built assets it caches.
 */
export function registerServiceWorker(): void {
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  const register = () => {
    // A failure (no https, blocked by the browser) leaves an app that works online.
    navigator.serviceWorker.register('/sw.js').catch(() => undefined);
  };
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
}
