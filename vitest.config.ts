import { availableParallelism } from 'node:os';
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
        test: {
          name: 'unit',
          include: [...UNIT_TESTS],
          setupFiles: ['test/helpers/unit-guard.ts'],
          // Pure files (no mocks, fake timers, globals or env changes): they share a worker's loaded
          // modules instead of importing the sources again per file, and two run at a time even on
          // two cores (vitest's default there is one), since none waits on a process or a socket.
          isolate: false,
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'live',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT_TESTS],
          // vitest's default (cores − 1: one file at a time on two cores). Two live files at a time
          // on a loaded 2-core machine made some fail (the CLI helper's 90 s limit killing a
          // `keysim serve`, the fixed start margin of `run --workers`): they must first stop
          // depending on the machine's pace.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
