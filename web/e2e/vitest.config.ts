import { defineConfig } from 'vitest/config';

// The end-to-end journeys: the real kakeibo-dev (every function and the built web app) on a fresh
// database, the scripted demo model, and Debian's Chromium driven by playwright-core. One file at
// a time, in order: they share one server.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    sequence: { concurrent: false },
    reporters: ['verbose'],
  },
});
