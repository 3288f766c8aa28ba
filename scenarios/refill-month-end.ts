/**
 * refill-month-end: monthly refills on refillDay 29, 30 and 31 (and 1, as a control) crossed
 * under load, across January–March of a common year and of the leap year after it. Each phase
 * is a sweep of the service clock (PhaseSpec.serviceClock): two hours of service time around one
 * midnight of interest — 29/30/31 January, 1 February, 28 February, (29 February), 1 March,
 * 29/30/31 March — compressed into about half a second of load.
 *
 * How a refill is seen: before each sweep, `before` moves the clock to the sweep's start, reads
 * every key (getKey) and records the balance, then sets it to a marker unique to that observation
 * (updateCredits set, which keeps the refill). At the end of the sweep (in the next phase's
 * `before`, or in `finish`) the keys are read again: each balance is either its marker (no refill
 * in between) or the key's refill amount (a refill happened), and is marked afresh. The load
 * verifies at cost 0 and reads keys, so it consumes nothing, and every answer is one of the
 * balances possible at that point: the marker, or — for a key whose boundary the sweep crosses —
 * the refill amount once the clock has passed it. Keys are asked in turn, so each crossing key is
 * asked on both sides of its boundary.
 *
 * The end-of-run checks compare the observations with (1) an independent month-length calculation
 * and (2) a hand-written calendar of the expected refill dates, e.g. refillDay 31 refills on
 * 28 February in the common year and on 29 February in the leap year, and never on 1 March; and
 * (3) that every crossing key answered its marker and then its refill amount under load.
 * Without a runner that moves the clock during the load (a frozen stand-in), each sweep's load runs
 * at its start and `before` moves the clock across it afterwards: (1) and (2) still hold.
 */
import {
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  checkResult,
  createKey,
  createTaggedApi,
  defineScenario,
  isRecord,
  iso,
  moveClockTo,
  okData,
  requireAdmin,
  shown,
} from '../src/index.js';
import { DAYS, type Day, EXPECTED_REFILLS, type YearKind, amountOf, chooseYears, midnightsOf, refillBetween } from './support/refill-calendar.js';

const INITIAL_BALANCE = 5;
/** A marker is never a refill amount (1001..1031), so the two cannot be confused (at most 2 per sweep). */
const markerOf = (observation: number): number => 100 + observation;
/** Service time each sweep covers on either side of its midnight. */
const HALF_SWEEP_MS = 3_600_000;
/** A crossing key is judged on "both balances seen under load" only with at least this many answers in its sweep. */
const MIN_ANSWERS_TO_JUDGE = 8;

interface ProbeKey {
  day: Day;
  keyId: string;
  key: string;
  amount: number;
}

interface Observation {
  phase: string;
  kind: YearKind;
  label: string;
  atMs: number;
  keyId: string;
  day: Day;
  observed: number | null;
  expected: number;
}

/** One sweep while (and after) it runs: what its load answered per key. */
interface SweepTally {
  name: string;
  kind: YearKind;
  label: string;
  fromMs: number;
  toMs: number;
  marker: number;
  /** Keys whose refill boundary lies inside the sweep. */
  crossing: ReadonlySet<string>;
  /** Answers per key showing the marker and showing the refill amount. */
  seen: Map<string, { marker: number; amount: number }>;
  /**
   * Whether the service clock was moved across the sweep while its load ran: true under the
   * runner (its clock driver sweeps fromMs → toMs during the phase), false under a harness that
   * leaves the clock where `before` put it. Read once the load is over (the clock at toMs or not);
   * undefined until then.
   */
  movedUnderLoad: boolean | undefined;
}

