/* The app shell's service worker (web/README.md "Installed app and offline shell").
 *
 * Install: caches the shell (index.html, the manifest, icons) and the built assets, under
 * a cache named by a hash of the build's file list, so each build gets its own cache;
 * activate deletes every other cache of ours and takes over the open tabs.
 * Fetch: navigations go to the network first (the server's index.html, fresh) and fall
 * back to the cached index.html when offline; same-origin /assets/* (hashed names, never
 * changing) are served from the cache first and cached as they are fetched. /api/*
 * (the websocket included) and /uploads/* are never touched: they go to the network
 * as if there were no service worker.
 *
 * `npm run build` replaces the two placeholders below (vite.config.ts `serviceWorker`).
 */
const VERSION = '__SW_VERSION__';
const PRECACHE = /* __SW_PRECACHE__ */ [];

const PREFIX = 'chat-shell-';
const CACHE = `${PREFIX}${VERSION}`;
const SHELL = ['/index.html', '/manifest.webmanifest', '/favicon.svg', '/icons/icon-192.png', '/icons/icon-512.png'];

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(SHELL);
      // The assets one by one: one missing file must not leave the shell uncached.
      await Promise.all(PRECACHE.map((url) => cache.add(url).catch(() => undefined)));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      const names = await caches.keys();
      await Promise.all(names.filter((name) => name.startsWith(PREFIX) && name !== CACHE).map((name) => caches.delete(name)));
      await self.clients.claim();
    })(),
  );
});

/** Paths the service worker never answers nor caches. */
const passThrough = (path) => path.startsWith('/api/') || path === '/api' || path.startsWith('/uploads/');

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || passThrough(url.pathname)) return;

  if (request.mode === 'navigate') {
    event.respondWith(
      (async () => {
        try {
          const response = await fetch(request);
          const type = response.headers.get('Content-Type') ?? '';
          if (response.ok && type.includes('text/html')) {
            const copy = response.clone();
            event.waitUntil(caches.open(CACHE).then((cache) => cache.put('/index.html', copy)));
          }
          return response;
        } catch (error) {
          const cached = await caches.match('/index.html', { cacheName: CACHE });
          if (cached) return cached;
          throw error;
        }
      })(),
    );
    return;
  }

  if (url.pathname.startsWith('/assets/') || SHELL.includes(url.pathname)) {
    event.respondWith(
      (async () => {
        const cached = await caches.match(request, { cacheName: CACHE });
        if (cached) return cached;
        const response = await fetch(request);
        if (response.ok && url.pathname.startsWith('/assets/')) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(request, copy)));
        }
        return response;
      })(),
    );
  }
});
