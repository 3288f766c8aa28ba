/**
 * The target's own time, for scenarios that must meet a real instant of the service clock (a UTC
 * midnight) without controlling it. The simulator tells it on its admin surface; a live
 * deployment only in its `Date` header, to the second. Several samples narrow it down: each
 * answer stamped with second S, sent at local a and received at local b, says that
 * offset = service − local lies in [S − b, S + 999 − a]; the intersection of the samples is what
 * is known. Local time is keysim's wall clock (Date.now()).
 */
import { request } from 'undici';
import type { ScenarioContext } from '../../src/load/scenario.js';
import { parseDurationMs } from '../../src/load/plan.js';
import { sleep } from '../../src/load/scenario-fixtures.js';
import { isServiceBody } from '../../src/load/scenario-checks.js';

export interface TargetTime {
  /** service time ≈ Date.now() + offsetMs */
  offsetMs: number;
  /** |true offset − offsetMs| ≤ uncertaintyMs */
  uncertaintyMs: number;
  source: 'admin' | 'date-header';
}

const SAMPLES = 12;
/** Samples whose answer never came that are replaced before giving up. */
const MAX_LOST = 6;

/** The Date header of the service's own answer, or undefined when none came (a transport error, a gateway's answer). */
async function dateSample(url: string, body: string): Promise<string | string[] | undefined> {
  try {
    const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    return isServiceBody(parsed) ? (res.headers.date ?? '') : undefined;
  } catch {
    return undefined;
  }
}

export async function targetTime(ctx: ScenarioContext): Promise<TargetTime> {
  if (ctx.admin !== undefined) {
    const a = Date.now();
    const service = await ctx.admin.clockNow();
    const b = Date.now();
    return { offsetMs: service - (a + b) / 2, uncertaintyMs: (b - a) / 2 + 1, source: 'admin' };
  }
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  let lost = 0;
  for (let i = 0; i < SAMPLES + lost && hi - lo > 60; i++) {
    const a = Date.now();
    // An unauthenticated verification of a key that does not exist: harmless, and every answer has a Date.
    const sample = await dateSample(`${ctx.target.url}/v2/keys.verifyKey`, JSON.stringify({ key: `${ctx.tag}-clock-probe` }));
    const b = Date.now();
    // An answer that never came, or a gateway's own (its Date is the gateway's clock): asked again, a few times at most.
    if (sample === undefined) {
      if (++lost > MAX_LOST) throw new Error(`the target's clock cannot be read: ${lost} of its answers never came (dropped, or not the service's JSON)`);
      continue;
    }
    const header = sample;
    const stamp = typeof header === 'string' ? Date.parse(header) : Number.NaN;
    if (!Number.isFinite(stamp)) throw new Error(`the target sent no usable Date header (${String(header)}), so its clock cannot be read`);
    lo = Math.max(lo, stamp - b);
    hi = Math.min(hi, stamp + 999 - a);
    // Spread the samples over a second so that one of them lands just after the header's second changes.
    await sleep(83);
  }
  if (lo > hi) throw new Error('the target\'s Date headers contradict each other (its clock jumped while it was read)');
  return { offsetMs: (lo + hi) / 2, uncertaintyMs: (hi - lo) / 2 + 1, source: 'date-header' };
}

/** A duration option read from the environment, e.g. KEYSIM_MIDNIGHT_LEAD=10s. */
export function durationEnv(name: string, fallback: string): number {
  const text = process.env[name];
  const value = parseDurationMs(text === undefined || text === '' ? fallback : text);
  if (value === undefined) throw new Error(`${name}="${text ?? ''}" is not a duration: write e.g. 30s, 500ms, 10m, 2h`);
  return value;
}
