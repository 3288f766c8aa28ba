/**
 * plan-change: keys on a small "free" allocation are verified until they run out, then upgraded
 * with updateKey (a new allocation, docs/service-model.md#updating-a-key) while verifications keep
 * arriving, then used on the "pro" allocation.
 *
 *   free plan    verifications spread round-robin; each key admits its free credits, then refuses.
 *   plan change  before it, each key's leftover is read and set to 0 (the free period is over), so
 *                every VALID from here on is paid by the new allocation. The load then mixes
 *                verifications with one updateKey per key, {credits: {remaining: ALLOC}}: a
 *                verification is refused before its key's upgrade lands and admitted after.
 *   pro plan     every key is upgraded (stragglers in `before`): every verification is VALID.
 *
 * The end-of-run check is exact whatever the interleaving: VALID answers = free credits used +
 * (ALLOC − final balance) summed over the keys. The warm-up only reads keys.
 *
 * Under a promise set whose regions drift (`--consistency production`) a region's counter and
 * its late debits would blur the three stages, so the regions converge (support/promised.ts)
 * before the leftovers are read, before the pro plan and before the final reads; and the free
 * plan may admit more than the free credits by what the regions could over-spend (a bound from
 * the free credits and the regions the answers named), which the database, never below 0, does
 * not count.
 */
import {
  type CreatedKey,
  LostAnswers,
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  callOutcome,
  checkResult,
  codeCount,
  createKey,
  createTaggedApi,
  cutOff,
  defineScenario,
  isInt,
  isRecord,
  notJudged,
  okData,
  readOutcome,
  shown,
  withoutAnswer,
  withoutAnswerText,
} from '../src/index.js';
import { plannedCount } from './support/common.js';
import { readKeys, remainingOf } from './support/final-reads.js';
import { convergeBefore, convergeBeforeFinalReads, exactly, overSpendAllowance, regionsCounted } from './support/promised.js';

const KEYS = 8;

type Stage = 'warm-up' | 'free' | 'change' | 'pro';

interface PlanKey extends CreatedKey {
  free: number;
  /** Balance left when the free period ended (read before it was set to 0). */
  leftover: number | undefined;
  /** updateKey calls that set the new allocation (must end at exactly 1). */
  upgrades: number;
  /** Verifications sent to it during the free plan. */
  freeAsked: number;
  /** Its straggler's upgrade (the pro plan's `before`) got no answer: it may still be at 0, so USAGE_EXCEEDED is no error. */
  upgradeUnknown?: boolean;
}

interface PlanFixtures {
  keys: PlanKey[];
  alloc: number;
  stage: Stage;
  next: number;
  /** Keys whose upgrade has not been sent yet. */
  pending: PlanKey[];
  phaseMs: number;
  /** Why the plan change's own calls (the leftover reads, the sets to 0, the stragglers' upgrades) got no answer (plain data: fixtures may be shared). */
  lost: string[];
  /** The regions that answered the verifications (x-keysim-region), for the over-spend bound. */
  regions: string[];
}

function keyOf(f: PlanFixtures, keyId: unknown): PlanKey | undefined {
  return f.keys.find((k) => k.keyId === keyId);
}

const verifyEntry: MixEntry<PlanFixtures> = {
  name: 'verifyKey',
  weight: 20,
  build(f) {
    const key = f.keys[f.next++ % f.keys.length] as PlanKey;
    if (f.stage === 'free') key.freeAsked++;
    return { op: 'keys.verifyKey', body: { key: key.key } };
  },
  check(r, f) {
    if (r.region !== undefined && !f.regions.includes(r.region)) f.regions.push(r.region);
    const d = okData(r);
    if (typeof d === 'string') return d;
    const key = keyOf(f, d.keyId);
    if (key === undefined) return `keyId ${String(d.keyId)} is not one of the run's keys`;
    if (!isInt(d.credits) || d.credits < 0) return `credits ${String(d.credits)}`;
    const valid = d.code === 'VALID' && d.valid === true;
    const exceeded = d.code === 'USAGE_EXCEEDED' && d.valid === false;
    switch (f.stage) {
      case 'free':
        if (valid && d.credits < key.free) return undefined;
        return exceeded && d.credits === 0 ? undefined : `free plan: expected VALID below ${key.free} or USAGE_EXCEEDED at 0, got ${shown(r)}`;
      case 'change':
        if (valid && d.credits < f.alloc) return undefined;
        return exceeded && d.credits === 0 ? undefined : `during the plan change: expected VALID below ${f.alloc} or USAGE_EXCEEDED at 0, got ${shown(r)}`;
      default:
        if (exceeded && d.credits === 0 && key.upgradeUnknown === true) return undefined;
        return valid && d.credits < f.alloc ? undefined : `pro plan: expected VALID below ${f.alloc}, got ${shown(r)}`;
    }
  },
};

