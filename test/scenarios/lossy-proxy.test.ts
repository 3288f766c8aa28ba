/**
 * The live-safe scenarios behind a proxy that loses answers (test/helpers/lossy-proxy.ts): it
 * forwards the request — the service executes it — then drops the connection or answers 504
 * itself. Such an answer never came: its outcome is unknown, never evidence against the service.
 * Each run must end with a report and its cleanup, leave nothing on the service, and fail no
 * check and no invariant (the test service is correct). No timing is asserted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { createSimulator } from '../../src/http/simulator.js';
import { startTestService } from '../helpers/buggy-service.js';
import { type Loss, type LossyProxy, startLossyProxy } from '../helpers/lossy-proxy.js';
import { type LiveRun, runLive } from './live-run.js';

const RUN_LIMIT_MS = 180_000;
const VERIFY = '/v2/keys.verifyKey';
const TOP_UP = '/v2/keys.updateCredits';

type Lose = (path: string, n: number, body: string) => Loss | undefined;

/** The correct test service behind a lossy proxy; the scenario run through the proxy. */
async function behindProxy(
  name: string,
  lose: Lose,
  options: { history?: boolean; clockOffsetMs?: number; settings?: object } = {},
): Promise<{ run: LiveRun; proxy: LossyProxy; held: { keys: number; identities: number } }> {
  const service = await startTestService(options.clockOffsetMs === undefined ? {} : { clockOffsetMs: options.clockOffsetMs });
  const proxy = await startLossyProxy(service.url, lose);
  try {
    const run = await runLive(name, { url: proxy.url, rootKey: service.rootKey }, { history: options.history ?? false, settings: options.settings ?? {} });
    return { run, proxy, held: service.held() };
  } finally {
    await proxy.close();
    await service.close();
  }
}

/** A run that lost answers and still ends clean: a report, its cleanup done, nothing failed. */
function expectCleanDespiteLosses(r: { run: LiveRun; proxy: LossyProxy; held: { keys: number; identities: number } }): void {
  expect(r.proxy.lost.length, 'the proxy lost no answer: the test tests nothing').toBeGreaterThan(0);
  expect(r.run.failures).toBe('');
  if (r.run.exit === EXIT.generatorLimited) {
    // A machine too busy to put any burst of ratelimit-live-edges close enough to its window edge:
    // the scenario says it could not judge that (exit 97, by design), never that the service was
    // wrong; nothing else may be left unjudged.
    const unjudged = r.run.report.checks.filter((c) => /^(not judged|inconclusive)\b/i.test(c.detail));
    expect(
      unjudged.map((c) => `${c.name}: ${c.detail}`),
      'exit 97 for another reason than a slow machine at the window edges',
    ).toEqual([expect.stringMatching(/^sliding window across real window edges: inconclusive: \d+ edges seen, none close enough to its burst to judge/)]);
  } else expect(r.run.exit, r.run.failures).toBe(EXIT.ok);
  expect(r.run.report.resources?.disposal).toBe('cleaned');
  expect(r.run.report.resources?.unexpectedlyLeft).toBe(0);
  expect(r.held.keys, 'keys left on the service').toBe(0);
}

