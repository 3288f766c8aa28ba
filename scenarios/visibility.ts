/**
 * visibility: how long a change made through one region (or connection) takes to be seen through
 * the others, per kind of change, against the production service's promises: a credit update
 * (set) within 60 s, a key disabled (updateKey enabled: false) or deleted within 10 s — each plus
 * MARGIN_MS for the poll's step and one revalidating request.
 *
 * Each repetition of a kind makes a fresh key, verifies it at cost 0 in every lane (so that every
 * region holds it in its caches and counters, as a busy key is held), makes the change in lane 1,
 * and then asks every lane (verifyKey cost 0) every POLL_MS until all of them show the change, at
 * most KEYSIM_VISIBILITY_MAX_WAIT (default 90s) per change. The lag is the time from the change's
 * answer to the round in which the last lane showed it, on the service clock when the target has
 * one (a simulator with a manual clock is moved, nothing waits), else on this machine's clock.
 * KEYSIM_VISIBILITY_REPEATS (default 3) repetitions per kind; p50/p95/max in the checks' detail.
 * A change never seen within the max wait fails when the max wait exceeds the promise, and is not
 * judged when it does not.
 */
import { type CheckResult, type ScenarioContext, checkResult, createKey, createTaggedApi, defineScenario, okData, shown } from '../src/index.js';
import { type Lanes, type ScenarioTime, everyLane, lagSummary, laneCall, lanesOf, scenarioTime } from './support/lanes.js';
import { durationEnv } from './support/target-time.js';

const CREDITS = 100;
const SET_TO = 50;
const POLL_MS = 1_000;
/** Added to every promise: the poll's step, and the one request a stale cache still answers before it is read again. */
const MARGIN_MS = 5_000;

type Kind = 'credits' | 'disable' | 'delete';

interface KindSpec {
  kind: Kind;
  title: string;
  promiseMs: number;
  rules: string[];
  /** The change, made in lane 1. */
  change(keyId: string): { op: 'keys.updateCredits' | 'keys.updateKey' | 'keys.deleteKey'; body: unknown };
  /** Whether a cost-0 verification's data shows the change. */
  shows(data: Record<string, unknown>): boolean;
}

const KINDS: readonly KindSpec[] = [
  {
    kind: 'credits',
    title: `a credit update (set ${SET_TO})`,
    promiseMs: 60_000,
    rules: ['credits.update-credits'],
    change: (keyId) => ({ op: 'keys.updateCredits', body: { keyId, operation: 'set', value: SET_TO } }),
    shows: (d) => d.credits === SET_TO,
  },
  {
    kind: 'disable',
    title: 'a key disabled',
    promiseMs: 10_000,
    rules: ['verify.disabled'],
    change: (keyId) => ({ op: 'keys.updateKey', body: { keyId, enabled: false } }),
    shows: (d) => d.code === 'DISABLED',
  },
  {
    kind: 'delete',
    title: 'a key deleted',
    promiseMs: 10_000,
    rules: ['keys.delete', 'verify.not-found'],
    change: (keyId) => ({ op: 'keys.deleteKey', body: { keyId } }),
    shows: (d) => d.code === 'NOT_FOUND',
  },
];

interface VisibilityFixtures {
  apiId: string;
  /** A key the load reads (cost 0) while nothing is measured. */
  key: string;
}

/** One change: its lag, or why it has none. */
type Measured = { lagMs: number } | { neverMs: number; lanes: string[] } | { unknown: string };

