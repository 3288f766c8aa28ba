/**
 * ratelimit-window-edge: bursts of ratelimit.limit placed just before and just after window
 * boundaries (the simulator's clock is moved before each phase), on four identifiers:
 *   std     no override                       limit 10
 *   vip     matched by the wildcard override  limit 25 (raised to 30 in the last phase)
 *   gold    exact override (beats the wildcard that also matches it)   limit 40
 *   blocked exact override with limit 0       always refused
 * The service's window is sliding (two epoch-aligned fixed windows, docs/service-model.md#the-sliding-window): a burst
 * that fills a window just before its end leaves no room just after it, where a fixed window would
 * admit a second full burst.
 *
 * Answers do not name their identifier, but each identifier has its own effective limit, so the
 * `limit` of an answer tells whose it is: the per-response check tallies admissions per phase and
 * identifier. Between phases, cost-0 probes (which consume nothing) read every window, and an
 * independent model of the documented algorithm predicts them from the tallies. On a frozen clock
 * everything is exact; on a running clock (system mode) the phases keep clear of boundaries and
 * the predictions become ranges between the clock readings around each probe.
 *
 * The last phase sweeps the service clock across hundreds of windows under load, on identifiers
 * of its own (support/window-sweep.ts).
 *
 * Under a promise set whose regions count apart (`--consistency production`) a window may admit up
 * to the band's upper end for the regions the answers named, may refuse once its lower end could be
 * used, and stays strict after a denial until the window ends (support/promised.ts); a probe's
 * remaining is its region's view, so only its limit is judged then. Under `exact` all is exact.
 */
import {
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  checkResult,
  defineScenario,
  deleteQuietly,
  ensureNamespace,
  isInt,
  iso,
  moveClockTo,
  okData,
  requireAdmin,
  shown,
} from '../src/index.js';
import { exactly, rateLimitBand, regionsCounted } from './support/promised.js';
import { SWEEP_SHARE, type SweepTally, type SweepWho, sweepAdmissions, sweepChecks, windowSweepPhase } from './support/window-sweep.js';

type Who = 'std' | 'vip' | 'gold' | 'blocked';
const WHO: readonly Who[] = ['std', 'vip', 'gold', 'blocked'];
/** What every request asks for; overrides replace it. */
const REQUEST_LIMIT = 10;
const LIMITS: Record<Who, number> = { std: REQUEST_LIMIT, vip: 25, gold: 40, blocked: 0 };
const RAISED_VIP_LIMIT = 30;

/** A window counter, as the documented algorithm keeps it. */
interface Counter {
  window: number;
  current: number;
  previous: number;
}

/** Weighted use of the sliding window at `nowMs` (docs/service-model.md#the-sliding-window), exactly in integers. */
function usedAt(c: Counter | undefined, nowMs: number, durationMs: number): number {
  const window = Math.floor(nowMs / durationMs);
  let current = 0;
  let previous = 0;
  if (c !== undefined && c.window === window) ({ current, previous } = c);
  else if (c !== undefined && c.window === window - 1) previous = c.current;
  const remainingMs = durationMs - (nowMs - window * durationMs);
  return current + Math.floor((previous * remainingMs) / durationMs);
}

function commit(c: Counter | undefined, window: number, admitted: number): Counter | undefined {
  if (admitted === 0) return c;
  if (c !== undefined && c.window === window) return { window, current: c.current + admitted, previous: c.previous };
  if (c !== undefined && c.window === window - 1) return { window, current: admitted, previous: c.current };
  return { window, current: admitted, previous: 0 };
}

interface PhaseTally {
  name: string;
  window: number;
  /** Service time when the phase's load began and (read after it) ended. */
  startMs: number;
  endMs: number | undefined;
  admitted: Record<Who, number>;
  refused: Record<Who, number>;
  limits: Record<Who, number>;
  /** Room (limit − used) at the start and the end of the phase, from the model. */
  roomStart: Record<Who, number>;
  roomEnd: Record<Who, number> | undefined;
  /** The model's used at the start and (as if the phase admitted nothing) at the end. */
  usedStart: Record<Who, number>;
  usedEnd: Record<Who, number> | undefined;
}

