/**
 * refill-midnight: daily and monthly refills across the next real UTC midnight of the target, for
 * live targets (on the simulator, a frozen clock is moved there instead of waited for).
 *
 * The target's time comes from its `Date` header (support/target-time.ts). The scenario waits,
 * with a progress line every 30 s, until KEYSIM_MIDNIGHT_LEAD (default 10 s) before the target's
 * next UTC midnight, and refuses to wait longer than KEYSIM_MIDNIGHT_MAX_WAIT (default 10m): it
 * then fails at once, saying when to start it instead. Shortly before midnight it creates three
 * keys with 10 credits: a daily refill to 100; a monthly refill to 100 on the day that begins at
 * midnight (`refillDay` = tomorrow's day); and a monthly one due another day. Each is verified
 * once before midnight (10 → 9), watched with cost-0 verifications across it, and verified again
 * after midnight + KEYSIM_REFILL_TOLERANCE (default 0s; a deployment that refills with a batch job
 * gets that long; a promise set's refillLagMs, when longer, the same): the first two must read 99 (replaced by 100, then one verification), the third
 * 8. A refill seen before midnight, a missing one (refilled at another hour, a month skipped) and
 * one that adds instead of replacing all fail with the balances that show it.
 *
 * Keys made, or first verified, too close to midnight for the placement to be sure (a slow
 * machine) make the affected check inconclusive, never red; `createdAt` (service time) decides.
 */
import {
  type CreatedKey,
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  answerEffectUnknown,
  callOutcome,
  checkResult,
  createKey,
  createTaggedApi,
  defineScenario,
  isInt,
  iso,
  moveClockTo,
  okData,
  readOutcome,
  shown,
  sleep,
} from '../src/index.js';
import { type TargetTime, durationEnv, targetTime } from './support/target-time.js';

const DAY_MS = 86_400_000;
const INITIAL = 10;
const AMOUNT = 100;
/** The final verification comes this long after midnight + tolerance (+ the clock's uncertainty), not later: a refill later than that is late. */
const SETTLE_MS = 250;
const PROGRESS_EVERY_MS = 30_000;

type Kind = 'daily' | 'monthly-due' | 'monthly-other';

interface MidnightKey extends CreatedKey {
  kind: Kind;
  refillDay: number | undefined;
  createdAtMs: number | undefined;
  /** The verification before midnight; `unknown`: its answer never came (it may have spent its credit, before or after midnight). */
  before: { credits: number | undefined; completeWall: number; unknown?: boolean } | undefined;
  /** Cost-0 readings: local wall time at the answer, and the balance. */
  seen: Array<{ wall: number; credits: number }>;
}

interface MidnightFixtures {
  midnightMs: number;
  time: TargetTime;
  /** How long after midnight a refill may still be unseen: KEYSIM_REFILL_TOLERANCE, or the promise set's refillLagMs when longer. */
  toleranceMs: number;
  /** Where toleranceMs comes from, for the details: "1000 ms tolerance", "60000 ms (refillLagMs of the production promises)". */
  toleranceText: string;
  manualClock: boolean;
  keys: MidnightKey[];
  /** Service time when setup ended (the simulator's sweep starts there). */
  serviceAfterSetupMs: number;
}

const wallOf = (f: MidnightFixtures, serviceMs: number): number => serviceMs - f.time.offsetMs;

async function waitForLead(ctx: ScenarioContext, time: TargetTime, startMs: number, midnightMs: number): Promise<void> {
  let lastLog = Number.NEGATIVE_INFINITY;
  for (;;) {
    const left = startMs - (Date.now() + time.offsetMs);
    if (left <= 0) return;
    if (Date.now() - lastLog >= PROGRESS_EVERY_MS) {
      lastLog = Date.now();
      ctx.log(`refill-midnight: ${Math.ceil(left / 1000)} s to wait until ${iso(startMs)}, shortly before the target's UTC midnight ${iso(midnightMs)}`);
    }
    await sleep(Math.min(left, 1_000));
  }
}

