/**
 * The live-safe scenarios (limited-keys, ratelimit-live-edges, refill-midnight) through the real
 * runner, against a test service of our own on real HTTP (test/helpers/buggy-service.ts) and
 * against the embedded simulator: a correct service stays clean (exit 0, with --history too), and
 * each realistic bug is caught — exit 98 for an end-of-run check, 100 for an invariant with
 * --history — with a witness that names it.
 *
 * Nothing here depends on the machine's pace: the scenarios judge on keysim's own clock and turn a
 * slow run into an inconclusive (passing) one; the bursts are placed from the service's own window
 * edges, and the refill runs meet a midnight the test service's clock puts seconds away.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { ScenarioFailedError } from '../../src/load/run/runner.js';
import { type ServiceBug, type TestServiceOptions, startTestService } from '../helpers/buggy-service.js';
import { type LiveRun, runLive } from './live-run.js';
import { cleanEnv, cleanUpCli, cli, tempDir } from '../helpers/cli.js';

const RUN_LIMIT_MS = 180_000;
/**
 * A service time 26 s before a midnight that begins the 15th (a monthly refillDay 15 is due): time
 * to read the clock and start waiting. The run must read it 6 s (KEYSIM_MIDNIGHT_LEAD) plus its
 * uncertainty before the midnight, or it would wait a day: 20 s for its start, which on a busy
 * machine, with the other midnight runs at once, is not a few milliseconds.
 */
const BEFORE_MIDNIGHT = Date.parse('2027-03-14T23:59:34Z');

async function withService<T>(options: TestServiceOptions, fn: (s: { url: string; rootKey: string }) => Promise<T>): Promise<T> {
  const service = await startTestService(options);
  try {
    return await fn(service);
  } finally {
    await service.close();
  }
}

const onBug = (bug: ServiceBug | undefined, name: string, history: boolean, settings = {}) =>
  withService(bug === undefined ? {} : { bug }, (s) => runLive(name, s, { history, settings }));

/** The refill scenario with the test service's midnight seconds away (no history: the checkers would read keysim's wall clock as the service's). */
function acrossMidnight(options: TestServiceOptions): Promise<LiveRun> {
  return withService(options, async (s) => {
    const service = s as Awaited<ReturnType<typeof startTestService>>;
    service.setClockOffsetMs(BEFORE_MIDNIGHT - Date.now());
    return runLive('refill-midnight', s);
  });
}

/** `keysim …` from the sources as a child process, the root key in KEYSIM_ROOT_KEY, reports in a temporary folder. */
const cliRun = (args: string[], rootKey: string) => cli([...args, '--out', tempDir('keysim-live-cli-')], cleanEnv({ KEYSIM_ROOT_KEY: rootKey }));

const failedCheck = (run: LiveRun, name: string) => run.report.checks.find((c) => c.name === name && !c.passed);
const shortLoad = { durationMs: 3_000 };