interface RefillFixtures {
  keys: ProbeKey[];
  mode: 'manual' | 'system';
  years: Record<YearKind, number>;
  /** Balances each key may answer during the running phase. */
  allowed: Map<string, readonly number[]>;
  /** Balance each key holds, as calculated from the observations (the start of the next one). */
  balance: Map<string, number>;
  /** Service time of the last observation, for the calendar calculation. */
  lastMs: number;
  observations: Observation[];
  /** Observations made so far (each has its own marker). */
  marks: number;
  /** Round-robin position of the load over the keys. */
  cursor: number;
  sweeps: SweepTally[];
  current: SweepTally | undefined;
}

/** The keys in turn: each one is asked evenly through a sweep, so on both sides of its boundary. */
function nextKey(f: RefillFixtures): ProbeKey {
  return f.keys[f.cursor++ % f.keys.length] as ProbeKey;
}

/** Undefined when `balance` is one of the key's possible balances now (and tallies it), else a message. */
function judge(f: RefillFixtures, key: ProbeKey, balance: unknown): string | undefined {
  const allowed = f.allowed.get(key.keyId) ?? [];
  if (typeof balance !== 'number' || !allowed.includes(balance)) return `refillDay ${key.day}: balance ${String(balance)}, expected ${allowed.join(' or ')}`;
  const seen = f.current?.seen.get(key.keyId);
  if (seen !== undefined) seen[balance === key.amount ? 'amount' : 'marker']++;
  return undefined;
}