interface EdgeFixtures {
  namespace: string;
  identifiers: Record<Who, string>;
  sweepIdentifiers: Record<SweepWho, string>;
  overrideIds: Record<Who, string | undefined>;
  durationMs: number;
  mode: 'manual' | 'system';
  /** Start of the window the edge phases straddle (a multiple of durationMs). */
  boundaryMs: number;
  limits: Record<Who, number>;
  model: Record<Who, Counter | undefined>;
  phases: PhaseTally[];
  current: PhaseTally | undefined;
  probeProblems: string[];
  probes: number;
  unattributed: number;
  sweep: SweepTally | undefined;
  /** The regions that answered (x-keysim-region), for the promised band. */
  regions: Set<string>;
}

const zero = (): Record<Who, number> => ({ std: 0, vip: 0, gold: 0, blocked: 0 });

function whoByLimit(f: EdgeFixtures, limit: unknown): Who | undefined {
  return WHO.find((w) => f.limits[w] === limit);
}

const mix: ReadonlyArray<MixEntry<EdgeFixtures>> = WHO.map((who): MixEntry<EdgeFixtures> => ({
  name: `limit ${who}`,
  weight: { std: 2, vip: 3, gold: 4, blocked: 1 }[who],
  build: (f) => ({ op: 'ratelimit.limit', body: { namespace: f.namespace, identifier: f.identifiers[who], limit: REQUEST_LIMIT, duration: f.durationMs } }),
  check(r, f) {
    if (r.region !== undefined) f.regions.add(r.region);
    const d = okData(r);
    if (typeof d === 'string') return d;
    if (!isInt(d.limit) || !isInt(d.remaining) || !isInt(d.reset) || typeof d.success !== 'boolean') return `malformed answer ${shown(r)}`;
    const whose = whoByLimit(f, d.limit);
    const phase = f.current;
    if (whose === undefined || phase === undefined) {
      f.unattributed++;
      return `limit ${d.limit} belongs to no identifier (limits now ${JSON.stringify(f.limits)})`;
    }
    if (d.overrideId !== f.overrideIds[whose]) return `${whose}: overrideId ${String(d.overrideId)}, expected ${f.overrideIds[whose] ?? 'none'}`;
    if (d.success ? d.remaining < 0 || d.remaining > d.limit - 1 : d.remaining !== 0)
      return `${whose}: remaining ${d.remaining} with success ${String(d.success)} and limit ${d.limit}`;
    if (whose === 'blocked' && d.success) return 'the blocked identifier (override limit 0) was admitted';
    if (d.reset !== (phase.window + 1) * f.durationMs)
      return `${whose}: reset ${iso(d.reset)}, expected the end of window ${iso((phase.window + 1) * f.durationMs)}`;
    (d.success ? phase.admitted : phase.refused)[whose]++;
    return undefined;
  },
}));

async function setup(ctx: ScenarioContext): Promise<EdgeFixtures> {
  const admin = requireAdmin(ctx, 'ratelimit-window-edge');
  const mode = await admin.clockMode();
  const phaseMs = phaseDurationMs(ctx);
  // A window long enough that, on a running clock, each phase fits well inside one segment of it.
  const durationMs = Math.max(60_000, Math.ceil((4 * (phaseMs + 5_000)) / 1000) * 1000);
  const namespace = await ensureNamespace(ctx, 'edge');
  const identifiers: Record<Who, string> = {
    std: `${ctx.tag}-std`,
    vip: `${ctx.tag}-vip-1`,
    gold: `${ctx.tag}-vip-gold`,
    blocked: `${ctx.tag}-blocked`,
  };
  const set = async (identifier: string, limit: number) => {
    const { overrideId } = await ctx.api.data<{ overrideId: string }>('ratelimit.setOverride', { namespace, identifier, limit, duration: durationMs });
    ctx.onCleanup(() => deleteQuietly(ctx, 'ratelimit.deleteOverride', { namespace, identifier }));
    return overrideId;
  };
  const overrideIds: Record<Who, string | undefined> = {
    std: undefined,
    vip: await set(`${ctx.tag}-vip-*`, LIMITS.vip),
    gold: await set(identifiers.gold, LIMITS.gold),
    blocked: await set(identifiers.blocked, LIMITS.blocked),
  };
  // The first edge far enough ahead that "just before" it is still in the future when the first
  // phase starts (the phases' service times are planned from it, the sweep's included).
  const eps = mode === 'manual' ? 1 : phaseMs + 5_000;
  const boundaryMs = (Math.floor(((await admin.clockNow()) + eps + 1_000) / durationMs) + 1) * durationMs;
  return {
    namespace,
    identifiers,
    sweepIdentifiers: { sweep: `${ctx.tag}-sweep`, 'vip-sweep': `${ctx.tag}-vip-sweep`, blocked: identifiers.blocked },
    overrideIds,
    durationMs,
    mode,
    boundaryMs,
    limits: { ...LIMITS },
    model: { std: undefined, vip: undefined, gold: undefined, blocked: undefined },
    phases: [],
    current: undefined,
    probeProblems: [],
    probes: 0,
    unattributed: 0,
    sweep: undefined,
    regions: new Set(),
  };
}

