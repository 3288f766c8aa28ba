/**
 * refill-month-end: monthly refills on refillDay 29, 30 and 31 (and 1, as a control) across
 * January–March of a common year and of the leap year after it, with the simulator's clock moved
 * before each phase to just before or exactly onto a refill boundary.
 *
 * How a refill is seen: after each clock move, `before` reads every key (getKey) and records the
 * balance, then sets it to a marker unique to the phase (updateCredits set, which keeps the
 * refill). At the next move the balance is either that marker (no refill in between) or the
 * key's refill amount (a refill happened). The load itself verifies at cost 0 and reads keys, so
 * it consumes nothing and every answer is exact: the marker of the running phase.
 *
 * The end-of-run checks compare the observations with (1) an independent month-length calculation
 * and (2) a hand-written calendar of the expected refill dates, e.g. refillDay 31 refills on
 * 28 February in the common year and on 29 February in the leap year, and never on 1 March.
 */
import { type MixEntry, type PhaseSpec, type ScenarioContext, defineScenario } from '../src/load/scenario.js';
import { checkResult, clockMode, createKey, createTaggedApi, iso, isRecord, moveClockTo, okData, requireAdmin, shown } from './support/common.js';

/** Refill days under test; 1 is the control (it refills on the 1st of every month). */
const DAYS = [29, 30, 31, 1] as const;
type Day = (typeof DAYS)[number];
const amountOf = (day: Day): number => 1000 + day;
const INITIAL_BALANCE = 5;
/** A marker is never a refill amount (1001..1031), so the two cannot be confused. */
const markerOf = (phaseIndex: number): number => 100 + phaseIndex;

type YearKind = 'common' | 'leap';

/** A probe instant: `MM-DD` at 00:00 UTC, or `MM-DD-end`, the last moment of that day. */
interface Probe {
  label: string;
  month: number;
  day: number;
  end: boolean;
}

const probe = (label: string): Probe => {
  const [mm, dd, end] = label.split('-');
  return { label, month: Number(mm), day: Number(dd), end: end === 'end' };
};

/** The probes of one year, in time order. */
function probesOf(kind: YearKind): Probe[] {
  return [
    '01-28-end',
    '01-29',
    '01-30',
    '01-31',
    '02-27-end',
    '02-28',
    ...(kind === 'leap' ? ['02-29'] : []),
    '03-01',
    '03-28-end',
    '03-29',
    '03-30',
    '03-31',
  ].map(probe);
}

/**
 * The calendar, written out by hand: the probes at which each key must show a fresh refill.
 * A probe shows a refill that happened since the previous probe (the first probe of the leap year
 * follows the last of the common year, so it shows December's refill).
 */
const EXPECTED_REFILLS: Record<YearKind, Record<Day, readonly string[]>> = {
  common: {
    29: ['01-29', '02-28', '03-29'],
    30: ['01-30', '02-28', '03-30'],
    31: ['01-31', '02-28', '03-31'],
    1: ['02-27-end', '03-01'],
  },
  leap: {
    29: ['01-28-end', '01-29', '02-29', '03-29'],
    30: ['01-28-end', '01-30', '02-29', '03-30'],
    31: ['01-28-end', '01-31', '02-29', '03-31'],
    1: ['01-28-end', '02-27-end', '03-01'],
  },
};

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/**
 * Whether a monthly refill on `day` falls in (fromMs, toMs]: the refill instant of a month is
 * 00:00 UTC on min(day, days in that month). Written from the interface document, not the engine.
 * Months are counted from the start's month; Date.UTC carries month 12 into the next year.
 */
function refillBetween(day: number, fromMs: number, toMs: number): boolean {
  const start = new Date(fromMs);
  const year = start.getUTCFullYear();
  for (let month = start.getUTCMonth(); Date.UTC(year, month, 1) <= toMs; month++) {
    const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
    const at = Date.UTC(year, month, Math.min(day, daysInMonth));
    if (at > fromMs && at <= toMs) return true;
  }
  return false;
}

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

interface RefillFixtures {
  keys: ProbeKey[];
  mode: 'manual' | 'system';
  years: Record<YearKind, number>;
  /** Balance each key holds during the running phase (what the load must see). */
  balance: Map<string, number>;
  /** Service time of the last observation, for the calendar calculation. */
  lastMs: number;
  observations: Observation[];
}

/** The first common year, after the clock's current year, that is followed by a leap year. */
function chooseYears(nowMs: number): Record<YearKind, number> {
  let year = new Date(nowMs).getUTCFullYear() + 1;
  while (isLeap(year) || !isLeap(year + 1)) year++;
  return { common: year, leap: year + 1 };
}

