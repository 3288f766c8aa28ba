import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/tiers.js';

export default defineConfig({
  test: {
    // Property and model-based tests run thousands of cases; the shared 2-core machine is noisy.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two tiers (test/tiers.ts): `vitest run` runs both, `vitest run --project unit` the unit tier.
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: [...UNIT_TESTS], setupFiles: ['test/helpers/unit-guard.ts'] },
      },
      {
        extends: true,
        test: { name: 'live', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...UNIT_TESTS] },
      },
    ],
  },
});
