/**
 * runScenario over real sockets: against the embedded simulator (in its worker thread) with tiny
 * inline scenarios, against stub servers that die mid-run, against nothing at all, and stopped
 * with an AbortSignal. Rates and durations are small: these are behaviour tests, not benchmarks.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { plannedCount } from '../../src/load/plan/plan.js';
import { type RunOptions, TargetUnreachableError, runScenario } from '../../src/load/run/runner.js';
import { type LoadSettings, type MixEntry, type RunResults, type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { type Target, liveTarget, startEmbeddedSimulator } from '../../src/load/target/target.js';
import { type Threshold, parseThreshold } from '../../src/load/run/thresholds.js';
import { postJson } from '../helpers/http.js';
import { OK_BODY, loadSettings, startStubServer, unusedPort } from '../helpers/load.js';

function thresholds(...expressions: string[]): Threshold[] {
  return expressions.map((expression) => {
    const parsed = parseThreshold(expression);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.threshold;
  });
}

function options(scenario: Scenario<unknown>, target: Target, settings: LoadSettings, extra: Partial<RunOptions> = {}): RunOptions {
  return { scenario, target, settings, seed: 7, thresholds: [], keep: false, keysimVersion: '0.0.0-test', ...extra };
}

/** Scenarios are generic in their fixtures; the runner takes them as Scenario<unknown>. */
const erase = <F>(scenario: Scenario<F>) => scenario as unknown as Scenario<unknown>;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const dataOf = (body: unknown): Record<string, unknown> => (isObject(body) && isObject(body.data) ? body.data : {});

interface KeyFixtures {
  keyId: string;
  key: string;
}