/** The edge phases (the sweep comes after them). */
const PHASES = 6;
const phaseDurationMs = (ctx: ScenarioContext): number => Math.max(200, Math.floor((ctx.settings.durationMs * (1 - SWEEP_SHARE)) / PHASES));

/**
 * Probes every identifier with cost 0 (consumes nothing: remaining = max(0, limit − used)) and
 * compares with the model. The clock is read around the probe: used only falls as time passes,
 * so the answer must lie between the predictions for the two readings (equal on a frozen clock).
 */
async function probeAll(ctx: ScenarioContext, f: EdgeFixtures, when: string): Promise<void> {
  const admin = requireAdmin(ctx, 'ratelimit-window-edge');
  for (const who of WHO) {
    const beforeMs = await admin.clockNow();
    const d = await ctx.api.data<{ remaining: number; limit: number }>('ratelimit.limit', {
      namespace: f.namespace,
      identifier: f.identifiers[who],
      limit: REQUEST_LIMIT,
      duration: f.durationMs,
      cost: 0,
    });
    const afterMs = await admin.clockNow();
    const limit = f.limits[who];
    const low = Math.max(0, limit - usedAt(f.model[who], beforeMs, f.durationMs));
    const high = Math.max(0, limit - usedAt(f.model[who], afterMs, f.durationMs));
    f.probes++;
    // A drifting set's regional counter answers with its region's view of the window, which the
    // set promises nothing about: only the limit (the override that applies) is judged then.
    const remainingJudged = exactly(ctx);
    if (d.limit !== limit || (remainingJudged && (d.remaining < low || d.remaining > high))) {
      f.probeProblems.push(`${when}, ${who}: remaining ${d.remaining} of ${d.limit}, model says ${low === high ? low : `${low}..${high}`} of ${limit}`);
    }
  }
}

/** Folds the running phase's admissions into the model and probes the windows at its end. */
async function closePhase(ctx: ScenarioContext, f: EdgeFixtures): Promise<void> {
  const phase = f.current;
  if (phase === undefined) return;
  const endMs = await requireAdmin(ctx, 'ratelimit-window-edge').clockNow();
  phase.endMs = endMs;
  // Room at the end as if the phase had admitted nothing: the previous window only fades, so this
  // is the most the phase could have admitted (equal to the room at its start on a frozen clock).
  const roomEnd = zero();
  const usedEnd = zero();
  for (const who of WHO) {
    usedEnd[who] = usedAt(f.model[who], endMs, f.durationMs);
    roomEnd[who] = Math.max(0, phase.limits[who] - usedEnd[who]);
  }
  phase.roomEnd = roomEnd;
  phase.usedEnd = usedEnd;
  for (const who of WHO) f.model[who] = commit(f.model[who], phase.window, phase.admitted[who]);
  f.current = undefined;
  await probeAll(ctx, f, `end of ${phase.name}`);
}