const mix: ReadonlyArray<MixEntry<RefillFixtures>> = [
  {
    name: 'verifyKey cost 0',
    weight: 3,
    build: (f) => ({ op: 'keys.verifyKey', body: { key: nextKey(f).key, credits: { cost: 0 } } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const key = f.keys.find((k) => k.keyId === d.keyId);
      if (key === undefined) return `keyId ${String(d.keyId)} is not a probe key`;
      if (d.valid !== true || d.code !== 'VALID') return `expected VALID, got ${shown(r)}`;
      return judge(f, key, d.credits);
    },
  },
  {
    name: 'getKey',
    weight: 1,
    build: (f) => ({ op: 'keys.getKey', body: { keyId: nextKey(f).keyId } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const key = f.keys.find((k) => k.keyId === d.keyId);
      if (key === undefined) return `keyId ${String(d.keyId)} is not a probe key`;
      const credits = isRecord(d.credits) ? d.credits : {};
      const refill = isRecord(credits.refill) ? credits.refill : {};
      if (refill.interval !== 'monthly' || refill.amount !== key.amount || refill.refillDay !== key.day)
        return `refill ${JSON.stringify(credits.refill)}, expected monthly ${key.amount} on day ${key.day}`;
      return judge(f, key, credits.remaining);
    },
  },
];

async function setup(ctx: ScenarioContext): Promise<RefillFixtures> {
  const admin = requireAdmin(ctx, 'refill-month-end');
  const mode = await admin.clockMode();
  const years = chooseYears(await admin.clockNow());
  // Keys are made mid-January of the common year: their first refill is at the next boundary.
  const createdAt = await moveClockTo(admin, Date.UTC(years.common, 0, 15, 12));
  const apiId = await createTaggedApi(ctx, 'refill-month-end');
  const keys: ProbeKey[] = [];
  for (const day of DAYS) {
    const amount = amountOf(day);
    const created = await createKey(ctx, {
      apiId,
      name: `${ctx.tag}-refill-day-${day}`,
      credits: { remaining: INITIAL_BALANCE, refill: { interval: 'monthly', amount, refillDay: day } },
    });
    keys.push({ day, amount, ...created });
  }
  ctx.log(`refill-month-end: ${years.common} (common) and ${years.leap} (leap) on a ${mode} clock`);
  return {
    keys,
    mode,
    years,
    allowed: new Map(keys.map((k) => [k.keyId, [INITIAL_BALANCE]])),
    balance: new Map(keys.map((k) => [k.keyId, INITIAL_BALANCE])),
    lastMs: createdAt,
    observations: [],
    marks: 0,
    cursor: 0,
    sweeps: [],
    current: undefined,
  };
}

/** Reads every key at the current service time, records what it shows, then marks the balances. Returns the marker. */
async function observeAndMark(ctx: ScenarioContext, f: RefillFixtures, phase: string, kind: YearKind, label: string): Promise<number> {
  const admin = requireAdmin(ctx, 'refill-month-end');
  const marker = markerOf(f.marks++);
  const atMs = await admin.clockNow();
  for (const key of f.keys) {
    const d = await ctx.api.data<{ credits?: { remaining: number | null } }>('keys.getKey', { keyId: key.keyId });
    const previous = f.balance.get(key.keyId) ?? INITIAL_BALANCE;
    f.observations.push({
      phase,
      kind,
      label,
      atMs,
      keyId: key.keyId,
      day: key.day,
      observed: d.credits?.remaining ?? null,
      expected: refillBetween(key.day, f.lastMs, atMs) ? key.amount : previous,
    });
    await ctx.api.data('keys.updateCredits', { keyId: key.keyId, operation: 'set', value: marker });
    f.balance.set(key.keyId, marker);
    f.allowed.set(key.keyId, [marker]);
  }
  f.lastMs = atMs;
  return marker;
}

/**
 * Ends the running sweep: notes whether the clock was moved across it during the load, moves it
 * to the sweep's end if not, and observes the keys there.
 */
async function endSweep(ctx: ScenarioContext, f: RefillFixtures): Promise<void> {
  const sweep = f.current;
  if (sweep === undefined) return;
  f.current = undefined;
  const admin = requireAdmin(ctx, 'refill-month-end');
  sweep.movedUnderLoad = (await admin.clockNow()) >= sweep.toMs;
  await moveClockTo(admin, sweep.toMs);
  await observeAndMark(ctx, f, sweep.name, sweep.kind, sweep.label);
}

function phases(ctx: ScenarioContext, f: RefillFixtures): ReadonlyArray<PhaseSpec<RefillFixtures>> {
  const midnights = (['common', 'leap'] as const).flatMap((kind) => midnightsOf(kind).map((m) => ({ kind, m })));
  const phaseMs = Math.max(200, Math.floor(ctx.settings.durationMs / midnights.length));
  const list: PhaseSpec<RefillFixtures>[] = [];
  if (ctx.settings.warmupMs > 0) list.push({ name: 'warm-up (keys just made)', durationMs: ctx.settings.warmupMs, warmup: true });
  for (const { kind, m } of midnights) {
    const year = f.years[kind];
    const midnight = Date.UTC(year, m.month - 1, m.day);
    const fromMs = midnight - HALF_SWEEP_MS;
    const toMs = midnight + HALF_SWEEP_MS;
    const name = `${year}-${m.label}`;
    list.push({
      name,
      durationMs: phaseMs,
      serviceClock: { fromMs, toMs },
      async before(c, fx) {
        await endSweep(c, fx);
        await moveClockTo(requireAdmin(c, 'refill-month-end'), fromMs);
        const marker = await observeAndMark(c, fx, name, kind, `${m.label}-start`);
        const crossing = new Set(fx.keys.filter((k) => refillBetween(k.day, fromMs, toMs)).map((k) => k.keyId));
        for (const key of fx.keys) if (crossing.has(key.keyId)) fx.allowed.set(key.keyId, [marker, key.amount]);
        const sweep: SweepTally = {
          name,
          kind,
          label: m.label,
          fromMs,
          toMs,
          marker,
          crossing,
          seen: new Map(fx.keys.map((k) => [k.keyId, { marker: 0, amount: 0 }])),
          movedUnderLoad: undefined,
        };
        fx.sweeps.push(sweep);
        fx.current = sweep;
      },
    });
  }
  return list;
}

/**
 * For sweeps the clock was moved across under load: the crossing keys that answered both balances.
 * A key whose answers all show one balance is not a failure: the scenario cannot see when each
 * answer executed on the service clock, and on a busy machine (slow answers, a late generator, a
 * closed model's connections still opening) its load may all land on one side of the boundary.
 * Whether each answer is right for the moment it executed is judged per answer (`judge`) and by
 * the history's invariants, which bracket every request on the service clock.
 */
function underLoad(f: RefillFixtures): { passed: boolean; detail: string } {
  const moved = f.sweeps.filter((s) => s.movedUnderLoad === true);
  if (moved.length === 0)
    return { passed: true, detail: 'the clock did not move during the load (a frozen stand-in for the runner): each sweep was observed at its ends only' };
  let judged = 0;
  let oneSided = 0;
  let unjudged = 0;
  for (const sweep of moved) {
    for (const key of f.keys) {
      if (!sweep.crossing.has(key.keyId)) continue;
      const seen = sweep.seen.get(key.keyId) ?? { marker: 0, amount: 0 };
      if (seen.marker + seen.amount < MIN_ANSWERS_TO_JUDGE) unjudged++;
      else if (seen.marker === 0 || seen.amount === 0) oneSided++;
      else judged++;
    }
  }
  const notMoved = f.sweeps.length - moved.length;
  const detail =
    `${judged} refills crossed under load: each key answered its marker before its boundary and its refill amount after it` +
    (oneSided > 0 ? `; ${oneSided} answered on one side of their boundary only (the load's pace did not reach both)` : '') +
    (unjudged > 0 ? `; ${unjudged} not judged (fewer than ${MIN_ANSWERS_TO_JUDGE} answers)` : '') +
    (notMoved > 0 ? `; on ${notMoved} sweeps the clock did not move under load` : '');
  return { passed: notMoved === 0, detail };
}

export default defineScenario<RefillFixtures>({
  name: 'refill-month-end',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['refill.monthly-refill-day', 'refill.month-end', 'refill.sets-balance', 'credits.cost-zero'],
  description: 'Monthly refills on days 29/30/31 crossed under load: 2 h clock sweeps over the month ends of a common and a leap year',
  requires: ['clock'],
  defaults: { rate: 100, durationMs: 9_500, warmupMs: 500 },
  setup,
  mix,
  phases,
  async finish(ctx, f) {
    await endSweep(ctx, f);
    const wrong = f.observations.filter((o) => o.observed !== o.expected);
    const seen = (kind: YearKind, day: Day) =>
      f.observations.filter((o) => o.kind === kind && o.day === day && o.observed === amountOf(day)).map((o) => o.label);
    const calendarProblems: string[] = [];
    for (const kind of ['common', 'leap'] as const) {
      for (const day of DAYS) {
        const got = seen(kind, day);
        const want = EXPECTED_REFILLS[kind][day];
        if (got.join(',') !== want.join(','))
          calendarProblems.push(`${f.years[kind]} refillDay ${day}: refills seen at ${got.join(', ') || 'none'}, expected ${want.join(', ')}`);
      }
    }
    // Two observations per sweep (its start and its end), each of every key.
    const expectedCount = 2 * f.keys.length * (midnightsOf('common').length + midnightsOf('leap').length);
    const loaded = underLoad(f);
    return [
      checkResult(
        'balances follow the month lengths',
        wrong.length === 0 && f.observations.length === expectedCount,
        wrong.length === 0
          ? `${f.observations.length} of ${expectedCount} observations as calculated`
          : wrong
              .slice(0, 8)
              .map((o) => `${o.phase} ${o.label} (${iso(o.atMs)}) refillDay ${o.day}: ${String(o.observed)}, expected ${o.expected}`)
              .join('; '),
      ),
      checkResult(
        'refill dates match the calendar',
        calendarProblems.length === 0,
        calendarProblems.length === 0
          ? `refillDay 29/30/31 refilled on 28 Feb ${f.years.common} and 29 Feb ${f.years.leap}, on their own day in January and March, never on 1 March`
          : calendarProblems.join('; '),
      ),
      checkResult('refills crossed under load', loaded.passed, loaded.detail),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
