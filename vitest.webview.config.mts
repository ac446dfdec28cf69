import { defineConfig } from 'vitest/config';

// Webview tests drive a real Chromium against dist/webview; slower than unit tests, so apart.
export default defineConfig({
  test: {
    include: ['test/webview/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One browser at a time: two cores, and Chromium wants both.
    maxWorkers: 1,
  },
});