/** Creates an API and one key (with `credits` when given) through the public API; records the plaintext key. */
async function createKey(ctx: Parameters<Scenario<unknown>['setup']>[0], credits: number | undefined, created: string[]): Promise<KeyFixtures> {
  const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-runner-test` });
  const body = credits === undefined ? { apiId } : { apiId, credits: { remaining: credits } };
  const key = await ctx.api.data<KeyFixtures>('keys.createKey', body);
  created.push(key.key);
  return key;
}

/** Verifications of one key, each answer checked to be VALID. */
const verifyValid: MixEntry<KeyFixtures> = {
  name: 'verify',
  weight: 1,
  build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }),
  check: (r) => (r.status === 200 && dataOf(r.body).code === 'VALID' ? undefined : `expected VALID, got ${r.status} ${String(dataOf(r.body).code)}`),
};

function waitFor(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (predicate()) resolve();
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 20);
    };
    poll();
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `run` (given the abort signal and a log), aborts it `afterMs` into its load phase and waits
 * for it: its report, and how long it took to settle after the abort.
 */
async function abortMidLoad(
  run: (extra: Partial<RunOptions>) => RunOptions,
  afterMs: number,
): Promise<{ report: Awaited<ReturnType<typeof runScenario>>; settledAfterAbortMs: number }> {
  const controller = new AbortController();
  const lines: string[] = [];
  const running = runScenario(run({ signal: controller.signal, log: (line) => lines.push(line) }));
  let settledAt: number | undefined;
  void running.then(
    () => (settledAt = performance.now()),
    () => (settledAt = performance.now()),
  );
  await waitFor(() => lines.some((line) => line.startsWith('phase "load"')), 'the load phase to start');
  await sleep(afterMs);
  const abortedAt = performance.now();
  controller.abort();
  const report = await running;
  return { report, settledAfterAbortMs: (settledAt ?? Number.POSITIVE_INFINITY) - abortedAt };
}

describe('runScenario against the embedded simulator', () => {
  let sim: Target;

  beforeAll(async () => {
    sim = await startEmbeddedSimulator({ seed: 3 });
  });

  afterAll(async () => {
    await sim?.close();
  });

  beforeEach(async () => {
    const reset = await postJson(sim.url, '/_sim/reset', {}, sim.rootKey);
    expect(reset.status).toBe(200);
  });

  test('open model: exact counts, warm-up excluded, codes and check failures counted, finish() and thresholds in the report', async () => {
    const CREDITS = 30;
    const RATE = 50;
    const DURATION_MS = 2_000;
    const planned = plannedCount(RATE, DURATION_MS); // 100
    const created: string[] = [];
    let finishSaw: RunResults | undefined;
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-credits',
      description: 'One key with 30 credits, verified 100 times',
      setup: (ctx) => createKey(ctx, CREDITS, created),
      mix: [
        {
          name: 'verify cost 1',
          weight: 1,
          build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key, credits: { cost: 1 } } }),
          // Fails for every refused verification: exactly planned − CREDITS failures.
          check: (r) => (dataOf(r.body).code === 'VALID' ? undefined : `refused with ${String(dataOf(r.body).code)}`),
        },
      ],
      phases: () => [
        {
          name: 'warm-up',
          durationMs: 500,
          rate: 20,
          warmup: true,
          // Reads only, each failing its check: none of it may reach the figures.
          mix: [{ name: 'warm-up read', weight: 1, build: (f) => ({ op: 'keys.getKey', body: { keyId: f.keyId } }), check: () => 'warm-up check failure' }],
        },
        { name: 'load', durationMs: DURATION_MS },
      ],
      async finish(_ctx, _f, results) {
        finishSaw = results;
        const verify = results.operation('keys.verifyKey');
        return [{ name: 'finish saw exact codes', passed: verify?.codes.VALID === CREDITS, detail: JSON.stringify(verify?.codes) }];
      },
    });

    const report = await runScenario(
      options(erase(scenario), sim, loadSettings({ rate: RATE, durationMs: DURATION_MS, warmupMs: 500 }), {
        thresholds: thresholds('requests == 100', 'rate(VALID) == 0.3', 'errors == 0', 'p50 < 0.001ms', 'p99(keys.getKey) < 10s'),
      }),
    );

    expect(report.status).toBe('completed');
    expect(report.scenario).toEqual({ name: 'inline-credits', description: 'One key with 30 credits, verified 100 times' });
    expect(report.phases.map((p) => [p.name, p.warmup])).toEqual([
      ['warm-up', true],
      ['load', false],
    ]);
    // Exactly the planned number of measured requests; the warm-up's reads are nowhere.
    expect(report.totals.requests).toBe(planned);
    expect(report.overall.requests).toBe(planned);
    expect(report.operations.map((o) => o.operation)).toEqual(['keys.verifyKey']);
    expect(report.overall.statuses).toEqual({ '200': planned });
    expect(report.overall.codes).toEqual({ VALID: CREDITS, USAGE_EXCEEDED: planned - CREDITS });
    expect(report.overall.latency.corrected.count).toBe(planned);
    expect(report.totals.errors).toBe(0);
    expect(report.measuredMs).toBeGreaterThan(0);
    expect(report.timeline.reduce((n, point) => n + point.requests, 0)).toBe(planned);
    // Per-response check failures: counted, and reported as a failed check naming the entry.
    expect(report.overall.checkFailures).toBe(planned - CREDITS);
    const perResponse = report.checks.find((c) => c.name === 'per-response checks');
    expect(perResponse?.passed).toBe(false);
    expect(perResponse?.detail).toContain(String(planned - CREDITS));
    expect(perResponse?.detail).toContain('verify cost 1: refused with USAGE_EXCEEDED');
    expect(JSON.stringify(report)).not.toContain('warm-up check failure');
    // finish() ran on the measured figures and its checks are in the report.
    expect(finishSaw?.totals.requests).toBe(planned);
    expect(report.checks).toContainEqual({ name: 'finish saw exact codes', passed: true, detail: expect.stringContaining('"VALID":30') as string });
    // Thresholds evaluated on the same figures.
    expect(report.thresholds.map((t) => [t.expression, t.passed])).toEqual([
      ['requests == 100', true],
      ['rate(VALID) == 0.3', true],
      ['errors == 0', true],
      ['p50 < 0.001ms', false],
      ['p99(keys.getKey) < 10s', false],
    ]);
    expect(report.thresholds[4]?.actual).toBeNull();
    // No credential anywhere: neither the root key nor the key the scenario created.
    const text = JSON.stringify(report);
    expect(created).toHaveLength(1);
    for (const secret of [sim.rootKey, ...created]) expect(text).not.toContain(secret);
    expect(report.target).toEqual({ kind: 'simulator', url: sim.url });
  });

  test('closed model: autocannon produces figures, codes and per-operation counts', async () => {
    const created: string[] = [];
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-closed',
      description: 'Verifications of an unlimited key, closed model',
      setup: (ctx) => createKey(ctx, undefined, created),
      mix: [verifyValid],
    });
    const report = await runScenario(options(erase(scenario), sim, loadSettings({ model: 'closed', connections: 2, durationMs: 1_000 })));

    expect(report.status).toBe('completed');
    expect(report.settings.model).toBe('closed');
    const requests = report.totals.requests;
    expect(requests).toBeGreaterThan(0);
    expect(report.operations.map((o) => o.operation)).toEqual(['keys.verifyKey']);
    expect(report.overall.statuses).toEqual({ '200': requests });
    expect(report.overall.codes).toEqual({ VALID: requests });
    expect(report.overall.checkFailures).toBe(0);
    expect(report.overall.latency.corrected.count).toBe(requests);
    expect(report.overall.latency.corrected.max).toBeGreaterThan(0);
    // No intended send time in the closed model: both figures are the same.
    expect(report.overall.latency.uncorrected).toEqual(report.overall.latency.corrected);
    expect(report.phases).toHaveLength(1);
    expect(report.phases[0]?.rate).toBe(2);
    expect(report.checks).toContainEqual(expect.objectContaining({ name: 'per-response checks', passed: true }));
    for (const secret of [sim.rootKey, ...created]) expect(JSON.stringify(report)).not.toContain(secret);
  });

  test('a root key the target refuses → TargetUnreachableError before setup, without the key in the message', async () => {
    let setupCalled = false;
    const scenario = defineScenario<undefined>({
      name: 'inline-refused',
      description: 'never runs',
      setup: async () => {
        setupCalled = true;
      },
      mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
    });
    const wrong = liveTarget(sim.url, 'root_wrong_key_0123456789');
    const error = await runScenario(options(erase(scenario), wrong, loadSettings())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetUnreachableError);
    expect((error as Error).message).toMatch(/root key/);
    expect((error as Error).message).not.toContain('root_wrong_key_0123456789');
    expect(setupCalled).toBe(false);
  });

  test('abort via AbortSignal during the load: status interrupted, returned well before the planned end, finish() skipped', async () => {
    const created: string[] = [];
    let finishCalled = false;
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-abort',
      description: 'A long run, stopped early',
      setup: (ctx) => createKey(ctx, undefined, created),
      mix: [verifyValid],
      finish: async () => {
        finishCalled = true;
        return [];
      },
    });
    const { report, settledAfterAbortMs } = await abortMidLoad(
      (extra) => options(erase(scenario), sim, loadSettings({ rate: 50, durationMs: 60_000 }), { ...extra, thresholds: thresholds('requests > 0') }),
      600,
    );

    // Stopped, not run to its end: the plan had most of a minute left. (How fast a stop is, ~1–2 s,
    // is a matter of the machine's pace, which a test on a busy machine cannot assert: the bound is
    // half the time left, not a pace.)
    expect(settledAfterAbortMs).toBeLessThan(30_000);
    expect(report.status).toBe('interrupted');
    expect(finishCalled).toBe(false);
    expect(report.totals.requests).toBeGreaterThan(0);
    expect(report.totals.requests).toBeLessThan(plannedCount(50, 60_000));
    expect(report.totals.dropped).toBeGreaterThan(0);
    expect(report.overall.codes).toEqual({ VALID: report.totals.requests });
    expect(report.notes.join('\n')).toMatch(/Interrupted/);
    expect(report.thresholds).toEqual([expect.objectContaining({ expression: 'requests > 0', passed: true })]);
  });

  test('a stop noticed first by the last answer in flight still counts the sends never made as dropped (the abort test once saw 0 dropped on a busy machine)', async () => {
    const created: string[] = [];
    const controller = new AbortController();
    let built = 0;
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-abort-in-answer',
      description: "Stopped by the first answer, before the generator's next tick",
      setup: (ctx) => createKey(ctx, undefined, created),
      mix: [
        {
          ...verifyValid,
          build: (f, random) => {
            built++;
            return verifyValid.build(f, random);
          },
          // The stop arrives while the answer is handled: the answer's own completion sees it before any tick does.
          check: () => {
            controller.abort();
            return undefined;
          },
        },
      ],
    });
    const settings = loadSettings({ rate: 2, durationMs: 10_000 });
    const report = await runScenario(options(erase(scenario), sim, settings, { signal: controller.signal }));
    expect(report.status).toBe('interrupted');
    const planned = plannedCount(settings.rate, settings.durationMs);
    expect(built).toBeGreaterThan(0);
    expect(built).toBeLessThan(planned);
    // Every planned send never built is a dropped one (plus any left in the queue).
    expect(report.totals.dropped).toBeGreaterThanOrEqual(planned - built);
  });

  test('abort via AbortSignal in the closed model: status interrupted, returned well before the planned end', async () => {
    const created: string[] = [];
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-abort-closed',
      description: 'A long closed-model run, stopped early',
      setup: (ctx) => createKey(ctx, undefined, created),
      mix: [verifyValid],
    });
    const { report, settledAfterAbortMs } = await abortMidLoad(
      (extra) => options(erase(scenario), sim, loadSettings({ model: 'closed', connections: 1, durationMs: 60_000 }), extra),
      600,
    );

    // Stopped, not run to its end (the plan had most of a minute left; the bound is half of it).
    expect(settledAfterAbortMs).toBeLessThan(30_000);
    expect(report.status).toBe('interrupted');
    expect(report.totals.requests).toBeGreaterThan(0);
  });

  test('a signal aborted before the run starts (Ctrl-C during start-up): interrupted, no load sent', async () => {
    const created: string[] = [];
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-pre-aborted',
      description: 'Aborted before it began',
      setup: (ctx) => createKey(ctx, undefined, created),
      mix: [verifyValid],
    });
    const controller = new AbortController();
    controller.abort();
    const startedAt = performance.now();
    const report = await runScenario(options(erase(scenario), sim, loadSettings({ rate: 50, durationMs: 60_000 }), { signal: controller.signal }));
    expect(report.status).toBe('interrupted');
    expect(report.totals.requests).toBe(0);
    expect(report.phases).toEqual([]);
    // Not run: a minute was planned (the bound is half of it, not a pace).
    expect(performance.now() - startedAt).toBeLessThan(30_000);
  });

  test('a signal aborted during setup: interrupted, no phase runs', async () => {
    const created: string[] = [];
    const controller = new AbortController();
    const scenario = defineScenario<KeyFixtures>({
      name: 'inline-abort-setup',
      description: 'Aborted while setting up',
      setup: async (ctx) => {
        const key = await createKey(ctx, undefined, created);
        controller.abort();
        return key;
      },
      mix: [verifyValid],
    });
    const report = await runScenario(options(erase(scenario), sim, loadSettings({ rate: 50, durationMs: 10_000 }), { signal: controller.signal }));
    expect(report.status).toBe('interrupted');
    expect(report.phases).toEqual([]);
    expect(report.totals.requests).toBe(0);
  });
});

describe('runScenario against stub targets (failing, hanging, behind a path)', () => {
  /** No setup, one kind of request: the stub servers answer anything with 200 {data: {}}. */
  const stubScenario = (phaseStarted?: () => void) =>
    defineScenario<undefined>({
      name: 'inline-stub',
      description: 'Verifications against a stub',
      setup: async () => undefined,
      mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
      phases: (ctx) => [{ name: 'load', durationMs: ctx.settings.durationMs, ...(phaseStarted === undefined ? {} : { before: async () => phaseStarted() }) }],
    });

  test('a target that dies mid-run: the schedule completes, transport errors are counted, a report is returned', async () => {
    const server = await startStubServer();
    try {
      let killed = false;
      const scenario = stubScenario(() => {
        setTimeout(() => {
          killed = true;
          void server.kill();
        }, 1_000);
      });
      const report = await runScenario(
        options(erase(scenario), liveTarget(server.url, 'root_x_12345678'), loadSettings({ rate: 50, durationMs: 2_000, timeoutMs: 3_000 })),
      );

      expect(killed).toBe(true);
      expect(server.paths[0]).toBe('/v2/identities.listIdentities');
      expect(report.status).toBe('completed');
      const planned = plannedCount(50, 2_000);
      expect(report.totals.requests).toBe(planned);
      expect(report.totals.dropped).toBe(0);
      const { refused, reset, timeout, other } = report.overall.transportErrors;
      const answered = report.overall.statuses['200'] ?? 0;
      expect(answered + refused + reset + timeout + other).toBe(planned);
      expect(answered).toBeGreaterThan(10);
      expect(refused + reset).toBeGreaterThan(10);
      expect(report.totals.errors).toBe(refused + reset + timeout + other);
      expect(report.timeline.some((point) => point.errors > 0)).toBe(true);
      expect(JSON.stringify(report)).not.toContain('root_x_12345678');
    } finally {
      await server.kill();
    }
  });

  test('a target that never answers: each request ends as a timeout after timeoutMs (counted apart, not as a latency), and the run still ends', async () => {
    const server = await startStubServer((req, res) => {
      // Answers the reachability probe only; the load's requests hang until the server is killed.
      if (req.url === '/v2/identities.listIdentities') res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    });
    try {
      const scenario = defineScenario<undefined>({
        name: 'inline-hang',
        description: 'Requests that are never answered',
        setup: async () => undefined,
        mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
      });
      const report = await runScenario(
        options(erase(scenario), liveTarget(server.url, 'root_x_12345678'), loadSettings({ rate: 10, durationMs: 1_000, connections: 10, timeoutMs: 500 })),
      );
      expect(report.status).toBe('completed');
      expect(report.totals.requests).toBe(10);
      expect(report.overall.transportErrors).toEqual({ timeout: 10, reset: 0, refused: 0, other: 0 });
      expect(report.overall.statuses).toEqual({});
      expect(report.totals.errors).toBe(10);
      // No request was answered: there is no latency to show, however long the timeouts took.
      expect(report.overall.latency.corrected.count).toBe(0);
      expect(report.overall.latency.uncorrected.count).toBe(0);
    } finally {
      await server.kill();
    }
  });

  test('abort while the target hangs: still interrupted and returned long before the request timeout', async () => {
    const server = await startStubServer((req, res) => {
      if (req.url === '/v2/identities.listIdentities') res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    });
    try {
      const { report, settledAfterAbortMs } = await abortMidLoad(
        (extra) =>
          options(erase(stubScenario()), liveTarget(server.url, 'root_x_12345678'), loadSettings({ rate: 20, durationMs: 60_000, timeoutMs: 60_000 }), extra),
        500,
      );
      expect(report.status).toBe('interrupted');
      // The hung requests were cut short, not waited for until their 60 s timeout (the bound is
      // half of it: a busy machine's slow stop is not a failure).
      expect(settledAfterAbortMs).toBeLessThan(30_000);
    } finally {
      await server.kill();
    }
  });

  test.each(['open', 'closed'] as const)('a live target behind a base path (%s model): every request goes under that path', async (model) => {
    const server = await startStubServer();
    try {
      const scenario = stubScenario();
      const target = liveTarget(`${server.url}/gateway/keys/`, 'root_x_12345678');
      expect(target.url).toBe(`${server.url}/gateway/keys`);
      const report = await runScenario(options(erase(scenario), target, loadSettings({ model, rate: 20, durationMs: 1_000, connections: 1 })));
      expect(report.status).toBe('completed');
      expect(report.totals.requests).toBeGreaterThan(0);
      expect(report.overall.statuses).toEqual({ '200': report.totals.requests });
      expect(server.paths.length).toBeGreaterThan(1);
      expect(server.paths.filter((path) => !path.startsWith('/gateway/keys/v2/'))).toEqual([]);
    } finally {
      await server.kill();
    }
  });

  test('closed model with pipelining > 1 is refused before anything is sent (autocannon cannot match pipelined answers)', async () => {
    let setupCalled = false;
    const scenario = defineScenario<undefined>({
      name: 'inline-refused',
      description: 'never runs',
      setup: async () => {
        setupCalled = true;
      },
      mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
    });
    const error = await runScenario(
      options(erase(scenario), liveTarget('http://127.0.0.1:9', 'root_x_12345678'), loadSettings({ model: 'closed', pipelining: 2 })),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/pipelining/);
    expect(setupCalled).toBe(false);
  });

  test.each([1])('closed model, pipelining %i: each answer is matched to the request it answers', async (pipelining) => {
    // The stub echoes the path it was asked; each mix entry checks that the answer it is given is its own.
    const server = await startStubServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ meta: { requestId: 'req_x' }, data: { path: req.url } }));
    });
    try {
      const echoes = (op: string) => (r: { body: unknown }) => (dataOf(r.body).path === `/v2/${op}` ? undefined : `answer for ${String(dataOf(r.body).path)}`);
      const scenario = defineScenario<undefined>({
        name: 'inline-pipelined',
        description: 'Two operations, pipelined',
        setup: async () => undefined,
        mix: [
          { name: 'get', weight: 1, build: () => ({ op: 'keys.getKey', body: { keyId: 'key_x' } }), check: echoes('keys.getKey') },
          { name: 'verify', weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }), check: echoes('keys.verifyKey') },
        ],
      });
      const report = await runScenario(
        options(erase(scenario), liveTarget(server.url, 'root_x_12345678'), loadSettings({ model: 'closed', connections: 1, pipelining, durationMs: 1_000 })),
      );
      expect(report.totals.requests).toBeGreaterThan(10);
      expect(report.checks.find((c) => c.name === 'per-response checks')).toMatchObject({ passed: true });
      expect(report.overall.checkFailures).toBe(0);
    } finally {
      await server.kill();
    }
  });

  test('an unreachable target (nothing listening) → TargetUnreachableError before any setup', async () => {
    const port = await unusedPort();
    let setupCalled = false;
    const scenario = defineScenario<undefined>({
      name: 'inline-unreachable',
      description: 'never runs',
      setup: async () => {
        setupCalled = true;
      },
      mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
    });
    const error = await runScenario(options(erase(scenario), liveTarget(`http://127.0.0.1:${port}`, 'root_x_12345678'), loadSettings())).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TargetUnreachableError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).toMatch(/refused/);
    expect((error as Error).message).not.toContain('root_x_12345678');
    expect(setupCalled).toBe(false);
  });

  test('a target answering 5xx to the reachability probe → TargetUnreachableError', async () => {
    const server = await startStubServer((_req, res) => res.writeHead(503).end());
    try {
      const scenario = stubScenario();
      const error = await runScenario(options(erase(scenario), liveTarget(server.url, 'root_x_12345678'), loadSettings())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TargetUnreachableError);
      expect((error as Error).message).toMatch(/503/);
      expect(server.paths).toEqual(['/v2/identities.listIdentities']);
    } finally {
      await server.kill();
    }
  });
});