const upgradeEntry: MixEntry<PlanFixtures> = {
  name: 'updateKey (plan change)',
  weight: 2,
  build(f, random) {
    const key = f.pending.shift();
    if (key === undefined) {
      // Every key already has its new allocation: touch only the metadata, which keeps the balance.
      return { op: 'keys.updateKey', body: { keyId: (f.keys[random.int(f.keys.length)] as PlanKey).keyId, meta: { plan: 'pro' } } };
    }
    key.upgrades++;
    return { op: 'keys.updateKey', body: { keyId: key.keyId, credits: { remaining: f.alloc }, meta: { plan: 'pro' } } };
  },
  check(r) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    return Object.keys(d).length === 0 ? undefined : `expected data {}, got ${shown(r)}`;
  },
};

const readOnlyMix: ReadonlyArray<MixEntry<PlanFixtures>> = [
  {
    name: 'getKey (free plan)',
    weight: 1,
    build: (f, random) => ({ op: 'keys.getKey', body: { keyId: (f.keys[random.int(f.keys.length)] as PlanKey).keyId } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const key = keyOf(f, d.keyId);
      return key !== undefined && isRecord(d.credits) && d.credits.remaining === key.free ? undefined : `expected the free allocation, got ${shown(r)}`;
    },
  },
];

async function setup(ctx: ScenarioContext): Promise<PlanFixtures> {
  const phaseMs = Math.max(300, Math.floor(ctx.settings.durationMs / 3));
  const perPhase = plannedCount(ctx.settings.rate, phaseMs);
  // Half of what the free phase asks of each key, so each runs dry in it.
  const free = Math.max(1, Math.floor(perPhase / KEYS / 2));
  // More than the two later phases could ever spend, so the pro plan never refuses. The closed
  // model's pace is not planned (it sends as fast as answers come back), so it gets a plenty
  // no run of this length can spend.
  const alloc = ctx.settings.model === 'closed' ? 100_000_000 : Math.max(1_000, 2 * 2 * perPhase);
  const apiId = await createTaggedApi(ctx, 'plan-change');
  const keys: PlanKey[] = [];
  for (let i = 0; i < KEYS; i++) {
    const created = await createKey(ctx, { apiId, name: `${ctx.tag}-plan-${i}`, meta: { plan: 'free' }, credits: { remaining: free } });
    keys.push({ ...created, free, leftover: undefined, upgrades: 0, freeAsked: 0 });
  }
  return { keys, alloc, stage: 'warm-up', next: 0, pending: [...keys], phaseMs, lost: [], regions: [] };
}

function phases(ctx: ScenarioContext, f: PlanFixtures): ReadonlyArray<PhaseSpec<PlanFixtures>> {
  const list: PhaseSpec<PlanFixtures>[] = [];
  if (ctx.settings.warmupMs > 0) list.push({ name: 'warm-up (reads only)', durationMs: ctx.settings.warmupMs, warmup: true, mix: readOnlyMix });
  list.push(
    {
      name: 'free plan',
      durationMs: f.phaseMs,
      mix: [verifyEntry],
      async before(_c, fx) {
        fx.stage = 'free';
      },
    },
    {
      name: 'plan change',
      durationMs: f.phaseMs,
      mix: [verifyEntry, upgradeEntry],
      async before(c, fx) {
        // A call whose answer never came leaves the free period's end unknown: the checks on it say
        // "not judged" at the end instead of ending the run here.
        await convergeBefore(c, "the free plan's leftovers are read");
        for (const key of fx.keys) {
          const read = await readOutcome(c, 'keys.getKey', { keyId: key.keyId });
          if (read.answered) {
            const remaining = remainingOf(okData(read.response));
            key.leftover = remaining === null || Number.isNaN(remaining) ? undefined : remaining;
          } else fx.lost.push(read.why);
          const set = await callOutcome(c, 'keys.updateCredits', { keyId: key.keyId, operation: 'set', value: 0 });
          if (!set.answered) fx.lost.push(set.why);
          else if (set.response.status !== 200) throw new Error(`keys.updateCredits set 0 on ${key.keyId} answered ${shown(set.response)}`);
        }
        fx.stage = 'change';
      },
    },
    {
      name: 'pro plan',
      durationMs: f.phaseMs,
      mix: [verifyEntry],
      async before(c, fx) {
        for (const key of fx.pending.splice(0)) {
          key.upgrades++;
          const upgrade = await callOutcome(c, 'keys.updateKey', { keyId: key.keyId, credits: { remaining: fx.alloc }, meta: { plan: 'pro' } });
          if (!upgrade.answered) {
            fx.lost.push(upgrade.why);
            key.upgradeUnknown = true;
          } else if (upgrade.response.status !== 200) throw new Error(`keys.updateKey on ${key.keyId} answered ${shown(upgrade.response)}`);
        }
        // A region's counter of the plan change (at 0) lives on until it expires.
        await convergeBefore(c, 'the pro plan');
        fx.stage = 'pro';
      },
    },
  );
  return list;
}

export default defineScenario<PlanFixtures>({
  name: 'plan-change',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['keys.update-allocation', 'credits.valid-decrements', 'credits.exceeded-keeps-balance'],
  description: 'Keys run dry on a free allocation, get a new one from updateKey mid-load, then must all verify VALID',
  defaults: { rate: 300, durationMs: 9_000, warmupMs: 1_000 },
  setup,
  mix: [verifyEntry],
  phases,
  async finish(ctx, f, results) {
    const verify = results.operation('keys.verifyKey');
    const valid = codeCount(verify, 'VALID');
    const updates = results.operation('keys.updateKey');
    // Transport errors, or cut off at the end of a closed-model phase: either may have taken effect.
    const lost = withoutAnswer(verify) + withoutAnswer(updates);
    await convergeBeforeFinalReads(ctx);
    const reads = await readKeys(
      ctx,
      f.keys.map((k) => k.keyId),
    );
    const finals = reads.data.map((d) => ({ remaining: remainingOf(d), meta: d === undefined || typeof d === 'string' ? undefined : d.meta }));
    const usedFree = f.keys.reduce((n, k) => n + k.free - (k.leftover ?? k.free), 0);
    const usedPro = finals.reduce((n, d) => n + f.alloc - (d.remaining ?? f.alloc), 0);
    const upgradedOnce = f.keys.every((k) => k.upgrades === 1);
    const allPro = finals.every((d) => isRecord(d.meta) && d.meta.plan === 'pro' && isInt(d.remaining) && d.remaining > 0);
    // What the checks below stand on and never came: the plan change's own calls, the reads at the end.
    const change = new LostAnswers();
    for (const why of f.lost) change.note(why);
    const unknown = new LostAnswers();
    for (const [why, n] of [...change.reasons, ...reads.lost.reasons]) for (let i = 0; i < n; i++) unknown.note(why);
    // What the regions may over-spend of the free credits under the promise set in force (0 under
    // exact): the database, never below 0, counts none of it.
    const regions = regionsCounted(new Set(f.regions), ctx.promises);
    const allowed = overSpendAllowance(
      f.keys.map((k) => Math.min(k.free, k.freeAsked)),
      regions,
      f.phaseMs,
      ctx.promises,
    );
    const promised = exactly(ctx) ? '' : `; ${ctx.promises.name} promises: up to ${allowed} more VALID on the free plan from ${regions} regions' counters`;
    const expectedValid = usedFree + usedPro;
    const judged = (name: string, passed: boolean, detail: string, needsFinals = true) => {
      const missing = needsFinals ? unknown : change;
      return missing.count > 0 ? notJudged(name, missing.count, missing.text()) : checkResult(name, passed, detail);
    };
    return [
      judged(
        'VALID answers = free credits used + new allocation used',
        lost === 0 && allowed === 0 ? valid === expectedValid : valid >= expectedValid - lost && valid <= expectedValid + allowed + lost,
        `${valid} VALID; ${usedFree} of ${f.keys.length * (f.keys[0]?.free ?? 0)} free credits and ${usedPro} of ${f.keys.length} × ${f.alloc} new credits used; ${withoutAnswerText(lost, cutOff(verify) + cutOff(updates))}${promised}`,
      ),
      checkResult('every key upgraded exactly once', upgradedOnce, f.keys.map((k) => `${k.keyId}: ${k.upgrades}`).join(', ')),
      judged('every key on the pro plan with credits left', allPro, finals.map((d) => `${JSON.stringify(d.meta)} ${String(d.remaining)}`).join('; ')),
      judged(
        'each key admitted min(free credits, verifications) on the free plan',
        lost > 0 || f.keys.every((k) => k.leftover === k.free - Math.min(k.free, k.freeAsked)),
        f.keys.map((k) => `${k.leftover ?? '?'} left of ${k.free} after ${k.freeAsked}`).join(', '),
        false,
      ),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