async function setup(ctx: ScenarioContext): Promise<MidnightFixtures> {
  const leadMs = Math.max(3_000, durationEnv('KEYSIM_MIDNIGHT_LEAD', '10s'));
  const maxWaitMs = durationEnv('KEYSIM_MIDNIGHT_MAX_WAIT', '10m');
  // A deployment that promises its refills up to refillLagMs late (docs/consistency.md) is read
  // after that; under exact the lag is 0 and only KEYSIM_REFILL_TOLERANCE counts.
  const envToleranceMs = durationEnv('KEYSIM_REFILL_TOLERANCE', '0s');
  const lagMs = ctx.promises.refillLagMs;
  const toleranceMs = Math.max(envToleranceMs, lagMs);
  const toleranceText = lagMs > envToleranceMs ? `${lagMs} ms (refillLagMs of the ${ctx.promises.name} promises)` : `${toleranceMs} ms tolerance`;
  if (lagMs > envToleranceMs) ctx.log(`refill-midnight: ${ctx.promises.name} promises: the refill is read ${lagMs / 1000} s (refillLagMs) after midnight`);
  const manualClock = ctx.admin !== undefined && (await ctx.admin.clockMode()) === 'manual';
  const time = await targetTime(ctx);
  const nowMs = Date.now() + time.offsetMs;
  let midnightMs = (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS;
  if (midnightMs - nowMs < leadMs + time.uncertaintyMs) midnightMs += DAY_MS;
  const startMs = midnightMs - leadMs;
  if (manualClock && ctx.admin !== undefined) {
    await moveClockTo(ctx.admin, startMs);
    ctx.log(`refill-midnight: moved the simulator's clock to ${iso(startMs)}, ${leadMs / 1000} s before midnight`);
  } else {
    const waitMs = startMs - nowMs;
    if (waitMs > maxWaitMs) {
      throw new Error(
        `the target's next UTC midnight is ${iso(midnightMs)}, ${Math.round(waitMs / 60_000)} min from now (its clock read from ${time.source === 'admin' ? 'the admin surface' : 'its Date header'}), ` +
          `and refill-midnight waits at most ${Math.round(maxWaitMs / 60_000)} min (KEYSIM_MIDNIGHT_MAX_WAIT): start it within that of ${iso(startMs)}, or raise KEYSIM_MIDNIGHT_MAX_WAIT`,
      );
    }
    ctx.log(
      `refill-midnight: the target's clock is ${Math.round(time.offsetMs)} ± ${Math.round(time.uncertaintyMs)} ms from this machine's; tolerance for the refill ${toleranceMs} ms`,
    );
    await waitForLead(ctx, time, startMs, midnightMs);
  }
  const tomorrow = new Date(midnightMs).getUTCDate();
  const otherDay = tomorrow === 1 ? 15 : tomorrow - 1;
  const apiId = await createTaggedApi(ctx, 'refill-midnight');
  const specs: Array<{ kind: Kind; refill: Record<string, unknown>; refillDay: number | undefined }> = [
    { kind: 'daily', refill: { interval: 'daily', amount: AMOUNT }, refillDay: undefined },
    { kind: 'monthly-due', refill: { interval: 'monthly', amount: AMOUNT, refillDay: tomorrow }, refillDay: tomorrow },
    { kind: 'monthly-other', refill: { interval: 'monthly', amount: AMOUNT, refillDay: otherDay }, refillDay: otherDay },
  ];
  const keys: MidnightKey[] = [];
  for (const s of specs) {
    const created = await createKey(ctx, { apiId, name: `${ctx.tag}-${s.kind}`, credits: { remaining: INITIAL, refill: s.refill } });
    // A read, asked again when its answer never came; without it the creation instant stays unknown.
    const read = await readOutcome(ctx, 'keys.getKey', { keyId: created.keyId });
    const got = read.answered ? okData(read.response) : undefined;
    const createdAtMs = got !== undefined && typeof got !== 'string' && isInt(got.createdAt) ? got.createdAt : undefined;
    keys.push({ ...created, kind: s.kind, refillDay: s.refillDay, createdAtMs, before: undefined, seen: [] });
  }
  for (const k of keys) {
    const outcome = await callOutcome(ctx, 'keys.verifyKey', { key: k.key });
    if (!outcome.answered || answerEffectUnknown(outcome.response)) {
      ctx.log(
        `refill-midnight: the verification of ${k.keyId} before midnight has an unknown outcome (${outcome.answered ? shown(outcome.response) : outcome.why}); its balance after is judged within both`,
      );
      k.before = { credits: undefined, completeWall: Number.POSITIVE_INFINITY, unknown: true };
      continue;
    }
    const d = okData(outcome.response);
    k.before = { credits: typeof d !== 'string' && isInt(d.credits) ? d.credits : undefined, completeWall: Date.now() };
  }
  const serviceAfterSetupMs = ctx.admin === undefined ? Date.now() + time.offsetMs : await ctx.admin.clockNow();
  return { midnightMs, time, toleranceMs, toleranceText, manualClock, keys, serviceAfterSetupMs };
}

const watchEntry: MixEntry<MidnightFixtures> = {
  name: 'verifyKey cost 0 across midnight',
  weight: 1,
  build: (f, random) => ({ op: 'keys.verifyKey', body: { key: (f.keys[random.int(f.keys.length)] as MidnightKey).key, credits: { cost: 0 } } }),
  check(r, f) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    const key = f.keys.find((k) => k.keyId === d.keyId);
    if (key === undefined || d.code !== 'VALID' || !isInt(d.credits)) return `expected VALID with credits for one of the run's keys, got ${shown(r)}`;
    key.seen.push({ wall: Date.now(), credits: d.credits });
    const allowed = key.kind === 'monthly-other' ? [INITIAL, INITIAL - 1] : [INITIAL, INITIAL - 1, AMOUNT, AMOUNT - 1];
    return allowed.includes(d.credits) ? undefined : `${key.kind} key: ${d.credits} credits, expected one of ${allowed.join(', ')}`;
  },
};

