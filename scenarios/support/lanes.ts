/**
 * What the consistency scenarios (stale-credit-replay, visibility, convergence) share: the
 * target's "lanes" — the ways of reaching different copies of its state — and a clock to measure
 * and wait on.
 *
 * A simulator running the production profile says how many regions it has (`GET /_sim/health`
 * answers `regions`): each lane is then one region, named on every call with `X-Keysim-Region`.
 * Any other target (the exact simulator, a live deployment) gets LIVE_LANES lanes that are
 * connections: a lane's calls of one round are sent at once, so the client spreads them over
 * several connections, which a regional load balancer may send to different regions.
 *
 * The clock: a simulator whose clock is manual is moved (nothing waits); a simulator on the system
 * clock is read but waited for; a live deployment is measured on this machine's clock (its `Date`
 * header only tells the second).
 */
import {
  type ApiResponse,
  type CallOutcome,
  Http1Client,
  type Operation,
  REGION_HEADER,
  type ScenarioContext,
  decodeBody,
  isLostAnswerError,
  isRecord,
  neverCameReason,
  sleep,
} from '../../src/index.js';

/** Lanes of a target that names no regions: calls sent at once, so over as many connections. */
export const LIVE_LANES = 4;

export interface Lanes {
  /** The production profile's regions; undefined when the target names none. */
  regions: number | undefined;
  /** How many lanes (the regions, or LIVE_LANES connections). */
  count: number;
  /** "region 2" or "connection 2". */
  label(lane: number): string;
}

/** The regions a simulator's `/_sim/health` names; undefined for any other target (or none named). */
async function regionsOf(ctx: ScenarioContext): Promise<number | undefined> {
  if (ctx.target.kind !== 'simulator') return undefined;
  const client = new Http1Client(ctx.target.url, { timeoutMs: 10_000, connections: 1, ca: ctx.target.ca });
  try {
    const res = await client.request({ method: 'GET', path: '/_sim/health', retry: true });
    if (res.status !== 200) return undefined;
    const body: unknown = JSON.parse(decodeBody(res.status, res.contentType, res.contentEncoding, res.body).toString('utf8'));
    const regions = isRecord(body) ? body.regions : undefined;
    return typeof regions === 'number' && Number.isInteger(regions) && regions >= 1 ? regions : undefined;
  } catch (error) {
    // No health answer: the target is treated as one that names no regions.
    if (isLostAnswerError(error) || error instanceof SyntaxError) return undefined;
    throw error;
  } finally {
    await client.close();
  }
}

export async function lanesOf(ctx: ScenarioContext): Promise<Lanes> {
  const regions = await regionsOf(ctx);
  const count = regions ?? LIVE_LANES;
  return { regions, count, label: (lane) => (regions === undefined ? `connection ${lane}` : `region ${lane}`) };
}

/**
 * One call in a lane (1-based): in its region when the target has regions, else on whatever
 * connection is free. Resolves with the answer or why none came, as callOutcome does.
 */
export async function laneCall(ctx: ScenarioContext, lanes: Lanes, lane: number, op: Operation, body: unknown): Promise<CallOutcome> {
  const options = lanes.regions === undefined ? undefined : { headers: { [REGION_HEADER]: String(((lane - 1) % lanes.regions) + 1) } };
  try {
    const response: ApiResponse = await ctx.api.call(op, body, options);
    const why = neverCameReason(response);
    return why === undefined ? { answered: true, response } : { answered: false, why };
  } catch (error) {
    if (!isLostAnswerError(error)) throw error;
    return { answered: false, why: error instanceof Error ? error.message : String(error) };
  }
}

/** The same call in every lane at once: one round of polling. */
export function everyLane(ctx: ScenarioContext, lanes: Lanes, op: Operation, body: unknown): Promise<CallOutcome[]> {
  return Promise.all(Array.from({ length: lanes.count }, (_, i) => laneCall(ctx, lanes, i + 1, op, body)));
}

export interface ScenarioTime {
  /** 'service clock' (the simulator's), or 'this machine's clock' (a live target). */
  source: string;
  /** Whether time passes by moving the simulator's clock (nothing is waited for). */
  moved: boolean;
  now(): Promise<number>;
  /** Lets `ms` pass: moves a manual clock, else waits. */
  pass(ms: number): Promise<void>;
}

export async function scenarioTime(ctx: ScenarioContext): Promise<ScenarioTime> {
  const admin = ctx.admin;
  if (admin === undefined) return { source: "this machine's clock", moved: false, now: () => Promise.resolve(Date.now()), pass: (ms) => sleep(ms) };
  const manual = (await admin.clockMode()) === 'manual';
  return {
    source: 'service clock',
    moved: manual,
    now: () => admin.clockNow(),
    pass: async (ms) => {
      if (manual) await admin.clockAdvance(ms);
      else await sleep(ms);
    },
  };
}

/** p50 / p95 / max of some durations in ms, as "p50 1.0 s, p95 11.0 s, max 11.0 s". */
export function lagSummary(lagsMs: readonly number[]): string {
  if (lagsMs.length === 0) return 'no lag measured';
  const sorted = [...lagsMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return `p50 ${s(at(0.5))}, p95 ${s(at(0.95))}, max ${s(sorted[sorted.length - 1] ?? 0)}`;
}