const saved = { ...process.env };
beforeAll(() => {
  process.env.KEYSIM_MIDNIGHT_LEAD = '6s';
  process.env.KEYSIM_MIDNIGHT_MAX_WAIT = '1m';
  delete process.env.KEYSIM_REFILL_TOLERANCE;
  delete process.env.KEYSIM_NAMESPACE;
});
afterAll(() => {
  cleanUpCli();
  for (const name of ['KEYSIM_MIDNIGHT_LEAD', 'KEYSIM_MIDNIGHT_MAX_WAIT', 'KEYSIM_REFILL_TOLERANCE', 'KEYSIM_NAMESPACE']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe.concurrent('rate limits with credits: a correct service stays clean, each bug is caught', () => {
  test(
    'limited-keys on a correct service, --history → exit 0',
    async () => {
      const run = await onBug(undefined, 'limited-keys', true, shortLoad);
      expect(run.exit, run.failures).toBe(EXIT.ok);
      expect(run.report.invariants?.verdict).toBe('clean');
    },
    RUN_LIMIT_MS,
  );

  test(
    'ratelimit-live-edges on a correct service, --history → exit 0',
    async () => {
      const run = await onBug(undefined, 'ratelimit-live-edges', true);
      expect(run.exit, run.failures).toBe(EXIT.ok);
      expect(run.report.invariants?.verdict).toBe('clean');
    },
    RUN_LIMIT_MS,
  );

  test(
    'a rate-limited verification that still spends credits → limited-keys --history exits 100, the balance check says so',
    async () => {
      const run = await onBug('rateLimitedSpends', 'limited-keys', true, shortLoad);
      expect(run.exit, run.failures).toBe(EXIT.invariantViolated);
      expect(failedCheck(run, 'balances = credits + top-ups − VALID (refusals spend nothing, no top-up lost)')?.detail).toContain(
        'as if every RATE_LIMITED verification spent its cost',
      );
      expect(run.report.invariants?.violations.some((v) => v.invariant === 'credits.consistent')).toBe(true);
    },
    RUN_LIMIT_MS,
  );

  test(
    'a rate-limited verification that still spends credits → ratelimit-live-edges exits 98 naming it',
    async () => {
      const run = await onBug('rateLimitedSpends', 'ratelimit-live-edges', false);
      expect(run.exit, run.failures).toBe(EXIT.checkFailed);
      expect(failedCheck(run, 'a verification refused by a rate limit spends no credits')?.detail).toContain(
        'as if every RATE_LIMITED verification spent its cost',
      );
    },
    RUN_LIMIT_MS,
  );

  test(
    'a lost top-up → limited-keys --history exits 100, the balance check counts the lost top-ups',
    async () => {
      const run = await onBug('lostTopUp', 'limited-keys', true, shortLoad);
      expect(run.exit, run.failures).toBe(EXIT.invariantViolated);
      expect(failedCheck(run, 'balances = credits + top-ups − VALID (refusals spend nothing, no top-up lost)')?.detail).toMatch(
        /as if \d+ of its \d+ top-ups were lost/,
      );
    },
    RUN_LIMIT_MS,
  );

  test(
    'an off-by-one limit → ratelimit-live-edges --history exits 100, the exact-admission check names the burst',
    async () => {
      const run = await onBug('offByOne', 'ratelimit-live-edges', true);
      expect(run.exit, run.failures).toBe(EXIT.invariantViolated);
      expect(failedCheck(run, 'exact admissions at the limit (limit + 1 asked in a fresh window)')?.detail).toMatch(
        /a burst of 6 in one fresh window admitted 6, the limit 5 admits exactly 5/,
      );
      expect(run.report.invariants?.violations.some((v) => v.invariant === 'ratelimit.no-over-admission')).toBe(true);
    },
    RUN_LIMIT_MS,
  );

  test(
    'a fixed-window limiter → ratelimit-live-edges exits non-zero: the end-of-run check sees a full limit admitted again right after an edge',
    async () => {
      const run = await onBug('fixedWindow', 'ratelimit-live-edges', true);
      const edges = run.report.checks.find((c) => c.name === 'sliding window across real window edges');
      if (edges?.passed === true) {
        // A machine too busy to put any burst close enough to its edge (regression: "the fixed-window
        // test failed with exit 0 beside two CPU-bound processes"): the scenario says it could not
        // judge, by design, and never that the edges were within the bound.
        expect(edges.detail, run.failures).toMatch(/^inconclusive: \d+ edges seen, none close enough to its burst to judge/);
        return;
      }
      // 98 from the scenario's own check; 100 where the invariant checker also flags the edge.
      expect([EXIT.checkFailed, EXIT.invariantViolated], run.failures).toContain(run.exit);
      expect(edges?.detail).toContain('a fixed window admits a full limit again');
    },
    RUN_LIMIT_MS,
  );

  // Here, not among the other midnight runs: KEYSIM_REFILL_TOLERANCE is read from the environment
  // as a run of refill-midnight starts, and none of this group's scenarios reads it. The groups run
  // side by side, so a midnight run of the next group may start while it is set: 3 s cannot change
  // its verdict (its service is right, or refills a minute, two hours or a month late).
  test(
    'a batch refill 1.5 s late passes with KEYSIM_REFILL_TOLERANCE=3s',
    async () => {
      process.env.KEYSIM_REFILL_TOLERANCE = '3s';
      try {
        const run = await acrossMidnight({ refillDelayMs: 1_500 });
        expect(run.exit, run.failures).toBe(EXIT.ok);
      } finally {
        delete process.env.KEYSIM_REFILL_TOLERANCE;
      }
    },
    RUN_LIMIT_MS,
  );
});

describe.concurrent('refills across a real UTC midnight (the test service puts it seconds away)', () => {
  test(
    'a correct service → refill-midnight exits 0',
    async () => {
      const run = await acrossMidnight({});
      expect(run.exit, run.failures).toBe(EXIT.ok);
      expect(run.logs.some((l) => /s to wait until 2027-03-14T23:59:54\.000Z/.test(l))).toBe(true);
    },
    RUN_LIMIT_MS,
  );

  test(
    'a refill at local (UTC+2) midnight → exit 98: daily and monthly keys not refilled at 00:00 UTC',
    async () => {
      const run = await acrossMidnight({ bug: 'localMidnight' });
      expect(run.exit, run.failures).toBe(EXIT.checkFailed);
      expect(failedCheck(run, 'daily refill at the UTC midnight')?.detail).toContain('a refill at another hour than 00:00 UTC');
      expect(failedCheck(run, 'monthly refill on refillDay at the UTC midnight')).toBeDefined();
    },
    RUN_LIMIT_MS,
  );

  test(
    'a month skipped → exit 98: the monthly key due on the 15th is not refilled, the daily one is',
    async () => {
      const run = await acrossMidnight({ bug: 'skipMonth' });
      expect(run.exit, run.failures).toBe(EXIT.checkFailed);
      expect(failedCheck(run, 'monthly refill on refillDay at the UTC midnight')?.detail).toContain('or a month skipped');
      expect(failedCheck(run, 'daily refill at the UTC midnight')).toBeUndefined();
    },
    RUN_LIMIT_MS,
  );

  test(
    'a batch refill a minute late without a tolerance → exit 98: not refilled by midnight',
    async () => {
      const run = await acrossMidnight({ refillDelayMs: 60_000 });
      expect(run.exit, run.failures).toBe(EXIT.checkFailed);
      expect(failedCheck(run, 'daily refill at the UTC midnight')?.detail).toContain('not refilled by 2027-03-15T00:00:00.000Z');
    },
    RUN_LIMIT_MS,
  );

  test(
    'a midnight further away than KEYSIM_MIDNIGHT_MAX_WAIT → the run fails at once, saying when to start it',
    async () => {
      const error = await withService({}, async (s) => {
        (s as Awaited<ReturnType<typeof startTestService>>).setClockOffsetMs(Date.parse('2027-03-14T21:00:00Z') - Date.now());
        return runLive('refill-midnight', s).then(
          () => undefined,
          (e: unknown) => e,
        );
      });
      expect(error).toBeInstanceOf(ScenarioFailedError);
      expect(String(error)).toMatch(/2027-03-15T00:00:00\.000Z, 18\d min from now .*KEYSIM_MIDNIGHT_MAX_WAIT/);
    },
    RUN_LIMIT_MS,
  );
});

describe.concurrent('the same scenarios on the embedded simulator (--history, oracle)', () => {
  for (const name of ['limited-keys', 'ratelimit-live-edges', 'refill-midnight']) {
    test(
      `${name} → exit 0, the oracle agrees`,
      async () => {
        const run = await runLive(name, 'sim', { history: true, settings: shortLoad });
        expect(run.exit, run.failures).toBe(EXIT.ok);
        expect(run.report.invariants?.oracle?.verdict).toBe('agrees');
      },
      RUN_LIMIT_MS,
    );
  }
});

describe.concurrent('through the CLI', () => {
  test(
    '`keysim run limited-keys --target URL --history` on a service that loses top-ups → exit 100, the check named in the summary',
    async () => {
      const result = await withService({ bug: 'lostTopUp' }, (s) =>
        cliRun(['run', 'limited-keys', '--target', s.url, '--history', '--duration', '3s', '--quiet'], s.rootKey),
      );
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(EXIT.invariantViolated);
      expect(result.stdout).toContain('top-ups were lost');
    },
    RUN_LIMIT_MS,
  );

  // Under the production promises a top-up may be missing from another region's answers for a
  // counter's life, so the answers alone cannot tell it lost: the final balances, read once the
  // regions have converged (here after a 1 s counter life, the service's real time), still do.
  test(
    '`keysim run limited-keys --history --consistency production` on a service that loses top-ups still fails: the final balances miss them (exit 98)',
    async () => {
      const result = await withService({ bug: 'lostTopUp' }, (s) =>
        cliRun(
          [
            'run',
            'limited-keys',
            '--target',
            s.url,
            '--history',
            '--consistency',
            'production',
            '--promise',
            'creditTtlMs=1000',
            '--duration',
            '3s',
            '--quiet',
          ],
          s.rootKey,
        ),
      );
      expect([EXIT.checkFailed, EXIT.invariantViolated], `${result.stdout}\n${result.stderr}`).toContain(result.code);
      expect(result.stdout).toMatch(/FAIL {2}check balances = credits \+ top-ups − VALID .*top-ups were lost/);
    },
    RUN_LIMIT_MS,
  );
});
