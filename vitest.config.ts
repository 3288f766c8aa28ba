import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/tiers.js';

/**
 * Live files that load the machine by themselves, run one at a time after the other live files:
 * each proxy file starts an nginx and three `keysim run` children per mode (all its modes at once),
 * Chromium renders the HTML report, and the package tests run npm pack (which builds dist/) and
 * npm install.
 */
const LIVE_ALONE: readonly string[] = ['test/proxy/**/*.test.ts', 'test/report/html-chromium.test.ts', 'test/package/**/*.test.ts'];

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
          exclude: [...configDefaults.exclude, ...UNIT_TESTS, ...LIVE_ALONE],
          // Two files at a time even on two cores (vitest's default there is one): most live files
          // wait on sockets, timers and children, not on the CPU, and none may depend on the
          // machine's pace (their limits only guard against a hang; every port is port 0 and every
          // file writes in its own temporary folders).
          maxWorkers: 2,
          // Limits that only catch a hang: a file beside another, and two CPU-bound processes beside
          // both, may take several times its usual time (a tsx start-up alone has taken over 20 s).
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          // The files that load the machine by themselves (LIVE_ALONE), one at a time after the rest.
          name: 'live-alone',
          include: [...LIVE_ALONE],
          maxWorkers: 1,
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
