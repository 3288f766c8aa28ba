import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/tiers.js';

export default defineConfig({
  test: {
    // Property and model-based tests run thousands of cases; the shared 2-core machine is noisy.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // vitest's default is one file at a time on two cores (cores − 1). Most live files wait on a
    // child process, a socket or a timer rather than compute, so two files at a time use the
    // machine better; every test is written to pass with two CPU-bound processes beside it, so a
    // neighbouring file is no reason to fail. Bigger machines keep vitest's cores − 1.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Two tiers (test/tiers.ts): `vitest run` runs both, `vitest run --project unit` the unit tier.
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: [...UNIT_TESTS], setupFiles: ['test/helpers/unit-guard.ts'], isolate: false },
      },
      {
        extends: true,
        test: { name: 'live', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...UNIT_TESTS] },
      },
    ],
  },
});