function phases(ctx: ScenarioContext, f: EdgeFixtures): ReadonlyArray<PhaseSpec<EdgeFixtures>> {
  const phaseMs = phaseDurationMs(ctx);
  const D = f.durationMs;
  // Just before an edge: 1 ms on a frozen clock; on a running one, more than a phase lasts.
  const eps = f.mode === 'manual' ? 1 : phaseMs + 5_000;
  const plan: Array<{ name: string; at: (B: number) => number; raiseVip?: boolean }> = [
    { name: 'burst just before the edge', at: (B) => B - eps },
    { name: 'burst just after the edge', at: (B) => B },
    { name: 'half a window later', at: (B) => B + D / 2 },
    { name: 'end of the window', at: (B) => B + D - eps },
    { name: 'next edge', at: (B) => B + D },
    { name: 'fresh window, vip override raised', at: (B) => B + 2 * D + D / 4, raiseVip: true },
  ];
  const edges = plan.map((p): PhaseSpec<EdgeFixtures> => ({
    name: p.name,
    durationMs: phaseMs,
    async before(c, fx) {
      const admin = requireAdmin(c, 'ratelimit-window-edge');
      await closePhase(c, fx);
      const target = p.at(fx.boundaryMs);
      await moveClockTo(admin, target);
      if (p.raiseVip === true) {
        await c.api.data('ratelimit.setOverride', { namespace: fx.namespace, identifier: `${c.tag}-vip-*`, limit: RAISED_VIP_LIMIT, duration: D });
        fx.limits.vip = RAISED_VIP_LIMIT;
      }
      const startMs = await admin.clockNow();
      const roomStart = zero();
      const usedStart = zero();
      for (const who of WHO) {
        usedStart[who] = usedAt(fx.model[who], startMs, D);
        roomStart[who] = Math.max(0, fx.limits[who] - usedStart[who]);
      }
      await probeAll(c, fx, `start of ${p.name}`);
      const tally: PhaseTally = {
        name: p.name,
        window: Math.floor(startMs / D),
        startMs,
        endMs: undefined,
        admitted: zero(),
        refused: zero(),
        limits: { ...fx.limits },
        roomStart,
        roomEnd: undefined,
        usedStart,
        usedEnd: undefined,
      };
      fx.phases.push(tally);
      fx.current = tally;
    },
  }));
  // Then hundreds of the sweep identifier's windows under load, from a boundary after the last edge phase.
  const sweep = windowSweepPhase<EdgeFixtures>(ctx, f.boundaryMs + 3 * D, closePhase);
  return [...edges, sweep];
}

/** The most a window of `limit` may admit: the limit, or a drifting set's band for the regions that answered (cost 1). */
function mostAdmitted(ctx: ScenarioContext, f: EdgeFixtures, limit: number): number {
  return Math.floor(rateLimitBand(limit, regionsCounted(f.regions, ctx.promises), ctx.promises, 1).admitUpTo);
}

const bandText = (ctx: ScenarioContext, f: EdgeFixtures): string =>
  `${ctx.promises.name} promises' band for ${regionsCounted(f.regions, ctx.promises)} regions`;

/**
 * A phase's admissions per identifier: at least the room at its start unless fewer were asked, at
 * most the room at its end. Under a drifting set the room is the band's: up to its upper end, and
 * a denial may come once its lower end could be used — or at any time after a denial earlier in
 * the same window (a region stays strict until the window ends).
 */
function phaseProblems(ctx: ScenarioContext, f: EdgeFixtures, phase: PhaseTally, earlier: readonly PhaseTally[]): string[] {
  const regions = regionsCounted(f.regions, ctx.promises);
  return WHO.flatMap((who) => {
    const admitted = phase.admitted[who];
    const asked = admitted + phase.refused[who];
    let lowest = Math.min(asked, phase.roomStart[who]);
    let highest = Math.min(asked, phase.roomEnd?.[who] ?? phase.roomStart[who]);
    let why = `room ${phase.roomStart[who]}`;
    if (!exactly(ctx)) {
      const band = rateLimitBand(phase.limits[who], regions, ctx.promises, 1);
      const strict = earlier.some((p) => p.window === phase.window && p.refused[who] > 0);
      const usedEnd = phase.usedEnd?.[who] ?? phase.usedStart[who];
      lowest = strict ? 0 : Math.min(asked, Math.max(0, Math.floor(band.denyAbove) - phase.usedStart[who]));
      highest = Math.min(asked, Math.max(0, Math.floor(band.admitUpTo) - usedEnd));
      why = `${phase.usedStart[who]} used of ${phase.limits[who]}, ${bandText(ctx, f)}${strict ? ', strict after a denial earlier in the window' : ''}`;
    }
    if (admitted >= lowest && admitted <= highest) return [];
    return [`${phase.name}, ${who}: ${admitted} of ${asked} admitted, expected ${lowest === highest ? lowest : `${lowest}..${highest}`} (${why})`];
  });
}

