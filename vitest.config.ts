import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/tiers.js';

/**
 * Three files at a time, unit and live together, on any machine (vitest's default on two cores is
 * one): most live files wait on sockets, timers and child processes, not on the CPU, and the pure
 * unit files fill the cores meanwhile. Measured on a 2-core machine, the two tiers one after the
 * other used 1.4 cores on average. None may depend on the machine's pace: their limits only catch
 * a hang, every port is port 0, every file writes in its own temporary folders.
 */
const WORKERS = 3;

/**
 * Live files run one at a time after everything else: the package tests run npm pack, which builds
 * dist/ — the build the CLI tests run — and npm install; Chromium renders the HTML report.
 */
const LIVE_ALONE: readonly string[] = ['test/report/html-chromium.test.ts', 'test/package/**/*.test.ts'];

export default defineConfig({
  test: {
    // Property and model-based tests run thousands of cases; the shared 2-core machine is noisy.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two tiers (test/tiers.ts): `vitest run` runs both, `vitest run --project unit` the unit tier,
    // `vitest run --project 'live*'` the live tier (its projects live and live-alone).
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [...UNIT_TESTS],
          setupFiles: ['test/helpers/unit-guard.ts'],
          // Pure files (no mocks, fake timers, globals or env changes): they share a worker's loaded
          // modules instead of importing the sources again per file.
          isolate: false,
          // One group with the live tier (the same groupOrder needs the same maxWorkers).
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'live',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT_TESTS, ...LIVE_ALONE],
          maxWorkers: WORKERS,
          // Limits that only catch a hang: a file beside another, and two CPU-bound processes beside
          // both, may take several times its usual time (a tsx start-up alone has taken over 20 s).
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          // The package and Chromium files (LIVE_ALONE), one at a time after the rest.
          name: 'live-alone',
          include: [...LIVE_ALONE],
          maxWorkers: 1,
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
