/**
 * The window sweep of ratelimit-window-edge: a phase that sweeps the service clock across hundreds
 * of rate-limit windows under load (PhaseSpec.serviceClock), on identifiers of its own:
 *   sweep      no override, limit 2 per 1 s window     (hundreds of windows)
 *   vip-sweep  matched by the wildcard override         (its limit and its window)
 *   blocked    the limit-0 override                     always refused
 * Nobody knows the exact service time of each request there, but every answer's `reset` names
 * its window: the per-response check attributes each admission to its identifier and window and
 * refuses a window that admits more than its limit; at the end, the windows the load reached must
 * (nearly) all have admitted some — the windows keep rolling over under load. Under a promise set
 * whose regions count apart (`--consistency production`) a window may admit up to the band's upper
 * end for the regions the answers named (support/promised.ts); under `exact`, its limit.
 */
import {
  type CheckResult,
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  checkResult,
  isInt,
  iso,
  moveClockTo,
  okData,
  requireAdmin,
  shown,
} from '../../src/index.js';
import { plannedCount } from './common.js';
import { rateLimitBand, regionsCounted } from './promised.js';

const SCENARIO = 'ratelimit-window-edge';

export type SweepWho = 'sweep' | 'vip-sweep' | 'blocked';
const SWEEP_WHO: readonly SweepWho[] = ['sweep', 'vip-sweep', 'blocked'];
/** The sweep identifier's own limit and window (no override applies to it). */
const SWEEP_LIMIT = 2;
const SWEEP_WINDOW_MS = 1_000;
const SWEEP_WEIGHTS: Record<SweepWho, number> = { sweep: 6, 'vip-sweep': 2, blocked: 1 };
/** Share of the run's duration the sweep takes, and its rate as a multiple of the run's. */
export const SWEEP_SHARE = 0.4;
const SWEEP_RATE_FACTOR = 2;
/**
 * Windows swept: about three requests of the sweep identifier per window, and at least ~10 ms of
 * wall time per window (the clock moves in steps of 5–10 ms), within 50..1000.
 */
const sweepWindows = (plannedRequests: number, sweepMs: number): number =>
  Math.max(50, Math.min(1000, Math.floor((plannedRequests * SWEEP_WEIGHTS.sweep) / (9 * 3)), Math.floor(sweepMs / 10)));
/** Of the windows the load reached, at least this share must have admitted some. */
const MOST_WINDOWS = 0.9;
/**
 * With the clock moved under load, the load should reach at least this share of the swept windows.
 * Reported, not judged: how far the load spreads over the sweep depends on the machine's pace
 * (slow answers, a late generator), not on the service.
 */
const MIN_COVERAGE = 0.25;

/** The sweep phase: admissions per identifier and per window (named by the answers' `reset`). */
export interface SweepTally {
  fromMs: number;
  toMs: number;
  /** Windows of the sweep identifier in [fromMs, toMs). */
  windows: number;
  limits: Record<SweepWho, number>;
  durations: Record<SweepWho, number>;
  admitted: Record<SweepWho, number>;
  refused: Record<SweepWho, number>;
  /** `<who> <window index>` → [admitted, asked]. */
  perWindow: Map<string, [number, number]>;
  /**
   * Whether the service clock was moved across the sweep while its load ran: true under the
   * runner (its clock driver sweeps fromMs → toMs during the phase), false under a harness that
   * leaves the clock where `before` put it. Read once the load is over (the clock at toMs or not);
   * undefined until then.
   */
  movedUnderLoad: boolean | undefined;
  /**
   * The most a window of `limit` may admit: the limit under `exact`; under a drifting promise set
   * the band's upper end for the regions the answers named so far (support/promised.ts).
   */
  most: (limit: number) => number;
}

/** What the sweep needs of the scenario's fixtures (and keeps in them). */
export interface WindowSweepFixtures {
  namespace: string;
  sweepIdentifiers: Record<SweepWho, string>;
  /** The wildcard override that matches vip-sweep, and the limit-0 override of blocked. */
  overrideIds: { vip: string | undefined; blocked: string | undefined };
  /** Their limits when the sweep starts. */
  limits: { vip: number; blocked: number };
  /** The overrides' window, ms. */
  durationMs: number;
  /** Answers no identifier's limit explains. */
  unattributed: number;
  sweep: SweepTally | undefined;
  /** The regions that answered (x-keysim-region), for the promised band. */
  regions: Set<string>;
}

