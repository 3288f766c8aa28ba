import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Property and model-based tests run thousands of cases; the shared 2-core machine is noisy.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