const mix: ReadonlyArray<MixEntry<RefillFixtures>> = [
  {
    name: 'verifyKey cost 0',
    weight: 3,
    build: (f, random) => ({ op: 'keys.verifyKey', body: { key: (f.keys[random.int(f.keys.length)] as ProbeKey).key, credits: { cost: 0 } } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const expected = typeof d.keyId === 'string' ? f.balance.get(d.keyId) : undefined;
      if (expected === undefined) return `keyId ${String(d.keyId)} is not a probe key`;
      return d.valid === true && d.code === 'VALID' && d.credits === expected ? undefined : `expected VALID with ${expected} credits, got ${shown(r)}`;
    },
  },
  {
    name: 'getKey',
    weight: 1,
    build: (f, random) => ({ op: 'keys.getKey', body: { keyId: (f.keys[random.int(f.keys.length)] as ProbeKey).keyId } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const key = f.keys.find((k) => k.keyId === d.keyId);
      if (key === undefined) return `keyId ${String(d.keyId)} is not a probe key`;
      const credits = isRecord(d.credits) ? d.credits : {};
      const refill = isRecord(credits.refill) ? credits.refill : {};
      if (credits.remaining !== f.balance.get(key.keyId)) return `remaining ${String(credits.remaining)}, expected ${String(f.balance.get(key.keyId))}`;
      if (refill.interval !== 'monthly' || refill.amount !== key.amount || refill.refillDay !== key.day) return `refill ${JSON.stringify(credits.refill)}, expected monthly ${key.amount} on day ${key.day}`;
      return undefined;
    },
  },
];

async function setup(ctx: ScenarioContext): Promise<RefillFixtures> {
  const admin = requireAdmin(ctx, 'refill-month-end');
  const mode = await clockMode(admin);
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
  return { keys, mode, years, balance: new Map(keys.map((k) => [k.keyId, INITIAL_BALANCE])), lastMs: createdAt, observations: [] };
}

/** Reads every key at the current service time, records what it shows, then marks the balances. */
async function observeAndMark(ctx: ScenarioContext, f: RefillFixtures, phase: string, kind: YearKind, label: string, marker: number): Promise<void> {
  const admin = requireAdmin(ctx, 'refill-month-end');
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
  }
  f.lastMs = atMs;
}

function phases(ctx: ScenarioContext, f: RefillFixtures): ReadonlyArray<PhaseSpec<RefillFixtures>> {
  const probes = (['common', 'leap'] as const).flatMap((kind) => probesOf(kind).map((p) => ({ kind, p })));
  const phaseMs = Math.max(200, Math.floor(ctx.settings.durationMs / probes.length));
  // "The last moment of a day": 1 ms before midnight on a frozen clock; on a running clock far
  // enough before it that the phase cannot reach midnight by itself.
  const beforeMs = f.mode === 'manual' ? 1 : phaseMs + 5_000;
  const list: PhaseSpec<RefillFixtures>[] = [];
  if (ctx.settings.warmupMs > 0) list.push({ name: 'warm-up (keys just made)', durationMs: ctx.settings.warmupMs, warmup: true });
  for (const [i, { kind, p }] of probes.entries()) {
    const year = f.years[kind];
    const midnight = Date.UTC(year, p.month - 1, p.day);
    const atMs = p.end ? midnight + 86_400_000 - beforeMs : midnight;
    const name = `${year}-${p.label}`;
    list.push({
      name,
      durationMs: phaseMs,
      async before(c, fx) {
        await moveClockTo(requireAdmin(c, 'refill-month-end'), atMs);
        await observeAndMark(c, fx, name, kind, p.label, markerOf(i));
      },
    });
  }
  return list;
}

export default defineScenario<RefillFixtures>({
  name: 'refill-month-end',
  description: 'Monthly refills on days 29/30/31 across Jan–Mar of a common and a leap year, clock moved between phases',
  requires: ['clock'],
  defaults: { rate: 100, durationMs: 12_000, warmupMs: 500 },
  setup,
  mix,
  phases,
  async finish(_ctx, f) {
    const wrong = f.observations.filter((o) => o.observed !== o.expected);
    const seen = (kind: YearKind, day: Day) =>
      f.observations.filter((o) => o.kind === kind && o.day === day && o.observed === amountOf(day)).map((o) => o.label);
    const calendarProblems: string[] = [];
    for (const kind of ['common', 'leap'] as const) {
      for (const day of DAYS) {
        const got = seen(kind, day);
        const want = EXPECTED_REFILLS[kind][day];
        if (got.join(',') !== want.join(',')) calendarProblems.push(`${f.years[kind]} refillDay ${day}: refills seen at ${got.join(', ') || 'none'}, expected ${want.join(', ')}`);
      }
    }
    const expectedCount = f.keys.length * (probesOf('common').length + probesOf('leap').length);
    return [
      checkResult(
        'balances follow the month lengths',
        wrong.length === 0 && f.observations.length === expectedCount,
        wrong.length === 0
          ? `${f.observations.length} of ${expectedCount} observations as calculated`
          : wrong
              .slice(0, 8)
              .map((o) => `${o.phase} (${iso(o.atMs)}) refillDay ${o.day}: ${String(o.observed)}, expected ${o.expected}`)
              .join('; '),
      ),
      checkResult(
        'refill dates match the calendar',
        calendarProblems.length === 0,
        calendarProblems.length === 0
          ? `refillDay 29/30/31 refilled on 28 Feb ${f.years.common} and 29 Feb ${f.years.leap}, on their own day in January and March, never on 1 March`
          : calendarProblems.join('; '),
      ),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