/** The final reading of a key: a verification (cost 1) asked again while its answer never comes. */
interface FinalReading {
  credits: number | undefined;
  /** Verifications before it whose answer never came: each may have spent a credit. */
  unknown: number;
  /** Why the last one never came, when none did. */
  lost: string | undefined;
}

/**
 * Verifications tried for the reading after midnight. Each may spend a credit whose outcome is
 * then unknown (a verification is not a read), so fewer than a read's attempts.
 */
const FINAL_READ_ATTEMPTS = 3;

async function finalReading(ctx: ScenarioContext, k: MidnightKey): Promise<FinalReading> {
  let unknown = 0;
  let why = '';
  for (let attempt = 0; attempt < FINAL_READ_ATTEMPTS; attempt++) {
    const outcome = await callOutcome(ctx, 'keys.verifyKey', { key: k.key });
    if (outcome.answered && !answerEffectUnknown(outcome.response)) {
      const d = okData(outcome.response);
      return { credits: typeof d !== 'string' && isInt(d.credits) ? d.credits : undefined, unknown, lost: undefined };
    }
    unknown++;
    why = outcome.answered ? shown(outcome.response) : outcome.why;
  }
  return { credits: undefined, unknown, lost: why };
}

/** The balances after midnight a correct service may show: `expected` less up to `unknown` debits whose outcome is unknown. */
function allowedFinals(expected: readonly number[], unknown: number): number[] {
  const all = new Set<number>();
  for (const e of expected) for (let u = 0; u <= unknown; u++) all.add(e - u);
  return [...all].sort((a, b) => b - a);
}

