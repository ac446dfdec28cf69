import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    globalSetup: ['test/unit/globalSetup.ts'],
    setupFiles: ['test/unit/removeTempHomes.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Multi-process tests spawn real node processes; two workers fit the two cores here.
    maxWorkers: 2,
  },
});
