/**
 * convergence: after a short load of verifications and credit updates over several keys and every
 * region, and a quiet period, every key's balance is what the answers imply.
 *
 * Set-up makes KEYS keys with CREDITS credits and sets each (updateCredits set) in a region of its
 * own, before any load: a set does not commute with a verification, so it comes first. The load
 * (two phases) verifies the keys at cost 1 over the run's connections; between its phases each key
 * gets an increment and a decrement, in different regions (they commute with verifications while
 * no balance reaches 0, which the small load guarantees). Then a quiet period of KEYSIM_CONVERGENCE_QUIET
 * (default 75 s: a region's counter life, 60 s, plus its key cache, 10 s, plus a margin) — the
 * clock is moved on a simulator with a manual clock, waited for otherwise — and the final reads.
 *
 * The model per key: set value − VALID answers + increments − decrements, from the answers this
 * scenario received. A verification sent whose answer never came (its debit unknown) makes the key
 * unknown: not judged, never failed.
 *
 * What "converged" means: on a target that names no regions (the exact simulator, a live
 * deployment), keys.getKey equals the model. On a target that names its regions (the production
 * profile), the promise is that after the quiet period every region reads the balance the
 * database holds: a cost-0 verification in every region must agree with keys.getKey. Regions that
 * over-spent a key may have been floored at 0 in the database, so the exact arithmetic is reported
 * there (the difference from the model) but not judged.
 */
import {
  type CheckResult,
  type MixEntry,
  type ScenarioContext,
  checkResult,
  createKey,
  createTaggedApi,
  defineScenario,
  isInt,
  okData,
  shown,
} from '../src/index.js';
import { readKeys, remainingOf } from './support/final-reads.js';
import { type Lanes, laneCall, lanesOf, scenarioTime } from './support/lanes.js';
import { durationEnv } from './support/target-time.js';

const KEYS = 4;
const CREDITS = 1_000;
const SET_BASE = 500;
const INCREMENT = 7;
const DECREMENT = 3;

interface ConvergenceKey {
  keyId: string;
  key: string;
  /** The balance the answers imply; undefined once an answer that never came makes it unknown. */
  expected: number | undefined;
  /** Why it is unknown. */
  unknown: string | undefined;
  /** Verifications built and answered by the load (a difference: answers that never came). */
  sent: number;
  answered: number;
  valid: number;
}

interface ConvergenceFixtures {
  keys: ConvergenceKey[];
  cursor: number;
}

/** An update through a lane; applied to the model when answered 200, the key unknown when no answer came. */
async function update(
  ctx: ScenarioContext,
  lanes: Lanes,
  lane: number,
  k: ConvergenceKey,
  operation: 'set' | 'increment' | 'decrement',
  value: number,
): Promise<void> {
  const outcome = await laneCall(ctx, lanes, lane, 'keys.updateCredits', { keyId: k.keyId, operation, value });
  if (!outcome.answered) {
    k.expected = undefined;
    k.unknown ??= `updateCredits ${operation} never came (${outcome.why})`;
    return;
  }
  if (outcome.response.status !== 200) throw new Error(`keys.updateCredits ${operation} ${value} on ${k.keyId} was refused: ${shown(outcome.response)}`);
  if (k.expected === undefined) return;
  k.expected = operation === 'set' ? value : operation === 'increment' ? k.expected + value : k.expected - value;
}

const verifyEntry: MixEntry<ConvergenceFixtures> = {
  name: 'verifyKey cost 1',
  weight: 1,
  build(f) {
    const k = f.keys[f.cursor++ % f.keys.length] as ConvergenceKey;
    k.sent++;
    return { op: 'keys.verifyKey', body: { key: k.key, credits: { cost: 1 } } };
  },
  check(r, f) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    const k = f.keys.find((key) => key.key !== '' && key.keyId === d.keyId);
    if (k === undefined) return `keyId ${String(d.keyId)} is not one of the scenario's keys`;
    k.answered++;
    if (d.code === 'VALID') k.valid++;
    return d.code === 'VALID' ? undefined : `expected VALID (the keys hold far more credits than the load spends), got ${shown(r)}`;
  },
};