export default defineScenario<EdgeFixtures>({
  name: 'ratelimit-window-edge',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['ratelimit.sliding-window', 'ratelimit.override-exact', 'ratelimit.override-wildcard', 'ratelimit.cost-zero'],
  description: 'Rate-limit bursts just before and after window edges (wildcard, exact, zero overrides), then a sweep across hundreds of windows',
  requires: ['clock'],
  defaults: { rate: 200, durationMs: 10_000, warmupMs: 0 },
  setup,
  mix,
  phases,
  async finish(ctx, f, results) {
    await closePhase(ctx, f);
    const sweep = await sweepChecks(ctx, f);
    // Long after the edge phases: every window of theirs has rolled over.
    if (f.sweep !== undefined) await probeAll(ctx, f, 'after the sweep');
    const problems = f.phases.flatMap((phase, i) => phaseProblems(ctx, f, phase, f.phases.slice(0, i)));
    const edge = f.phases.slice(0, 2);
    const edgeProblems = (['std', 'vip', 'gold'] as const).flatMap((who) => {
      const total = edge.reduce((n, p) => n + p.admitted[who], 0);
      // On a running clock the previous window fades a little during the second burst.
      const slack = f.mode === 'manual' ? 0 : Math.ceil((LIMITS[who] * ((edge[1]?.endMs ?? 0) - f.boundaryMs)) / f.durationMs) + 1;
      const most = mostAdmitted(ctx, f, LIMITS[who]);
      const limitText = most === LIMITS[who] ? `limit ${LIMITS[who]}` : `limit ${LIMITS[who]}, at most ${most} within the ${bandText(ctx, f)}`;
      return total > most + slack ? [`${who}: ${total} admitted across the edge, ${limitText}`] : [];
    });
    const limitStats = results.operation('ratelimit.limit');
    const tallied = f.phases.reduce((n, p) => n + WHO.reduce((m, w) => m + p.admitted[w], 0), 0) + sweepAdmissions(f);
    const blockedAdmitted = f.phases.reduce((n, p) => n + p.admitted.blocked, 0);
    return [
      checkResult(
        'windows match the sliding-window model',
        f.probeProblems.length === 0,
        f.probeProblems.length > 0
          ? f.probeProblems.slice(0, 8).join('; ')
          : exactly(ctx)
            ? `${f.probes} cost-0 probes as predicted`
            : `${f.probes} cost-0 probes named the limit predicted; their remaining not judged: a regional counter answers with its region's view, about which the ${ctx.promises.name} promises say nothing`,
      ),
      checkResult(
        'admissions per phase match the room left',
        problems.length === 0,
        problems.length === 0
          ? `${f.phases.length} phases × ${WHO.length} identifiers${exactly(ctx) ? '' : ` within the ${bandText(ctx, f)}`}`
          : problems.slice(0, 8).join('; '),
      ),
      checkResult(
        'no double burst across the window edge',
        edgeProblems.length === 0 && edge.length === 2,
        edgeProblems.length === 0
          ? `before + after the edge: ${(['std', 'vip', 'gold'] as const).map((w) => `${w} ${edge[0]?.admitted[w] ?? 0}+${edge[1]?.admitted[w] ?? 0}/${LIMITS[w]}`).join(', ')}`
          : edgeProblems.join('; '),
      ),
      checkResult('limit-0 override refuses everything', blockedAdmitted === 0, `${blockedAdmitted} admitted`),
      checkResult(
        'admissions seen by checks = admissions counted by the run',
        f.unattributed === 0 && (limitStats?.ratelimit.allowed ?? 0) === tallied,
        `${tallied} tallied by the checks, ${limitStats?.ratelimit.allowed ?? 0} counted by the run; ${f.unattributed} answers not attributable`,
      ),
      ...sweep,
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
