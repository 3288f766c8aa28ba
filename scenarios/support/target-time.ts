/**
 * The target's own time, for scenarios that must meet a real instant of the service clock (a UTC
 * midnight) without controlling it. The simulator tells it on its admin surface; a live
 * deployment only in its `Date` header, to the second. Several samples narrow it down: each
 * answer stamped with second S, sent at local a and received at local b, says that
 * offset = service − local lies in [S − b, S + 999 − a]; the intersection of the samples is what
 * is known. Local time is keysim's wall clock (Date.now()).
 */
import { Http1Client, type ScenarioContext, decodeBody, isLostAnswerError, isServiceBody, parseDurationMs, serviceJsonOf, sleep } from '../../src/index.js';

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

/** A sample's Date: Unix ms; null when the service's answer had no Date header that parses; undefined when no answer of the service came. */
type DateSample = number | null | undefined;

/**
 * The Date header of the service's own answer, or undefined when none came (a transport error, a
 * gateway's answer). Over keysim's own client: the run's --ca trusted, `Accept-Encoding: identity`
 * asked for, a body a proxy compressed anyway decoded. Any other error (a bug) is thrown.
 */
async function dateSample(client: Http1Client, body: string): Promise<DateSample> {
  try {
    const res = await client.request({ method: 'POST', path: '/v2/keys.verifyKey', body });
    const plain = res.contentEncoding === undefined ? res.body : decodeBody(res.status, res.contentType, res.contentEncoding, res.body);
    const parsed = serviceJsonOf(res.status, res.contentType, plain);
    return isServiceBody(parsed) ? (res.dateMs ?? null) : undefined;
  } catch (error) {
    if (isLostAnswerError(error)) return undefined;
    throw error;
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
  const timeoutMs = Number.isFinite(ctx.settings.timeoutMs) && ctx.settings.timeoutMs > 0 ? ctx.settings.timeoutMs : 30_000;
  const client = new Http1Client(ctx.target.url, { timeoutMs, connections: 1, ca: ctx.target.ca, dates: true });
  try {
    for (let i = 0; i < SAMPLES + lost && hi - lo > 60; i++) {
      const a = Date.now();
      // An unauthenticated verification of a key that does not exist: harmless, and every answer has a Date.
      const sample = await dateSample(client, JSON.stringify({ key: `${ctx.tag}-clock-probe` }));
      const b = Date.now();
      // An answer that never came, or a gateway's own (its Date is the gateway's clock): asked again, a few times at most.
      if (sample === undefined) {
        if (++lost > MAX_LOST) throw new Error(`the target's clock cannot be read: ${lost} of its answers never came (dropped, or not the service's JSON)`);
        continue;
      }
      if (sample === null) throw new Error('the target sent no usable Date header, so its clock cannot be read');
      lo = Math.max(lo, sample - b);
      hi = Math.min(hi, sample + 999 - a);
      // Spread the samples over a second so that one of them lands just after the header's second changes.
      await sleep(83);
    }
  } finally {
    await client.close();
  }
  if (lo > hi) throw new Error("the target's Date headers contradict each other (its clock jumped while it was read)");
  return { offsetMs: (lo + hi) / 2, uncertaintyMs: (hi - lo) / 2 + 1, source: 'date-header' };
}

/** A duration option read from the environment, e.g. KEYSIM_MIDNIGHT_LEAD=10s. */
export function durationEnv(name: string, fallback: string): number {
  const text = process.env[name];
  const value = parseDurationMs(text === undefined || text === '' ? fallback : text);
  if (value === undefined) throw new Error(`${name}="${text ?? ''}" is not a duration: write e.g. 30s, 500ms, 10m, 2h`);
  return value;
}
