import { defineConfig } from 'vitest/config';

// The site is a static bundle: `vite build` writes web/dist, which kakeibo-dev serves locally and
// the deployment uploads to the site bucket. `npm run dev` serves the sources with the API proxied
// to a running kakeibo-dev (KAKEIBO_API, default http://127.0.0.1:3000).
export default defineConfig({
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    assetsInlineLimit: 0,
  },
  server: {
    proxy: {
      '/api': { target: process.env.KAKEIBO_API ?? 'http://127.0.0.1:3000', changeOrigin: false },
    },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