/** The final verdict of one key. */
function judgeKey(k: ConvergenceKey, index: number, lanes: Lanes, balance: number | null, regionReads: Array<number | string>): CheckResult {
  const name = `key ${index + 1} converged`;
  const lost = k.sent - k.answered;
  const expected = k.expected === undefined || lost > 0 ? undefined : k.expected - k.valid;
  const why = k.unknown ?? (lost > 0 ? `${lost} verifications' answers never came` : undefined);
  if (typeof balance !== 'number') return checkResult(name, false, `${k.keyId}: keys.getKey shows no balance (${String(balance)})`);
  const model = expected === undefined ? `the model is unknown (${why ?? ''})` : `the answers imply ${expected} (difference ${balance - expected})`;
  if (lanes.regions !== undefined) {
    const apart = regionReads.flatMap((read, i) => (read === balance ? [] : [`${lanes.label(i + 1)} reads ${String(read)}`]));
    return checkResult(
      name,
      apart.length === 0,
      `${k.keyId}: ${apart.length === 0 ? `every region reads ${balance}, as the database` : `the database holds ${balance}, but ${apart.join(', ')}`}; ${model}`,
    );
  }
  if (expected === undefined) return checkResult(name, true, `not judged: ${k.keyId} reads ${balance}; ${model}`);
  return checkResult(
    name,
    balance === expected,
    `${k.keyId}: ${balance === expected ? `${balance}, as the answers imply` : `not converged: reads ${balance}, ${model}`}`,
  );
}

export default defineScenario<ConvergenceFixtures>({
  name: 'convergence',
  rules: ['credits.valid-decrements', 'credits.update-credits'],
  description: 'Live-safe: verifications and credit updates over keys and regions, a quiet period, then balances as the answers imply (regions agreeing)',
  defaults: { rate: 20, durationMs: 2_000, warmupMs: 0 },
  async setup(ctx) {
    const lanes = await lanesOf(ctx);
    const apiId = await createTaggedApi(ctx, 'convergence');
    const keys: ConvergenceKey[] = [];
    for (let i = 0; i < KEYS; i++) {
      const created = await createKey(ctx, { apiId, name: `${ctx.tag}-convergence-${i + 1}`, credits: { remaining: CREDITS } });
      const k: ConvergenceKey = { ...created, expected: CREDITS, unknown: undefined, sent: 0, answered: 0, valid: 0 };
      await update(ctx, lanes, i + 1, k, 'set', SET_BASE + i);
      keys.push(k);
    }
    return { keys, cursor: 0 };
  },
  mix: [verifyEntry],
  phases: (ctx) => [
    { name: 'verifications', durationMs: Math.max(200, Math.round(ctx.settings.durationMs / 2)) },
    {
      name: 'verifications after increments and decrements',
      durationMs: Math.max(200, Math.round(ctx.settings.durationMs / 2)),
      async before(c, f) {
        const lanes = await lanesOf(c);
        for (const [i, k] of f.keys.entries()) {
          await update(c, lanes, i + 2, k, 'increment', INCREMENT);
          await update(c, lanes, i + 3, k, 'decrement', DECREMENT);
        }
      },
    },
  ],
  async finish(ctx, f) {
    const quietMs = durationEnv('KEYSIM_CONVERGENCE_QUIET', '75s');
    const lanes = await lanesOf(ctx);
    const time = await scenarioTime(ctx);
    await time.pass(quietMs);
    ctx.log(`convergence: ${quietMs / 1000} s of quiet on the ${time.source}${time.moved ? ' (moved, not waited)' : ''}`);
    const reads = await readKeys(
      ctx,
      f.keys.map((k) => k.keyId),
    );
    const checks: CheckResult[] = [];
    for (const [i, k] of f.keys.entries()) {
      const balance = remainingOf(reads.data[i]);
      if (reads.data[i] === undefined) {
        checks.push(checkResult(`key ${i + 1} converged`, true, `not judged: keys.getKey of ${k.keyId} never came (${reads.lost.text()})`));
        continue;
      }
      const regionReads: Array<number | string> = [];
      if (lanes.regions !== undefined) {
        for (let lane = 1; lane <= lanes.count; lane++) {
          const outcome = await laneCall(ctx, lanes, lane, 'keys.verifyKey', { key: k.key, credits: { cost: 0 } });
          const d = outcome.answered ? okData(outcome.response) : `never came (${outcome.why})`;
          regionReads.push(typeof d === 'string' ? d : isInt(d.credits) ? d.credits : shown(outcome.answered ? outcome.response : { status: 0, body: d }));
        }
      }
      checks.push(judgeKey(k, i, lanes, balance, regionReads));
    }
    return checks;
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