/** The sweep's share of the run, ms. */
export const sweepDurationMs = (ctx: ScenarioContext): number => Math.max(500, Math.floor(ctx.settings.durationMs * SWEEP_SHARE));

const sweepMix: ReadonlyArray<MixEntry<WindowSweepFixtures>> = SWEEP_WHO.map((who): MixEntry<WindowSweepFixtures> => ({
  name: `sweep ${who}`,
  weight: SWEEP_WEIGHTS[who],
  build: (f) => ({
    op: 'ratelimit.limit',
    body: { namespace: f.namespace, identifier: f.sweepIdentifiers[who], limit: SWEEP_LIMIT, duration: SWEEP_WINDOW_MS },
  }),
  check(r, f) {
    if (r.region !== undefined) f.regions.add(r.region);
    const d = okData(r);
    if (typeof d === 'string') return d;
    if (!isInt(d.limit) || !isInt(d.remaining) || !isInt(d.reset) || typeof d.success !== 'boolean') return `malformed answer ${shown(r)}`;
    const sweep = f.sweep;
    // Each sweep identifier has its own effective limit, so the answer's limit tells whose it is.
    const whose = sweep === undefined ? undefined : SWEEP_WHO.find((w) => sweep.limits[w] === d.limit);
    if (sweep === undefined || whose === undefined) {
      f.unattributed++;
      return `limit ${d.limit} belongs to no sweep identifier`;
    }
    const overrideId = whose === 'sweep' ? undefined : f.overrideIds[whose === 'vip-sweep' ? 'vip' : 'blocked'];
    if (d.overrideId !== overrideId) return `${whose}: overrideId ${String(d.overrideId)}, expected ${overrideId ?? 'none'}`;
    if (d.success ? d.remaining < 0 || d.remaining > d.limit - 1 : d.remaining !== 0)
      return `${whose}: remaining ${d.remaining} with success ${String(d.success)} and limit ${d.limit}`;
    if (whose === 'blocked' && d.success) return 'the blocked identifier (override limit 0) was admitted';
    const durationMs = sweep.durations[whose];
    const window = d.reset / durationMs - 1;
    if (!Number.isInteger(window)) return `${whose}: reset ${iso(d.reset)} is not the end of a ${durationMs} ms window`;
    if (window < Math.floor(sweep.fromMs / durationMs) || window > Math.floor(sweep.toMs / durationMs)) {
      return `${whose}: reset ${iso(d.reset)} names a window outside the sweep ${iso(sweep.fromMs)} … ${iso(sweep.toMs)}`;
    }
    (d.success ? sweep.admitted : sweep.refused)[whose]++;
    const key = `${whose} ${window}`;
    const tally = sweep.perWindow.get(key) ?? [0, 0];
    tally[1]++;
    if (d.success) tally[0]++;
    sweep.perWindow.set(key, tally);
    if (tally[0] > sweep.most(d.limit))
      return `${whose}: ${tally[0]} admitted in the window ${iso(window * durationMs)} … ${iso(d.reset)}, ${limitText(sweep, d.limit)}`;
    return undefined;
  },
}));

/**
 * The sweep phase: hundreds of the sweep identifier's windows from `fromMs` (a window boundary),
 * at twice the run's rate. `before` runs first in the phase's own `before` (to close the previous
 * phase while the clock is still where it left it).
 */
