import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Multi-process tests spawn real node processes; two workers fit the two cores here.
    maxWorkers: 2,
  },
});
