/// <reference types="vitest/config" />
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * Fills in dist/sw.js (copied from public/): its cache version, a hash of the build's
 * file names (hashed themselves, so any change of code gives a new cache), and the assets
 * to cache at install. heic-to (3 MB, loaded only for an iPhone photo) is left to be
 * cached when fetched, and so is the operator console (its chunks and their styles, the
 * chart library with them): only admins ever load it, so no one else's browser fetches it.
 */
function serviceWorker(): Plugin {
  let files: string[] = [];
  let outDir = 'dist';
  return {
    name: 'chat-service-worker',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    generateBundle(_options, bundle) {
      const adminOnly = new Set<string>();
      for (const output of Object.values(bundle)) {
        if (output.type !== 'chunk' || !output.moduleIds.some((id) => id.includes('/src/features/admin/'))) continue;
        adminOnly.add(output.fileName);
        output.viteMetadata?.importedCss.forEach((css) => adminOnly.add(css));
      }
      files = Object.keys(bundle)
        .filter((name) => name.startsWith('assets/') && !name.includes('heic-to') && !adminOnly.has(name))
        .sort();
    },
    closeBundle() {
      const path = join(outDir, 'sw.js');
      if (!existsSync(path)) return;
      const version = createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 16);
      const source = readFileSync(path, 'utf8')
        .replace("'__SW_VERSION__'", JSON.stringify(version))
        .replace('/* __SW_PRECACHE__ */ []', JSON.stringify(files.map((name) => `/${name}`)));
      writeFileSync(path, source);
    },
  };
}

// The dev server proxies the API (and its websocket) to a locally running chat-server,
// so the client always talks to its own origin, as it does in production.
const apiTarget = process.env.CHAT_SERVER_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react(), serviceWorker()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    proxy: {
      '/api': { target: apiTarget, ws: true, changeOrigin: true },
      '/uploads': { target: apiTarget, changeOrigin: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    unstubGlobals: true,
  },
});