/** Makes a fresh key, held in every lane, changes it in lane 1, polls every lane until all show it. */
async function measureOnce(ctx: ScenarioContext, lanes: Lanes, time: ScenarioTime, spec: KindSpec, apiId: string, maxWaitMs: number): Promise<Measured> {
  const { keyId, key } = await createKey(ctx, { apiId, name: `${ctx.tag}-visibility-${spec.kind}`, credits: { remaining: CREDITS } });
  const verify = { key, credits: { cost: 0 } };
  // Every lane holds the key before the change, as the regions of a busy key do.
  for (const outcome of await everyLane(ctx, lanes, 'keys.verifyKey', verify)) {
    if (!outcome.answered) return { unknown: `a verification before the change never came (${outcome.why})` };
  }
  const { op, body } = spec.change(keyId);
  const changed = await laneCall(ctx, lanes, 1, op, body);
  if (!changed.answered) return { unknown: `${op} never came (${changed.why})` };
  if (changed.response.status !== 200) return { unknown: `${op} was refused: ${shown(changed.response)}` };
  const startMs = await time.now();
  const seen = new Set<number>();
  for (;;) {
    const outcomes = await everyLane(ctx, lanes, 'keys.verifyKey', verify);
    const elapsedMs = (await time.now()) - startMs;
    outcomes.forEach((outcome, i) => {
      const d = outcome.answered ? okData(outcome.response) : undefined;
      if (d !== undefined && typeof d !== 'string' && spec.shows(d)) seen.add(i + 1);
    });
    if (seen.size === lanes.count) return { lagMs: elapsedMs };
    if (elapsedMs >= maxWaitMs) {
      const unseen = Array.from({ length: lanes.count }, (_, i) => i + 1).filter((lane) => !seen.has(lane));
      return { neverMs: elapsedMs, lanes: unseen.map((lane) => lanes.label(lane)) };
    }
    await time.pass(Math.min(POLL_MS, maxWaitMs - elapsedMs));
  }
}

/** The check of one kind over its repetitions. */
function judgeKind(spec: KindSpec, results: readonly Measured[], maxWaitMs: number, time: ScenarioTime): CheckResult {
  const name = `${spec.title} is seen everywhere within ${spec.promiseMs / 1000} s`;
  const limitMs = spec.promiseMs + MARGIN_MS;
  const lags = results.flatMap((r) => ('lagMs' in r ? [r.lagMs] : []));
  const never = results.flatMap((r) => ('neverMs' in r ? [r] : []));
  const unknown = results.flatMap((r) => ('unknown' in r ? [r.unknown] : []));
  const parts = [`lag ${lagSummary(lags)} over ${lags.length} changes (${time.source}${time.moved ? ', moved' : ''}), promise ${limitMs / 1000} s with margin`];
  if (never.length > 0) parts.push(`never seen within ${maxWaitMs / 1000} s in ${never.map((n) => n.lanes.join(', ')).join('; ')}`);
  if (unknown.length > 0) parts.push(`not judged: ${unknown.join('; ')}`);
  const late = lags.filter((lag) => lag > limitMs);
  if (late.length > 0) parts.unshift(`${late.length} changes seen later than the promise`);
  // A change never seen breaks the promise only when the scenario waited longer than it.
  const neverBreaks = never.length > 0 && maxWaitMs > limitMs;
  return checkResult(name, late.length === 0 && !neverBreaks, parts.join('; '), spec.rules);
}

export default defineScenario<VisibilityFixtures>({
  name: 'visibility',
  rules: ['credits.update-credits', 'verify.disabled', 'keys.delete', 'verify.not-found'],
  description: 'Live-safe: how long a credit update, a key disabled and a key deleted take to be seen in every region (or over several connections)',
  defaults: { rate: 2, durationMs: 1_000, warmupMs: 0 },
  async setup(ctx) {
    const apiId = await createTaggedApi(ctx, 'visibility');
    const { key } = await createKey(ctx, { apiId, name: `${ctx.tag}-visibility-load`, credits: { remaining: CREDITS } });
    return { apiId, key };
  },
  // The load only reads one key of its own (cost 0); the measurements come after it.
  mix: [{ name: 'verifyKey cost 0', weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key, credits: { cost: 0 } } }) }],
  async finish(ctx, f) {
    const maxWaitMs = durationEnv('KEYSIM_VISIBILITY_MAX_WAIT', '90s');
    const repeats = Math.max(1, Math.round(Number(process.env.KEYSIM_VISIBILITY_REPEATS ?? '3')) || 3);
    const lanes = await lanesOf(ctx);
    const time = await scenarioTime(ctx);
    ctx.log(
      `visibility: ${lanes.count} ${lanes.regions === undefined ? 'connections (the target names no regions)' : 'regions'}, ${repeats} changes per kind, at most ${maxWaitMs / 1000} s each`,
    );
    const checks: CheckResult[] = [];
    for (const spec of KINDS) {
      const results: Measured[] = [];
      for (let i = 0; i < repeats; i++) {
        const measured = await measureOnce(ctx, lanes, time, spec, f.apiId, maxWaitMs);
        results.push(measured);
        // A change never seen is not asked again: each would wait the whole max wait.
        if ('neverMs' in measured) break;
      }
      checks.push(judgeKind(spec, results, maxWaitMs, time));
    }
    return checks;
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