const saved = { ...process.env };
beforeAll(() => {
  process.env.KEYSIM_MIDNIGHT_LEAD = '6s';
  process.env.KEYSIM_MIDNIGHT_MAX_WAIT = '1m';
  delete process.env.KEYSIM_REFILL_TOLERANCE;
  delete process.env.KEYSIM_NAMESPACE;
});
afterAll(() => {
  for (const name of ['KEYSIM_MIDNIGHT_LEAD', 'KEYSIM_MIDNIGHT_MAX_WAIT', 'KEYSIM_REFILL_TOLERANCE', 'KEYSIM_NAMESPACE']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe.concurrent('answers lost by a proxy are unknown outcomes, not failures', () => {
  test(
    'ratelimit-live-edges does not crash when a connection drops during a burst',
    async () => {
      // Every burst of the key is 5 verifications: the 2nd of each is lost, dropped or 504 in turn.
      const r = await behindProxy('ratelimit-live-edges', (path, n) => (path === VERIFY && n % 5 === 2 ? (n % 10 === 2 ? 'drop' : '504') : undefined), {
        history: true,
      });
      expectCleanDespiteLosses(r);
      expect(r.proxy.lost.map((l) => l.kind)).toEqual(expect.arrayContaining(['drop', '504']));
      expect(r.run.report.invariants?.verdict).toBe('clean');
      const balance = r.run.report.checks.find((c) => c.name === 'a verification refused by a rate limit spends no credits');
      expect(balance?.detail).toMatch(/verifications without a known outcome/);
    },
    RUN_LIMIT_MS,
  );

  test(
    'ratelimit-live-edges does not blame the service for verifications a gateway timed out after it executed them',
    async () => {
      // Every verification of the first burst answered 504 by the proxy: the service admitted 4 of them.
      const r = await behindProxy('ratelimit-live-edges', (path, n) => (path === VERIFY && n <= 5 ? '504' : undefined));
      expectCleanDespiteLosses(r);
      expect(r.run.report.checks.find((c) => c.name.startsWith('exact admissions'))?.detail).toMatch(/bursts not judged: none of their answers came/);
    },
    RUN_LIMIT_MS,
  );

  test(
    'limited-keys is not accused when verifications and top-ups lose their answers after they ran',
    async () => {
      const lose: Lose = (path, n) => {
        if (path === VERIFY) return n % 10 === 3 ? '504' : n % 10 === 7 ? 'drop' : undefined;
        if (path === TOP_UP) return n % 3 === 1 ? '504' : undefined;
        return undefined;
      };
      const r = await behindProxy('limited-keys', lose, { history: true, settings: { durationMs: 3_000 } });
      expectCleanDespiteLosses(r);
      expect(r.run.report.invariants?.verdict).toBe('clean');
      expect(r.run.report.checks.find((c) => c.name === 'per-response checks')?.detail).toMatch(
        /^\d+ answers passed; \d+ requests? got no answer \(unknown\)$/,
      );
    },
    RUN_LIMIT_MS,
  );

  test(
    'refill-midnight is not accused when the verification before midnight and a final one lose their answers',
    async () => {
      // The scenario's own verifications carry no credits field (the watch's are cost 0, the clock probes unauthenticated).
      let own = 0;
      const lose: Lose = (path, _n, body) => {
        if (path !== VERIFY || body.includes('credits') || body.includes('clock-probe')) return undefined;
        own++;
        return own === 1 ? '504' : own === 4 ? 'drop' : undefined;
      };
      const service = await startTestService();
      // 26 s before the midnight: the run must read the clock 6 s (the lead) before it, on a busy
      // machine and beside this file's other runs, or it would wait a day.
      service.setClockOffsetMs(Date.parse('2027-03-14T23:59:34Z') - Date.now());
      const proxy = await startLossyProxy(service.url, lose);
      try {
        const run = await runLive('refill-midnight', { url: proxy.url, rootKey: service.rootKey });
        expectCleanDespiteLosses({ run, proxy, held: service.held() });
        expect(proxy.lost.map((l) => l.kind)).toEqual(['504', 'drop']);
      } finally {
        await proxy.close();
        await service.close();
      }
    },
    RUN_LIMIT_MS,
  );

  test(
    "smoke's walk-through is not judged, not failed, past an answer that never came",
    async () => {
      // The simulator as a live deployment (production compat creates namespaces on first use).
      const sim = await createSimulator({ clock: 'system', compat: 'production' });
      const proxy = await startLossyProxy(sim.url, (path, _n, body) => (path === VERIFY && body.includes('"cost":2') ? '504' : undefined));
      try {
        const run = await runLive('smoke', { url: proxy.url, rootKey: sim.rootKey }, { settings: { durationMs: 1_000, warmupMs: 0 } });
        expect(proxy.lost.length).toBeGreaterThan(0);
        expect(run.failures).toBe('');
        // Not judged is not passed: inconclusive (97), never failed.
        expect(run.exit).toBe(EXIT.generatorLimited);
        expect(run.report.checks.find((c) => c.name === 'walk: completed')?.detail).toMatch(/^not judged/);
        expect(run.report.resources?.unexpectedlyLeft).toBe(0);
      } finally {
        await proxy.close();
        await sim.close();
      }
    },
    RUN_LIMIT_MS,
  );
});

/** The simulator as a live deployment (production compat creates namespaces on first use) behind a lossy proxy; the scenario run through it. */
async function simBehindProxy(name: string, lose: Lose, settings: object = {}): Promise<{ run: LiveRun; proxy: LossyProxy }> {
  const sim = await createSimulator({ clock: 'system', compat: 'production' });
  const proxy = await startLossyProxy(sim.url, lose);
  try {
    const run = await runLive(name, { url: proxy.url, rootKey: sim.rootKey }, { settings: { durationMs: 1_000, warmupMs: 0, ...settings } });
    return { run, proxy };
  } finally {
    await proxy.close();
    await sim.close();
  }
}

/** The named check of a run: it must be there and say "not judged", not fail. */
function expectNotJudged(run: LiveRun, name: string): void {
  const check = run.report.checks.find((c) => c.name === name);
  expect(check, `no check "${name}": ${run.report.checks.map((c) => c.name).join(', ')}`).toBeDefined();
  expect(check?.passed, check?.detail).toBe(true);
  expect(check?.detail).toMatch(/^not judged: \d+ answers? never came/);
}

const GET_KEY = '/v2/keys.getKey';

describe.concurrent("a scenario's own calls whose answers never came are not judged, never failed", () => {
  test(
    'key-states: its end-of-run balance reads that never came are not judged (it called ctx.api.data, and the run failed "end-of-run checks could not run")',
    async () => {
      // The mix reads the deleted key only (its id is learnt from the set-up's deleteKey): every other getKey is an end-of-run read.
      let deleted = '';
      const lose: Lose = (path, n, body) => {
        if (path === '/v2/keys.deleteKey' && deleted === '') deleted = body;
        if (path !== GET_KEY || deleted.includes(String((JSON.parse(body) as { keyId?: unknown }).keyId))) return undefined;
        return n % 2 === 0 ? 'drop' : '504';
      };
      const { run, proxy } = await simBehindProxy('key-states', lose);
      expect(proxy.lost.length).toBeGreaterThan(0);
      expect(run.failures).toBe('');
      expectNotJudged(run, 'refused and cost-0 verifications spent nothing');
      expect(run.report.resources?.unexpectedlyLeft).toBe(0);
    },
    RUN_LIMIT_MS,
  );

  test(
    'ratelimit-rules: a walk step whose answer never came is not judged (it called ctx.api.call, and the run failed "end-of-run checks could not run")',
    async () => {
      let costly = 0;
      let multi = 0;
      const lose: Lose = (path, _n, body) => {
        // The 2nd check of cost 4 on the walk's own identifier, and the first multiLimit.
        if (path === '/v2/ratelimit.limit' && body.includes('-rr-cost') && body.includes('"cost":4')) return ++costly === 2 ? 'drop' : undefined;
        if (path === '/v2/ratelimit.multiLimit') return ++multi === 1 ? '504' : undefined;
        return undefined;
      };
      const { run, proxy } = await simBehindProxy('ratelimit-rules', lose);
      expect(proxy.lost.map((l) => l.kind).sort()).toEqual(['504', 'drop']);
      expect(run.failures).toBe('');
      expectNotJudged(run, 'rate limit: cost > 1 counts its cost, a refusal counts nothing');
      expectNotJudged(run, 'multiLimit: all or nothing');
      expect(run.report.resources?.unexpectedlyLeft).toBe(0);
      // The rules only those two checks judge are not counted as exercised: the report lists them apart.
      expect(run.report.rules?.notJudged?.map((r) => r.id)).toEqual(['ratelimit.limit-exact', 'ratelimit.cost-many', 'ratelimit.multi-all-or-nothing']);
      expect(run.report.rules?.exercised.map((r) => r.id)).toEqual(['ratelimit.cost-zero', 'ratelimit.override-exact', 'ratelimit.override-wildcard']);
    },
    RUN_LIMIT_MS,
  );

  test(
    'credits-drain: its end-of-run balance reads that never came are not judged (it judged on nothing or crashed)',
    async () => {
      // No warm-up: every getKey is an end-of-run read.
      const { run, proxy } = await simBehindProxy('credits-drain', (path, n) => (path === GET_KEY ? (n % 2 === 0 ? 'drop' : '504') : undefined), { rate: 40 });
      expect(proxy.lost.length).toBeGreaterThan(0);
      expect(run.failures).toBe('');
      expectNotJudged(run, 'balances drained');
      expectNotJudged(run, 'credits consumed = VALID answers');
      // Not judged is not passed: inconclusive (97), never failed.
      expect(run.exit).toBe(EXIT.generatorLimited);
    },
    RUN_LIMIT_MS,
  );

  test(
    'plan-change: its end-of-run reads that never came are not judged (it judged on nothing or crashed)',
    async () => {
      // No warm-up: the plan change reads its 8 keys once, then every getKey is an end-of-run read.
      const { run, proxy } = await simBehindProxy('plan-change', (path, n) => (path === GET_KEY && n > 8 ? (n % 2 === 0 ? 'drop' : '504') : undefined), {
        rate: 60,
        durationMs: 1_500,
      });
      expect(proxy.lost.length).toBeGreaterThan(0);
      expect(run.failures).toBe('');
      expectNotJudged(run, 'VALID answers = free credits used + new allocation used');
      expectNotJudged(run, 'every key on the pro plan with credits left');
      // Not judged is not passed: inconclusive (97), never failed.
      expect(run.exit).toBe(EXIT.generatorLimited);
    },
    RUN_LIMIT_MS,
  );

  test(
    'identities-crud: a page of the final walk that never came is not judged, not a failed or crashed check',
    async () => {
      // The end-of-run walk asks for pages of 100 (the mix's are smaller, the pre-flight's of 1): lose them all.
      const { run, proxy } = await simBehindProxy(
        'identities-crud',
        (path, _n, body) => (path === '/v2/identities.listIdentities' && body.includes('"limit":100') ? '504' : undefined),
        { rate: 20 },
      );
      expect(proxy.lost.length).toBeGreaterThan(0);
      expectNotJudged(run, 'pages in ascending id order, no duplicates');
      expectNotJudged(run, 'creations add up');
      expect(run.report.checks.filter((c) => !c.passed && c.name !== 'per-response checks')).toEqual([]);
    },
    RUN_LIMIT_MS,
  );
});