export function windowSweepPhase<F extends WindowSweepFixtures>(
  ctx: ScenarioContext,
  fromMs: number,
  before: (ctx: ScenarioContext, f: F) => Promise<void>,
): PhaseSpec<F> {
  const sweepMs = sweepDurationMs(ctx);
  const sweepRate = SWEEP_RATE_FACTOR * ctx.settings.rate;
  const windows = sweepWindows(plannedCount(sweepRate, sweepMs), sweepMs);
  const toMs = fromMs + windows * SWEEP_WINDOW_MS;
  return {
    name: `sweep across ${windows} windows`,
    durationMs: sweepMs,
    rate: sweepRate,
    mix: sweepMix,
    serviceClock: { fromMs, toMs },
    async before(c, fx) {
      await before(c, fx);
      await moveClockTo(requireAdmin(c, SCENARIO), fromMs);
      const limits: Record<SweepWho, number> = { sweep: SWEEP_LIMIT, 'vip-sweep': fx.limits.vip, blocked: fx.limits.blocked };
      fx.sweep = {
        fromMs,
        toMs,
        windows,
        limits,
        durations: { sweep: SWEEP_WINDOW_MS, 'vip-sweep': fx.durationMs, blocked: fx.durationMs },
        admitted: { sweep: 0, 'vip-sweep': 0, blocked: 0 },
        refused: { sweep: 0, 'vip-sweep': 0, blocked: 0 },
        perWindow: new Map(),
        movedUnderLoad: undefined,
        most: (limit) => Math.floor(rateLimitBand(limit, regionsCounted(fx.regions, c.promises), c.promises, 1).admitUpTo),
      };
    },
  };
}

/** `limit N`, and the band's upper end when a drifting promise set allows more. */
const limitText = (sweep: SweepTally, limit: number): string =>
  sweep.most(limit) === limit ? `limit ${limit}` : `limit ${limit}, at most ${sweep.most(limit)} within the promise set's band`;

/** Admissions the sweep's checks tallied, all identifiers together (0 before the sweep ran). */
export function sweepAdmissions(f: WindowSweepFixtures): number {
  return SWEEP_WHO.reduce((n, w) => n + (f.sweep?.admitted[w] ?? 0), 0);
}

/** The sweep's checks: within the limit in every window, and admissions in (nearly) every window the load reached. */
export async function sweepChecks(ctx: ScenarioContext, f: WindowSweepFixtures): Promise<CheckResult[]> {
  const sweep = f.sweep;
  if (sweep === undefined) return [checkResult('sweep: within the limit in every window', false, 'the sweep phase did not run')];
  sweep.movedUnderLoad = (await requireAdmin(ctx, SCENARIO).clockNow()) >= sweep.toMs;
  const over: string[] = [];
  const most = { windows: 0, admitting: 0 };
  const perWho = new Map<SweepWho, { windows: number; max: number }>();
  for (const [key, [admitted, asked]] of sweep.perWindow) {
    const [who, index] = key.split(' ') as [SweepWho, string];
    const stats = perWho.get(who) ?? { windows: 0, max: 0 };
    perWho.set(who, { windows: stats.windows + 1, max: Math.max(stats.max, admitted) });
    if (admitted > sweep.most(sweep.limits[who]))
      over.push(
        `${who}: ${admitted} of ${asked} admitted in the window ending ${iso((Number(index) + 1) * sweep.durations[who])}, ${limitText(sweep, sweep.limits[who])}`,
      );
    if (who === 'sweep' && asked > 0) {
      most.windows++;
      if (admitted > 0) most.admitting++;
    }
  }
  const summary = (who: SweepWho) => `${who} at most ${perWho.get(who)?.max ?? 0}/${sweep.limits[who]} in ${perWho.get(who)?.windows ?? 0} windows`;
  const share = most.windows === 0 ? 0 : most.admitting / most.windows;
  const coverage = most.windows / sweep.windows;
  // Under a harness that leaves the clock still, the load all falls in one window: coverage means nothing then.
  // Under the runner, coverage is the pace's, so it is reported but does not fail the check.
  const enough = share >= MOST_WINDOWS && most.windows > 0;
  return [
    checkResult(
      'sweep: within the limit in every window',
      over.length === 0 && sweep.admitted.blocked === 0,
      over.length === 0 ? SWEEP_WHO.map(summary).join('; ') : over.slice(0, 8).join('; '),
    ),
    checkResult(
      'sweep: admissions in most windows',
      enough,
      `${most.admitting} of the ${most.windows} windows the load reached admitted some (${Math.round(share * 100)} %, at least ${MOST_WINDOWS * 100} % expected); ` +
        (sweep.movedUnderLoad
          ? `the load reached ${most.windows} of the ${sweep.windows} swept windows` +
            (coverage >= MIN_COVERAGE
              ? ''
              : ` (under ${MIN_COVERAGE * 100} %: the load's pace did not spread it over the sweep, e.g. a busy machine; not a failure)`)
          : 'the clock did not move during the load (a frozen stand-in for the runner)'),
    ),
  ];
}