/** The check of one key: its balance before, during (cost 0) and after midnight. */
function judge(f: MidnightFixtures, k: MidnightKey, final: FinalReading): { passed: boolean; detail: string } {
  const finalCredits = final.credits;
  const midnightWall = wallOf(f, f.midnightMs);
  const u = f.time.uncertaintyMs;
  const due = k.kind !== 'monthly-other';
  const what = k.kind === 'daily' ? 'daily refill' : `monthly refill on day ${String(k.refillDay)}`;
  if (k.createdAtMs !== undefined ? k.createdAtMs >= f.midnightMs : false) {
    return {
      passed: true,
      detail: `inconclusive: ${k.keyId} was created at ${iso(k.createdAtMs ?? 0)}, after midnight (a slow machine; raise KEYSIM_MIDNIGHT_LEAD)`,
    };
  }
  if (final.lost !== undefined)
    return { passed: true, detail: `not judged: ${k.keyId}'s verification after midnight never came (${final.lost}), ${final.unknown} attempts` };
  const before = k.before?.credits;
  const beforeUnknown = k.before?.unknown === true;
  const beforeSurely = !beforeUnknown && (f.manualClock || (k.before !== undefined && k.before.completeWall < midnightWall - u));
  const early = f.manualClock ? [] : k.seen.filter((s) => s.wall < midnightWall - u && s.credits >= AMOUNT - 1);
  const problems: string[] = [];
  if (early.length > 0 || (beforeSurely && before !== INITIAL - 1)) {
    problems.push(
      `before midnight it read ${early.length > 0 ? String(early[0]?.credits) : String(before)} credits, expected ${INITIAL - 1}: ${due ? 'refilled before the UTC midnight' : 'refilled on a day it is not due'}`,
    );
  }
  // A verification before midnight whose outcome is unknown spent its credit or not, before or after the refill.
  const base = beforeUnknown
    ? due
      ? [AMOUNT - 1, AMOUNT - 2]
      : [INITIAL - 1, INITIAL - 2]
    : [due ? (before === AMOUNT - 1 && !beforeSurely ? AMOUNT - 2 : AMOUNT - 1) : INITIAL - 2];
  const allowed = allowedFinals(base, final.unknown);
  const expected =
    allowed.length === 1
      ? String(allowed[0])
      : `one of ${allowed.join(', ')} (${beforeUnknown ? 'the verification before midnight' : ''}${beforeUnknown && final.unknown > 0 ? ' and ' : ''}${final.unknown > 0 ? `${final.unknown} verifications after it` : ''} without a known outcome)`;
  if (problems.length === 0 && (finalCredits === undefined || !allowed.includes(finalCredits))) {
    const why = !due
      ? 'refilled although not due'
      : finalCredits !== undefined && finalCredits <= INITIAL - 1 && finalCredits >= INITIAL - 2 - final.unknown
        ? `not refilled by ${iso(f.midnightMs + f.toleranceMs)} (a refill at another hour than 00:00 UTC${k.kind === 'monthly-due' ? ', or a month skipped' : ''}?)`
        : finalCredits === INITIAL - 1 + AMOUNT - 1
          ? 'the refill added the amount instead of replacing the balance'
          : 'a balance no refill explains';
    problems.push(`after midnight${f.toleranceMs > 0 ? ` + ${f.toleranceText}` : ''} it read ${String(finalCredits)} credits, expected ${expected}: ${why}`);
  }
  return {
    passed: problems.length === 0,
    detail: `${k.keyId} (${what}, created ${k.createdAtMs === undefined ? 'at an unknown time' : iso(k.createdAtMs)}): ${problems.length > 0 ? problems.join('; ') : `${beforeUnknown ? 'an unknown outcome' : String(before)} before midnight, ${String(finalCredits)} after (${k.seen.length} cost-0 readings in between)`}`,
  };
}

export default defineScenario<MidnightFixtures>({
  name: 'refill-midnight',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['refill.daily-utc-midnight', 'refill.monthly-refill-day', 'refill.sets-balance', 'refill.next-boundary'],
  description: "Live-safe: daily and monthly refills across the target's next real UTC midnight (waits for it, bounded; a tolerance for batch refills)",
  defaults: { rate: 10, durationMs: 4_000, warmupMs: 0 },
  setup,
  mix: [watchEntry],
  phases(ctx, f): ReadonlyArray<PhaseSpec<MidnightFixtures>> {
    const endServiceMs = f.midnightMs + f.toleranceMs + SETTLE_MS;
    if (f.manualClock)
      return [
        { name: 'across midnight (simulated time)', durationMs: ctx.settings.durationMs, serviceClock: { fromMs: f.serviceAfterSetupMs, toMs: endServiceMs } },
      ];
    return [{ name: 'across midnight', durationMs: Math.max(1_000, Math.round(wallOf(f, endServiceMs) - Date.now())) }];
  },
  async finish(ctx, f) {
    if (!f.manualClock) {
      const settleWall = wallOf(f, f.midnightMs + f.toleranceMs) + f.time.uncertaintyMs + SETTLE_MS;
      if (settleWall > Date.now()) await sleep(settleWall - Date.now());
    }
    const finals = new Map<string, FinalReading>();
    for (const k of f.keys) finals.set(k.keyId, await finalReading(ctx, k));
    const names: Record<Kind, string> = {
      daily: 'daily refill at the UTC midnight',
      'monthly-due': 'monthly refill on refillDay at the UTC midnight',
      'monthly-other': 'a monthly key due another day is not refilled',
    };
    return f.keys.map((k) => {
      const v = judge(f, k, finals.get(k.keyId) ?? { credits: undefined, unknown: 0, lost: 'not read' });
      return checkResult(names[k.kind], v.passed, v.detail);
    });
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
